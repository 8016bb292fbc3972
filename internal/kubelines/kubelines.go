// Package kubelines is the harness's one table of the Kubernetes release
// lines it supports (the minor versions still patched upstream, and the
// next one while it is in pre-release): for each its newest served patch
// (or the pre-release it is pinned to), its end of life, the oldest
// containerd it needs and whether its kubelet refuses a cgroup v1 host by
// default. The local cluster, the node image, the Windows join's skew
// checks and the ledger read them here. It imports nothing of the harness,
// so every layer can use it.
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
	// A line not yet released is pinned to one pre-release the proxy
	// serves, such as v1.38.0-beta.0: the only version of the line the
	// harness accepts (PreRelease).
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
	// GoToolchain is the Go toolchain the line's Kubernetes is built with
	// where its go.mod needs a newer Go than the harness's own (GOTOOLCHAIN
	// for the go commands that build it; the go command fetches the
	// toolchain from the Go module proxy): go1.27.3 for 1.38, whose
	// k8s.io/kubernetes v1.38.0-beta.0 declares go 1.27.0. Empty: the Go
	// that builds the harness.
	GoToolchain string
	// CRITools is the cri-tools release whose crictl a Windows node of the
	// line gets, where it is not v1.MINOR.0 of the line: cri-tools releases
	// a minor with each Kubernetes minor, so a line in pre-release has none
	// yet and takes the newest there is (CrictlVersion).
	CRITools string
}

// PreRelease says whether the line is pinned to a pre-release (v1.38.0-
// beta.0): it is chosen only by asking for it, never the default, and a
// run on it is marked as a run on a pre-release.
func (l Line) PreRelease() bool { return strings.Contains(l.Version, "-") }

// CrictlVersion is the cri-tools release of the line's crictl: CRITools,
// else v1.MINOR.0.
func (l Line) CrictlVersion() string {
	if l.CRITools != "" {
		return l.CRITools
	}
	return fmt.Sprintf("v1.%d.0", l.Minor)
}

// Name returns the line's name as its minor version: "1.37".
func (l Line) Name() string { return fmt.Sprintf("1.%d", l.Minor) }

// String returns the line with its default version: "1.37 (v1.37.2)", or
// "1.38 (v1.38.0-beta.0, a pre-release)".
func (l Line) String() string {
	if l.PreRelease() {
		return fmt.Sprintf("%s (%s, a pre-release)", l.Name(), l.Version)
	}
	return fmt.Sprintf("%s (%s)", l.Name(), l.Version)
}

// lines are the supported lines, oldest first. A line in pre-release is
// the newest; on its release day its Version becomes the release and its
// GoToolchain and CRITools whatever the release needs (docs/cluster.md,
// "Release day"), and it becomes the default.
var lines = []Line{
	{Minor: 35, Version: "v1.35.4", EndOfLife: "2027-02-28", MinContainerd: "1.7.28", NeedsFailCgroupV1Off: true, NeedsNodeLogQueryGate: true},
	{Minor: 36, Version: "v1.36.3", EndOfLife: "2027-06-28", MinContainerd: "2.2.0", NeedsFailCgroupV1Off: true},
	{Minor: 37, Version: "v1.37.2", EndOfLife: "2027-10-28", MinContainerd: "2.3.0", NeedsFailCgroupV1Off: true},
	// 1.38 is due on 2026-12-16 (rc.0 on 2026-12-02, its release page in
	// kubernetes/sig-release); its end of life follows the usual fourteen
	// months, as 1.35's (released in December) does. cri-tools has no
	// v1.38 yet: the Go module proxy's newest sigs.k8s.io/cri-tools is
	// v1.37.0 (November 2026).
	{Minor: 38, Version: "v1.38.0-beta.0", EndOfLife: "2028-02-28", MinContainerd: "2.3.0", NeedsFailCgroupV1Off: true, GoToolchain: "go1.27.3", CRITools: "v1.37.0"},
}

// Lines returns the supported lines, oldest first.
func Lines() []Line { return append([]Line(nil), lines...) }

