package nodeconfig_test

import (
	"fmt"
	"testing"

	"github.com/containerd/platforms"
	specs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/winrelease"
)

// builds are Windows builds a host or an image may have: every server
// release the harness knows, clients between and after them, and builds
// past the newest LTSC.
var builds = []int{14393, 17763, 19041, 19045, 20348, 22000, 22621, 25398, 26100, 26200, 27000, 28000}

// Which builds containerd 2.3 runs on which host is what its own platform
// matcher says (github.com/containerd/platforms v1.0.0-rc.5, the version
// containerd v2.3.7 pins; platform_windows_compat.go is built on every OS,
// and NewMatcher of a Windows platform uses it anywhere): every pair of
// builds, and a major or minor of another Windows.
func TestCompatibleIsContainerdsMatcher(t *testing.T) {
	for _, containerd := range []string{kubelines.DefaultContainerd, "2.4.2"} {
		for _, h := range builds {
			host := winrelease.Build{Major: 10, Minor: 0, Number: h}
			m := platforms.NewMatcher(specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: host.String()})
			for _, c := range builds {
				for _, ctr := range []winrelease.Build{{Major: 10, Minor: 0, Number: c}, {Major: 6, Minor: 3, Number: c}} {
					want := m.Match(specs.Platform{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("%s.1000", ctr)})
					got, err := nodeconfig.Compatible(containerd, host, ctr)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("containerd %s, host %s, image %s: Compatible says %v, containerd's matcher %v", containerd, host, ctr, got, want)
					}
				}
			}
		}
	}
}

// The variant each containerd runs (the cases of containerd's own
// platforms tests, defaults_windows_test.go and
// platform_windows_compat_test.go, and pause's index: 17763, 20348, 26100).
func TestPulledVariant(t *testing.T) {
	pause := []string{"10.0.17763.6054", "10.0.20348.2582", "10.0.26100.1742"}
	b := func(n int) winrelease.Build { return winrelease.Build{Major: 10, Minor: 0, Number: n} }
	for _, c := range []struct {
		containerd string
		host       winrelease.Build
		variants   []string
		want       string // "" for none
	}{
		{"2.3.7", b(20348), pause, "10.0.20348.2582"},
		{"2.3.7", b(26100), pause, "10.0.26100.1742"},
		{"2.3.7", b(17763), pause, "10.0.17763.6054"},
		{"2.3.7", b(26100), []string{"10.0.20348.2582"}, "10.0.20348.2582"}, // stable ABI: a 2022 image on 2025
		{"2.3.7", b(20348), []string{"10.0.26100.1742"}, ""},                // never newer than the host
		{"2.3.7", b(19041), pause, ""},                                      // no variant of the host's build
		{"2.2.9", b(26200), []string{"10.0.20348.2582"}, ""},                // 2.2's floor past 26100 is 26100
		{"2.3.7", b(26200), []string{"10.0.20348.2582"}, "10.0.20348.2582"},
		// Among runnable variants: 2.x the greatest os.version as a string,
		// 1.7 the first of the index.
		{"2.3.7", b(20348), []string{"10.0.20348.999", "10.0.20348.2582"}, "10.0.20348.999"},
		{"1.7.28", b(20348), []string{"10.0.20348.2582", "10.0.20348.999"}, "10.0.20348.2582"},
		{"1.7.28", b(26100), []string{"10.0.20348.2582", "10.0.26100.1742"}, "10.0.20348.2582"},
		{"2.3.7", b(26100), []string{"10.0.20348.2582", "10.0.26100.1742"}, "10.0.26100.1742"},
	} {
		v, ok, err := nodeconfig.PulledVariant(c.containerd, c.host, c.variants)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if ok {
			got = v.String()
		}
		if got != c.want {
			t.Errorf("containerd %s on %s, variants %v: %q, want %q", c.containerd, c.host, c.variants, got, c.want)
		}
	}
	if _, _, err := nodeconfig.PulledVariant("latest", b(20348), pause); err == nil {
		t.Error("a containerd that is no version chose a variant")
	}
}
