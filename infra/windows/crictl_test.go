package windows_test

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestJoinInstallsCrictl: after the join, crictl of the kubelet's minor
// (cri-tools releases v1.37.0 with Kubernetes v1.37) is in C:\k, and an
// operator's account finds containerd's pipe in its configuration. crictl
// reads %USERPROFILE%\.crictl\crictl.yaml (cri-tools
// cmd/crictl/main_windows.go), and when that does not exist the crictl.yaml
// of its own directory (pkg/common/config.go, GetServerConfigFromFile), so
// the file beside crictl.exe serves every account, where
// sig-windows-tools' Install-Containerd.ps1 writes $home\.crictl\crictl.yaml,
// its own account's only. An account with a configuration of its own keeps
// it.
func TestJoinInstallsCrictl(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if v, _ := r.sim.File(`C:\k\crictl.exe`); v != "v1.37.0" {
		t.Errorf("crictl.exe is %q, want cri-tools v1.37.0 for Kubernetes %s", v, testVersion)
	}
	if src := r.sim.Params(windows.StepCrictl)["Source"]; src != "https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.37.0/crictl-v1.37.0-windows-amd64.tar.gz" {
		t.Errorf("crictl from %s", src)
	}
	config, endpoint, err := r.sim.Crictl(`C:\k\crictl.exe`, `C:\Users\operator`)
	if err != nil || config != `C:\k\crictl.yaml` || endpoint != nodeconfig.CRISocket {
		t.Errorf("an operator's crictl reads %q, endpoint %q (%v); want C:\\k\\crictl.yaml naming %s", config, endpoint, err, nodeconfig.CRISocket)
	}
	r.sim.SetFact(`file:C:\Users\operator\.crictl\crictl.yaml`, "runtime-endpoint: npipe:////./pipe/other\n")
	if config, _, _ := r.sim.Crictl(`C:\k\crictl.exe`, `C:\Users\operator`); !strings.HasPrefix(config, `C:\Users\operator`) {
		t.Errorf("an account's own configuration is not the one crictl reads: %s", config)
	}
}

// TestJoinTakesCrictlFromTheInventory: binaries.crictl names where crictl
// comes from (an air-gapped lab's share); its version is read from the name
// of cri-tools' archive.
func TestJoinTakesCrictlFromTheInventory(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.machine.Binaries["crictl"] = `\\files\k8s\crictl-v1.34.1-windows-amd64.tar.gz`
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	if p := r.sim.Params(windows.StepCrictl); p["Version"] != "v1.34.1" || p["Source"] != r.machine.Binaries["crictl"] {
		t.Errorf("crictl step parameters %v", p)
	}
}
