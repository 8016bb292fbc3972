// Package kubelines is the harness's one table of the Kubernetes release
// lines it supports (the minor versions still patched upstream): for each
// its newest served patch, its end of life, the oldest containerd it needs
// and whether its kubelet refuses a cgroup v1 host by default. The local
// cluster, the node image, the Windows join's skew checks and the ledger
// read them here. It imports nothing of the harness, so every layer can use
// it.
package kubelines

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Line is one supported Kubernetes release line, such as 1.37.
type Line struct {
	// Minor is the line's minor version: 37 for 1.37.
	Minor int
	// Version is the line's newest patch the Go module proxy serves as
	// k8s.io/kubernetes, such as v1.37.2: what the line builds by default.
	Version string
	// EndOfLife is the day upstream stops patching the line (YYYY-MM-DD),
	// from kubernetes.io/releases/1.MINOR/.
	EndOfLife string
	// MinContainerd is the oldest containerd containerd's own Kubernetes
	// support matrix recommends for the line (RELEASES.md, "Kubernetes
	// Support", in containerd v2.4.2): 1.7.28 for 1.35, the last line
	// that supports containerd 1.x; 2.x from 1.36.
	MinContainerd string
	// NeedsFailCgroupV1Off says the line's kubelet refuses to start on a
	// cgroup v1 host unless its configuration sets failCgroupV1: false
	// (KubeletConfiguration's FailCgroupV1 defaults to true from 1.35:
	// k8s.io/kubelet config/v1beta1 and pkg/kubelet/apis/config/v1beta1
	// defaults.go in k8s.io/kubernetes).
	NeedsFailCgroupV1Off bool
	// NeedsNodeLogQueryGate says the line's kubelet serves node log
	// queries (enableSystemLogQuery) only with its feature gate
	// NodeLogQuery turned on: beta and off by default before 1.36, GA and
	// locked on from 1.36 (pkg/features/kube_features.go in
	// k8s.io/kubernetes v1.37.2; the kubelet's validation refuses
	// enableSystemLogQuery without it).
	NeedsNodeLogQueryGate bool
}

// Name returns the line's name as its minor version: "1.37".
func (l Line) Name() string { return fmt.Sprintf("1.%d", l.Minor) }

// String returns the line with its default version: "1.37 (v1.37.2)".
func (l Line) String() string { return fmt.Sprintf("%s (%s)", l.Name(), l.Version) }

// lines are the supported lines, oldest first.
var lines = []Line{
	{Minor: 35, Version: "v1.35.4", EndOfLife: "2027-02-28", MinContainerd: "1.7.28", NeedsFailCgroupV1Off: true, NeedsNodeLogQueryGate: true},
	{Minor: 36, Version: "v1.36.3", EndOfLife: "2027-06-28", MinContainerd: "2.2.0", NeedsFailCgroupV1Off: true},
	{Minor: 37, Version: "v1.37.2", EndOfLife: "2027-10-28", MinContainerd: "2.3.0", NeedsFailCgroupV1Off: true},
}

// Lines returns the supported lines, oldest first.
func Lines() []Line { return append([]Line(nil), lines...) }

// Default returns the line the harness uses unless told otherwise: the
// newest.
func Default() Line { return lines[len(lines)-1] }

// Oldest returns the oldest supported line.
func Oldest() Line { return lines[0] }

// Supported describes the supported lines for messages:
// "1.35 (v1.35.4), 1.36 (v1.36.3) or 1.37 (v1.37.2)".
func Supported() string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = l.String()
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// versionPattern is a Kubernetes version as users write it: 1.MINOR or
// 1.MINOR.PATCH, with or without a leading v. Pre-releases and build
// metadata are no release a line serves.
var versionPattern = regexp.MustCompile(`^v?1\.(0|[1-9]\d{0,3})(?:\.(0|[1-9]\d{0,3}))?$`)

// parse returns the minor and the patch of version (patch -1 when version
// names only the line).
func parse(version string) (minor, patch int, err error) {
	m := versionPattern.FindStringSubmatch(version)
	if m == nil {
		return 0, 0, fmt.Errorf("%q is not a Kubernetes version: want v1.MINOR.PATCH or 1.MINOR, such as %s or %s", version, Default().Version, Default().Name())
	}
	minor, _ = strconv.Atoi(m[1]) // at most four digits
	patch = -1
	if m[2] != "" {
		patch, _ = strconv.Atoi(m[2])
	}
	return minor, patch, nil
}

// Find returns the line of version, written as "v1.36.3", "1.36.3",
// "v1.36" or "1.36". The error says why there is none: version is no
// Kubernetes version, or its line is not one the harness supports (too old:
// past its end of life; too new: newer than the harness knows), naming the
// supported lines.
func Find(version string) (Line, error) {
	l, _, err := Resolve(version)
	return l, err
}

// Resolve returns the line of version, as Find does, and the release to
// build: version itself (with a leading v) when it names a patch, else the
// line's default patch (Line.Version).
func Resolve(version string) (Line, string, error) {
	minor, patch, err := parse(version)
	if err != nil {
		return Line{}, "", err
	}
	for _, l := range lines {
		if l.Minor == minor {
			if patch < 0 {
				return l, l.Version, nil
			}
			return l, fmt.Sprintf("v1.%d.%d", minor, patch), nil
		}
	}
	why := "newer than any line the harness knows"
	if minor < Oldest().Minor {
		why = "older than the oldest line the harness supports (past its end of life)"
	}
	return Line{}, "", fmt.Errorf("%q is on Kubernetes 1.%d, %s: the supported lines are %s", version, minor, why, Supported())
}

// CheckPatch says whether version, of a supported line, names a release
// the harness knows: a patch no newer than the line's newest (Line.Version).
// A newer one is no release yet (a typo, such as v1.36.99): downloading it
// would fail on the machine, after the work had begun. A version that
// names only the line is its newest patch.
func CheckPatch(version string) error {
	l, release, err := Resolve(version)
	if err != nil {
		return err
	}
	_, patch, _ := parse(release)
	_, newest, _ := parse(l.Version)
	if patch > newest {
		return fmt.Errorf("%s is no %s release the harness knows (the newest is %s): check the version; a release newer than it goes into internal/kubelines/kubelines.go", release, l.Name(), l.Version)
	}
	return nil
}
