// Package winrelease is the harness's one table of the Windows Server
// releases Kubernetes supports on nodes (name, build, base images, support
// dates) and its one parser of Windows builds. The image map, the
// inventory, the simulated nodes and the matrix's expectations read them
// here. It imports nothing of the harness, so every layer can use it.
package winrelease

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Build is a Windows build as major.minor.build, such as 10.0.20348 for
// Windows Server 2022. Every Windows release Kubernetes supports is 10.0.x,
// so two builds compare by their build numbers.
type Build struct {
	Major, Minor, Number int
}

// Release is a Windows Server long-term servicing channel (LTSC) release: a
// Windows node runs one, and runs only containers built on the same one
// (process isolation, the only kind Kubernetes uses).
type Release struct {
	// Name is the release's short name, as in container image tags: ltsc2022.
	Name string
	// Product is the release's product name: Windows Server 2022.
	Product string
	// Build is the release's build.
	Build Build
	// NanoserverTag and ServercoreTag are the tags of its base images,
	// mcr.microsoft.com/windows/nanoserver and .../servercore.
	NanoserverTag, ServercoreTag string
	// Revision is an update revision (UBR) the release has shipped; a
	// simulated node reports it in its kernel version.
	Revision int
	// PauseTag is the tag of registry.k8s.io/pause a node of the release
	// runs as its sandbox image: the image is a manifest list with one
	// Windows variant per release, and Windows Server 2025 has one only
	// from 3.10.2 on (kubernetes/kubernetes#136960 moved build/pause to a
	// base image with an ltsc2025 variant; containerd/containerd#13156 moved
	// containerd's default to 3.10.2 for it). The older releases keep
	// 3.10.1, the tag kubeadm v1.34 names, which a mirror already holds.
	PauseTag string
	// MainstreamEnd and ExtendedEnd end Microsoft's mainstream and extended
	// support of the release (fixed lifecycle policy); its containers follow
	// the same dates.
	MainstreamEnd, ExtendedEnd time.Time
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// releases are the supported releases, oldest first. Windows Server 2019 is
// the oldest release Kubernetes supports for Windows nodes. Support dates:
// learn.microsoft.com/lifecycle/products/windows-server-2019 (-2022, -2025).
var releases = []Release{
	{Name: "ltsc2019", Product: "Windows Server 2019", Build: Build{10, 0, 17763},
		NanoserverTag: "1809", ServercoreTag: "ltsc2019", Revision: 6054, PauseTag: "3.10.1",
		MainstreamEnd: day(2024, time.January, 9), ExtendedEnd: day(2029, time.January, 9)},
	{Name: "ltsc2022", Product: "Windows Server 2022", Build: Build{10, 0, 20348},
		NanoserverTag: "ltsc2022", ServercoreTag: "ltsc2022", Revision: 2340, PauseTag: "3.10.1",
		MainstreamEnd: day(2026, time.October, 13), ExtendedEnd: day(2031, time.October, 14)},
	{Name: "ltsc2025", Product: "Windows Server 2025", Build: Build{10, 0, 26100},
		NanoserverTag: "ltsc2025", ServercoreTag: "ltsc2025", Revision: 3194, PauseTag: "3.10.2",
		MainstreamEnd: day(2029, time.November, 13), ExtendedEnd: day(2034, time.November, 14)},
}

// Releases returns the supported releases, oldest first.
func Releases() []Release { return append([]Release(nil), releases...) }

// Named returns the release called name (ltsc2022), and false for no release.
func Named(name string) (Release, bool) {
	for _, r := range releases {
		if r.Name == name {
			return r, true
		}
	}
	return Release{}, false
}

// Oldest is the build of the oldest supported release, Windows Server 2019
// (10.0.17763).
func Oldest() Build { return releases[0].Build }

// List describes the supported releases for messages:
// "10.0.17763 (ltsc2019), 10.0.20348 (ltsc2022) or 10.0.26100 (ltsc2025)".
func List() string {
	parts := make([]string, len(releases))
	for i, r := range releases {
		parts[i] = fmt.Sprintf("%s (%s)", r.Build, r.Name)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// Version is a Windows version as a machine or a node reports it: a build
// and, when written, its update revision (UBR): 10.0.20348.2340.
type Version struct {
	Build
	// Revision is the update revision; HasRevision says whether the
	// version was written with one.
	Revision    int
	HasRevision bool
}

// String returns the version as written: major.minor.build[.revision].
func (v Version) String() string {
	if v.HasRevision {
		return fmt.Sprintf("%s.%d", v.Build, v.Revision)
	}
	return v.Build.String()
}

var versionPattern = regexp.MustCompile(`^(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?$`)

// Parse parses a Windows version written major.minor.build, as the node
// label node.kubernetes.io/windows-build and an image's os.version have it,
// or major.minor.build.revision, as a node's kernel version and a machine's
// registry have it. It is the harness's one parser of Windows builds.
func Parse(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a Windows build: want major.minor.build with an optional revision, such as 10.0.20348 or 10.0.20348.2340", s)
	}
	n := make([]int, 4)
	for i, part := range m[1:] {
		if part != "" {
			n[i], _ = strconv.Atoi(part) // at most nine digits
		}
	}
	return Version{Build: Build{n[0], n[1], n[2]}, Revision: n[3], HasRevision: m[4] != ""}, nil
}

// ParseBuild parses a build written as 10.0.NNNNN, such as "10.0.20348",
// the form every supported release has. It refuses other forms, including
// a revision, leading zeros and a build number of other than five digits.
func ParseBuild(s string) (Build, error) {
	v, err := Parse(s)
	if err != nil || v.HasRevision || v.Major != 10 || v.Minor != 0 || v.Number < 10000 || v.Number > 99999 || v.String() != s {
		return Build{}, fmt.Errorf("%q is not a Windows build of the form 10.0.NNNNN", s)
	}
	return v.Build, nil
}

// String returns the build as major.minor.build.
func (b Build) String() string { return fmt.Sprintf("%d.%d.%d", b.Major, b.Minor, b.Number) }

// IsZero reports whether b is the zero Build (no build).
func (b Build) IsZero() bool { return b == Build{} }

// Compare returns -1 if b is older than o, 0 if they are the same build and
// +1 if b is newer.
func (b Build) Compare(o Build) int {
	if c := cmp.Compare(b.Major, o.Major); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Minor, o.Minor); c != 0 {
		return c
	}
	return cmp.Compare(b.Number, o.Number)
}

// Release returns the supported release whose build b is, such as ltsc2022
// for 10.0.20348, and false for any other build.
func (b Build) Release() (Release, bool) {
	for _, r := range releases {
		if r.Build == b {
			return r, true
		}
	}
	return Release{}, false
}

// ReleaseName returns the name of b's release ("ltsc2022" for 10.0.20348),
// or "" when b is not a supported release's build.
func (b Build) ReleaseName() string {
	r, _ := b.Release()
	return r.Name
}

// Supported reports whether Kubernetes supports b: it is at least the oldest
// supported release's build. Builds newer than the newest known release are
// accepted.
func (b Build) Supported() bool { return b.Compare(Oldest()) >= 0 }

// MarshalText encodes the build as major.minor.build.
func (b Build) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses a build written as 10.0.NNNNN; its error says the
// fix after "; ".
func (b *Build) UnmarshalText(text []byte) error {
	v, err := ParseBuild(string(text))
	if err != nil {
		fix := `write the build as 10.0.NNNNN (quoted), such as "10.0.20348" for Windows Server 2022; [Environment]::OSVersion.Version on the machine shows it`
		if r, perr := Parse(string(text)); perr == nil && r.HasRevision && r.Major == 10 && r.Minor == 0 {
			fix = fmt.Sprintf("drop the revision: write %q (the check compares major.minor.build)", r.Build)
		}
		return fmt.Errorf("%w; %s", err, fix)
	}
	*b = v
	return nil
}
