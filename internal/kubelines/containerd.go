package kubelines

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The containerd releases the harness knows, and which of them each
// Kubernetes line's kubelet works with.

// DefaultContainerd is the containerd a Windows node gets unless its
// inventory says otherwise, whatever the line: the newest patch of
// containerd's long-term line, 2.3 (LTS until April 30, 2028: RELEASES.md
// of containerd v2.3.7).
const DefaultContainerd = "2.3.7"

// Containerd17 is the containerd 1.7 the harness names for the lines that
// still support containerd 1.x (1.35): the oldest 1.7 patch containerd's
// support matrix lists for them.
const Containerd17 = "1.7.28"

// containerdLine is a containerd release line and its newest patch the
// harness knows; its patches are numbered from 0 without a gap.
type containerdLine struct{ major, minor, newest int }

// containerdLines are the containerd releases the harness knows, from
// containerd's tags (github.com/containerd/containerd, read in August 2026:
// v1.7.0 to v1.7.34, v2.0.0 to v2.0.11, v2.1.0 to v2.1.9, v2.2.0 to v2.2.7,
// v2.3.0 to v2.3.4, each line's patches without a gap) and the Go module
// proxy (October 2026: github.com/containerd/containerd v1.7.35,
// github.com/containerd/containerd/v2 v2.0.14, v2.2.9, v2.3.7 and v2.4.2).
// Windows nodes run 1.7 or 2.x; older lines support no Kubernetes line the
// harness does.
var containerdLines = []containerdLine{
	{1, 7, 35}, {2, 0, 14}, {2, 1, 9}, {2, 2, 9}, {2, 3, 7}, {2, 4, 2},
}

// containerdSupport is containerd's Kubernetes support matrix, per
// Kubernetes minor: the oldest patch of each containerd line tested with
// it (RELEASES.md, "Kubernetes Support", containerd v2.4.2). A line's
// MinContainerd is the oldest of them.
var containerdSupport = map[int][]string{
	35: {"2.2.0", "2.1.5", "1.7.28"},
	36: {"2.3.0", "2.2.0"},
	37: {"2.4.0", "2.3.0"},
	// containerd v2.4.2's matrix has no row for 1.38 yet (it lists the
	// released lines): until one is published, 1.38 pre-releases are
	// paired with 1.37's containerd lines, which serve the same CRI v1.
	38: {"2.4.0", "2.3.0"},
}

var containerdPattern = regexp.MustCompile(`^v?(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})$`)

type release struct{ major, minor, patch int }

func (r release) String() string { return fmt.Sprintf("%d.%d.%d", r.major, r.minor, r.patch) }

func (r release) less(o release) bool {
	if r.major != o.major {
		return r.major < o.major
	}
	if r.minor != o.minor {
		return r.minor < o.minor
	}
	return r.patch < o.patch
}

func parseRelease(v string) (release, bool) {
	m := containerdPattern.FindStringSubmatch(v)
	if m == nil {
		return release{}, false
	}
	var r release
	r.major, _ = strconv.Atoi(m[1])
	r.minor, _ = strconv.Atoi(m[2])
	r.patch, _ = strconv.Atoi(m[3])
	return r, true
}

// knownContainerd describes the releases the harness knows, for messages.
func knownContainerd() string {
	parts := make([]string, len(containerdLines))
	for i, l := range containerdLines {
		parts[i] = fmt.Sprintf("%d.%d.0 to %d.%d.%d", l.major, l.minor, l.major, l.minor, l.newest)
	}
	return strings.Join(parts, ", ")
}

// CheckContainerd says whether version (MAJOR.MINOR.PATCH, with or without
// a leading v) is a containerd release the harness knows: the error names
// the releases it knows, and how it knows them.
func CheckContainerd(version string) error {
	r, ok := parseRelease(version)
	if !ok {
		if pre := strings.SplitN(version, "-", 2); len(pre) == 2 {
			if _, ok := parseRelease(pre[0]); ok {
				return fmt.Errorf("containerd %s is a pre-release: the harness knows containerd's releases only, such as %s", version, DefaultContainerd)
			}
		}
		return fmt.Errorf("%q is not a containerd version: want MAJOR.MINOR.PATCH, such as %s", version, DefaultContainerd)
	}
	for _, l := range containerdLines {
		if l.major == r.major && l.minor == r.minor && r.patch <= l.newest {
			return nil
		}
	}
	return fmt.Errorf("containerd %s is no release the harness knows (it knows %s, from containerd's tags and the Go module proxy, October 2026): check the version; a release newer than these goes into internal/kubelines/containerd.go", r, knownContainerd())
}

// ContainerdSupport lists the containerd releases containerd's support
// matrix pairs with the line, each the oldest patch of its containerd line,
// newest line first: "2.4.0+, 2.3.0+" for 1.37.
func (l Line) ContainerdSupport() string {
	var parts []string
	for _, v := range containerdSupport[l.Minor] {
		parts = append(parts, v+"+")
	}
	return strings.Join(parts, ", ")
}

// SupportsContainerd says whether the line's kubelet works with containerd
// version, by containerd's support matrix: a release of a containerd line
// the matrix pairs with the line must be at least that line's patch there;
// a release of a containerd line newer than every line the matrix names is
// taken as supported (containerd keeps serving the CRI v1 the kubelet
// speaks); any other is not. version must pass CheckContainerd first.
func (l Line) SupportsContainerd(version string) error {
	r, ok := parseRelease(version)
	if !ok {
		return CheckContainerd(version)
	}
	newest := release{}
	for _, s := range containerdSupport[l.Minor] {
		min, _ := parseRelease(s)
		if newest.less(min) {
			newest = min
		}
		if min.major == r.major && min.minor == r.minor {
			if r.less(min) {
				return fmt.Errorf("containerd %s is older than Kubernetes %s supports on the %d.%d line: containerd's support matrix pairs %s with %s", r, l.Name(), r.major, r.minor, l.Name(), l.ContainerdSupport())
			}
			return nil
		}
	}
	if newest.major < r.major || newest.major == r.major && newest.minor < r.minor {
		return nil
	}
	why := ""
	if r.major < 2 && l.Minor >= 36 {
		why = " (1.35 is the last line that supports containerd 1.x; from 1.36 the kubelet needs containerd 2)"
	}
	return fmt.Errorf("containerd %s does not support Kubernetes %s%s: containerd's support matrix pairs %s with %s", r, l.Name(), why, l.Name(), l.ContainerdSupport())
}

// NewestContainerd is the newest patch of every containerd line the
// harness knows, oldest line first: what a judge of the join's containerd
// configuration runs, one per line (infra/windows/nodeconfig's tests).
func NewestContainerd() []string {
	out := make([]string, len(containerdLines))
	for i, l := range containerdLines {
		out[i] = release{l.major, l.minor, l.newest}.String()
	}
	return out
}

// SupportedByALine says whether some Kubernetes line the harness supports
// works with containerd version (SupportsContainerd).
func SupportedByALine(version string) bool {
	for _, l := range Lines() {
		if l.SupportsContainerd(version) == nil {
			return true
		}
	}
	return false
}
