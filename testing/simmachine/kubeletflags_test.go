package simmachine

import (
	"strings"
	"testing"
)

// A kubelet from 1.35 exits at once on --pod-infra-container-image, which
// kubeadm 1.34 wrote into kubeadm-flags.env; a 1.34 kubelet takes it.
func TestKubeletRefusesFlagsItsVersionRemoved(t *testing.T) {
	m := New(Config{})
	cmd := `"C:\k\kube-log-runner.exe" --log-file=C:\var\log\kubelet\kubelet.log "C:\k\kubelet.exe" --windows-service --pod-infra-container-image=registry.k8s.io/pause:3.10.1`
	for version, refuses := range map[string]bool{"v1.34.4": false, "v1.35.4": true, "v1.37.2": true, "": false} {
		m.SetFact(`file:C:\k\kubelet.exe`, version)
		m.mu.Lock()
		why := m.kubeletRefuses(cmd)
		m.mu.Unlock()
		if (why != "") != refuses || (refuses && !strings.Contains(why, "unknown flag: --pod-infra-container-image")) {
			t.Errorf("kubelet %q: %q, want refused %v", version, why, refuses)
		}
	}
	m.SetFact(`file:C:\k\kubelet.exe`, "v1.37.2")
	m.mu.Lock()
	defer m.mu.Unlock()
	if why := m.kubeletRefuses(strings.Replace(cmd, "--pod-infra-container-image=registry.k8s.io/pause:3.10.1", "--hostname-override=win-a", 1)); why != "" {
		t.Errorf("a 1.37 kubelet without removed flags: %q", why)
	}
}
