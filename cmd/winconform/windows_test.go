package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A machine whose kubelet cannot run against the cluster's line is refused
// by the precheck, before the cluster is made or readied: the join's own
// check (windows.JoinAll) comes only after the cluster is up, which takes
// a minute warm and many minutes cold.
func TestPrecheckRefusesVersionSkewBeforeClusterWork(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "hybrid.yaml")
	write(t, cluster, "name: hybrid\nkubernetesVersion: v1.35.4\nnetworking:\n  apiServerAddress: 192.0.2.10\n")
	inv := filepath.Join(dir, "machines.yaml")
	write(t, inv, `defaults:
  user: Administrator
  passwordFrom: {env: WINCONFORM_TEST_PASSWORD}
  underlay: {shape: none}   # the routed underlay's root check is TestCheckRoot's (infra/underlay)
machines:
- name: win-a
  address: 192.0.2.20
  kubeletVersion: v1.37.2
- name: win-b
  address: 192.0.2.21
`)
	t.Setenv("WINCONFORM_TEST_PASSWORD", "not-used")
	w := windowsFlags{inventory: inv}
	err := w.precheck(&clusterFlags{config: cluster})
	if err == nil {
		t.Fatal("a 1.37 kubelet for a 1.35 cluster passed the precheck")
	}
	if msg := err.Error(); !strings.Contains(msg, "win-a") || !strings.Contains(msg, "v1.37.2") || strings.Contains(msg, "win-b") {
		t.Errorf("the refusal should name win-a and its kubelet, and not win-b:\n%s", msg)
	}
	// The same machines against a 1.37 cluster pass.
	write(t, cluster, "name: hybrid\nkubernetesVersion: v1.37.2\nnetworking:\n  apiServerAddress: 192.0.2.10\n")
	if err := w.precheck(&clusterFlags{config: cluster}); err != nil {
		t.Errorf("a 1.37 kubelet for a 1.37 cluster: %v", err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
