package simmachine

import "testing"

// A WinRM shell inherits the PATH the WinRM service started with: what a
// step puts on the machine's PATH reaches kubeadm's preflight only through
// a refreshed session PATH, until the next boot.
func TestAWinRMShellKeepsThePathItsServiceStartedWith(t *testing.T) {
	m := New(Config{})
	m.SetFact(`file:C:\k\kubelet.exe`, "v1.34.4")
	m.SetFact(`path:C:\k`, "present")
	m.mu.Lock()
	inherited, refreshed := m.lookPath("kubelet.exe", false), m.lookPath("kubelet.exe", true)
	m.mu.Unlock()
	if inherited != "" || refreshed != `c:\k` {
		t.Errorf("before a reboot: the shell's PATH finds kubelet in %q, the machine's in %q; want nowhere and c:\\k", inherited, refreshed)
	}
	reboot(m)
	m.mu.Lock()
	inherited = m.lookPath("kubelet.exe", false)
	m.mu.Unlock()
	if inherited != `c:\k` || m.Fact(`winrm-path:C:\k`) == "" {
		t.Errorf("after a reboot the shell's PATH finds kubelet in %q; want c:\\k", inherited)
	}
}
