package inventory

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Build is a Windows build as major.minor.build, such as 10.0.20348 for
// Windows Server 2022. Every Windows release Kubernetes supports is 10.0.x,
// so two builds compare by their build numbers.
type Build struct {
	Major, Minor, Number int
}

// Release is a Windows Server LTSC release that Kubernetes supports on nodes.
type Release struct {
	// Name is the release's short name, as in container image tags: ltsc2022.
	Name string
	// Product is the release's product name: Windows Server 2022.
	Product string
	// Build is the release's build.
	Build Build
}

// releases are the supported releases, oldest first. Windows Server 2019 is
// the oldest release Kubernetes supports for Windows nodes.
var releases = []Release{
	{Name: "ltsc2019", Product: "Windows Server 2019", Build: Build{10, 0, 17763}},
	{Name: "ltsc2022", Product: "Windows Server 2022", Build: Build{10, 0, 20348}},
	{Name: "ltsc2025", Product: "Windows Server 2025", Build: Build{10, 0, 26100}},
}

// SupportedReleases returns the Windows Server releases Kubernetes supports
// for nodes, oldest first.
func SupportedReleases() []Release { return append([]Release(nil), releases...) }

// OldestSupportedBuild is the build of the oldest supported release,
// Windows Server 2019 (10.0.17763).
func OldestSupportedBuild() Build { return releases[0].Build }

var buildPattern = regexp.MustCompile(`^10\.0\.([1-9][0-9]{4})$`)

// ParseBuild parses a build written as 10.0.NNNNN, such as "10.0.20348".
// It refuses other forms, including a fourth (revision) component.
func ParseBuild(s string) (Build, error) {
	m := buildPattern.FindStringSubmatch(s)
	if m == nil {
		return Build{}, fmt.Errorf("%q is not a Windows build of the form 10.0.NNNNN", s)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil { // cannot happen: five digits
		return Build{}, fmt.Errorf("%q: %w", s, err)
	}
	return Build{Major: 10, Minor: 0, Number: n}, nil
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

// Release returns the supported LTSC release whose build b is, such as
// "ltsc2022" for 10.0.20348, and false for any other build.
func (b Build) Release() (Release, bool) {
	for _, r := range releases {
		if r.Build == b {
			return r, true
		}
	}
	return Release{}, false
}

// ReleaseName returns the name of b's LTSC release ("ltsc2022" for
// 10.0.20348), or "" when b is not a supported release's build.
func (b Build) ReleaseName() string {
	r, _ := b.Release()
	return r.Name
}

// Supported reports whether Kubernetes supports b: it is at least the oldest
// supported release's build. Builds newer than the newest known release are
// accepted.
func (b Build) Supported() bool { return b.Compare(OldestSupportedBuild()) >= 0 }

// MarshalText encodes the build as major.minor.build.
func (b Build) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses a build written as 10.0.NNNNN.
func (b *Build) UnmarshalText(text []byte) error {
	v, err := ParseBuild(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// releaseList describes the supported releases for error messages:
// "10.0.17763 (ltsc2019), 10.0.20348 (ltsc2022) or 10.0.26100 (ltsc2025)".
func releaseList() string {
	parts := make([]string, len(releases))
	for i, r := range releases {
		parts[i] = fmt.Sprintf("%s (%s)", r.Build, r.Name)
	}
	return joinOr(parts)
}

// joinOr joins words as "a", "a or b", "a, b or c".
func joinOr(words []string) string { return joinWords(words, "or") }

// joinWords joins words with commas and conj before the last.
func joinWords(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