// Default returns the line the harness uses unless told otherwise: the
// newest line that is released (a line in pre-release is chosen only by
// asking for it).
func Default() Line {
	for i := len(lines) - 1; i > 0; i-- {
		if !lines[i].PreRelease() {
			return lines[i]
		}
	}
	return lines[0]
}

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
// 1.MINOR.PATCH, with or without a leading v, or a pre-release of a patch
// (1.MINOR.PATCH-alpha.N, -beta.N or -rc.N, the only forms upstream tags).
// Build metadata is no release a line serves; a pre-release is one only
// when it is the version a line in pre-release is pinned to (Resolve).
var versionPattern = regexp.MustCompile(`^v?1\.(0|[1-9]\d{0,3})(?:\.(0|[1-9]\d{0,3})(-(?:alpha|beta|rc)\.(?:0|[1-9]\d{0,3}))?)?$`)

// parse returns the minor and the patch of version (patch -1 when version
// names only the line) and its pre-release suffix ("-beta.0", or "").
func parse(version string) (minor, patch int, pre string, err error) {
	m := versionPattern.FindStringSubmatch(version)
	if m == nil {
		return 0, 0, "", fmt.Errorf("%q is not a Kubernetes version: want v1.MINOR.PATCH or 1.MINOR, such as %s or %s", version, Default().Version, Default().Name())
	}
	minor, _ = strconv.Atoi(m[1]) // at most four digits
	patch = -1
	if m[2] != "" {
		patch, _ = strconv.Atoi(m[2])
	}
	return minor, patch, m[3], nil
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
// line's default patch (Line.Version). A pre-release is accepted only
// where it is exactly the version its line is pinned to (v1.38.0-beta.0,
// with or without the v): any other (another beta, an rc the table does
// not name, a pre-release of a released line) is refused, naming the one
// the harness knows.
func Resolve(version string) (Line, string, error) {
	minor, patch, pre, err := parse(version)
	if err != nil {
		return Line{}, "", err
	}
	for _, l := range lines {
		if l.Minor != minor {
			continue
		}
		if patch < 0 {
			return l, l.Version, nil
		}
		release := fmt.Sprintf("v1.%d.%d%s", minor, patch, pre)
		switch {
		case l.PreRelease() && release != l.Version:
			return Line{}, "", fmt.Errorf("%q is no version of Kubernetes %s the harness knows: the line is in pre-release, pinned to %s (a newer pre-release, or the release once the Go module proxy serves it, goes into internal/kubelines/kubelines.go)", version, l.Name(), l.Version)
		case pre != "" && !l.PreRelease():
			return Line{}, "", fmt.Errorf("%q is a pre-release of Kubernetes %s, which is released: write a release, such as %s", version, l.Name(), l.Version)
		}
		return l, release, nil
	}
	why := "newer than any line the harness knows"
	if minor < Oldest().Minor {
		why = "older than the oldest line the harness supports (past its end of life)"
	}
	return Line{}, "", fmt.Errorf("%q is on Kubernetes 1.%d, %s: the supported lines are %s", version, minor, why, Supported())
}

// preReleasePattern is a Kubernetes version as an API server or a binary
// reports a pre-release: v1.MINOR.PATCH-alpha.N, -beta.N or -rc.N, and
// whatever a build adds after it.
var preReleasePattern = regexp.MustCompile(`^v?1\.\d+\.\d+-(?:alpha|beta|rc)\.(?:0|[1-9]\d*)(?:$|[^0-9])`)

// IsPreRelease says whether version, as an API server reports it
// (v1.38.0-beta.0, v1.38.0-rc.1+0123abcd), is a pre-release of Kubernetes:
// a run on it is marked so, and the gate blocks it unless its policy allows
// pre-releases. Any pre-release counts, of a line in the table or not (a
// cluster made elsewhere may run one the harness does not build).
func IsPreRelease(version string) bool { return preReleasePattern.MatchString(version) }

// CheckPatch says whether version, of a supported line, names a release
// the harness knows: a patch no newer than the line's newest (Line.Version).
// A newer one is no release yet (a typo, such as v1.36.99): downloading it
// would fail on the machine, after the work had begun. A version that
// names only the line is its newest patch.
// (A line in pre-release has only its pinned version, which Resolve
// alone accepts.)
func CheckPatch(version string) error {
	l, release, err := Resolve(version)
	if err != nil {
		return err
	}
	if l.PreRelease() {
		return nil
	}
	_, patch, _, _ := parse(release)
	_, newest, _, _ := parse(l.Version)
	if patch > newest {
		return fmt.Errorf("%s is no %s release the harness knows (the newest is %s): check the version; a release newer than it goes into internal/kubelines/kubelines.go", release, l.Name(), l.Version)
	}
	return nil
}
