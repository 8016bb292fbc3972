package windows

import (
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
)

// The version a source's name holds: dl.k8s.io's layout and mirrors of it,
// an archive named with its version, none for a name without one, and
// several for a name that holds more than one (the inventory must then say).
func TestVersionsInNames(t *testing.T) {
	for src, want := range map[string][]string{
		"https://dl.k8s.io/v1.37.2/bin/windows/amd64/kubelet.exe":      {"v1.37.2"},
		"https://mirror.lab/k8s/v1.36.3/kubelet.exe":                   {"v1.36.3"},
		`\\files\k8s\v1.35.4\kubernetes-node-windows-amd64.tar.gz`:     {"v1.35.4"},
		"https://dl.k8s.io/v1.38.0-rc.1/bin/windows/amd64/kubelet.exe": {"v1.38.0-rc.1"},
		`C:\install\kubernetes-node-windows-amd64.tar.gz`:              nil,
		"https://mirror.lab/tools-v1.2.3/v1.36.3/kubelet.exe":          {"v1.2.3", "v1.36.3"},
		"https://mirror.lab/k8s/kubelet.exe?version=v1.36.3":           {"v1.36.3"},
		"https://mirror.lab/v1.36.3x/kubelet.exe":                      nil,
	} {
		if got := kubernetesVersionsIn(src); !slices.Equal(got, want) {
			t.Errorf("%s names %v, want %v", src, got, want)
		}
	}
	if _, err := namedVersion("binaries.kubelet", "https://mirror.lab/tools-v1.2.3/v1.36.3/kubelet.exe", kubernetesVersionsIn); err == nil {
		t.Error("a name with two versions gave one")
	}
}

// A control plane whose version could not be read (APIControlPlane returns
// "" when discovery fails) is named as such.
func TestVersionsOfAnUnreadableCluster(t *testing.T) {
	_, err := ResolveVersions(config.Machine{Name: "win-a"}, "")
	if err == nil || !strings.Contains(err.Error(), "the API server's version could not be read") {
		t.Errorf("ResolveVersions = %v", err)
	}
}
