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

// The machines `make e2e VMS=` will make are checked before the first VM
// (issue 31 item 3): e2e --check --vms FILE holds the VM file's machine
// block to the cluster's line and apiServerAddress, as up --inventory holds
// an inventory's machines; before, the block's versions and the address
// were checked only once the VMs existed.
func TestE2ECheckHoldsTheVMFilesMachinesToTheCluster(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WINCONFORM_TEST_PASSWORD", "not-used")
	cluster := filepath.Join(dir, "hybrid.yaml")
	write(t, cluster, "name: hybrid\nkubernetesVersion: v1.35.4\nnetworking:\n  apiServerAddress: 192.0.2.10\n")
	vmFile := filepath.Join(dir, "vms.yaml")
	block := "provider: libvirt\nimage: /var/lib/libvirt/images/golden.qcow2\ncount: 1\nmachine:\n  user: Administrator\n  passwordFrom: {env: WINCONFORM_TEST_PASSWORD}\n  underlay: {shape: none}\n"
	write(t, vmFile, block+"  kubeletVersion: v1.37.2\n")
	bin, _ := fakeSuiteBinary(t, 2)
	code, _, stderr := runCLI(t, "e2e", "--check", "--suite-binary", bin, "--config", cluster, "--vms", vmFile)
	if code != exitUsage || !strings.Contains(stderr, vmFile) || !strings.Contains(stderr, "v1.37.2") {
		t.Errorf("a 1.37 kubelet in the VM file's block for a 1.35 cluster: exit %d, %s", code, stderr)
	}
	noAddress := filepath.Join(dir, "plain.yaml")
	write(t, noAddress, "name: plain\nkubernetesVersion: v1.35.4\n")
	write(t, vmFile, block)
	code, _, stderr = runCLI(t, "e2e", "--check", "--suite-binary", bin, "--config", noAddress, "--vms", vmFile)
	if code != exitUsage || !strings.Contains(stderr, "cannot take Windows machines") {
		t.Errorf("a cluster without apiServerAddress: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "e2e", "--check", "--suite-binary", bin, "--config", cluster, "--vms", vmFile)
	if code != 0 {
		t.Errorf("a good VM file for a 1.35 cluster: exit %d, %s", code, stderr)
	}
}

// join --render writes what the join would send each machine, from the
// inventory and the cluster file alone: no password is read (the variable
// is unset), no machine or cluster is contacted (neither exists). A render
// without machines, with --check, or a join of a VM file is refused.
func TestJoinRenderTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "hybrid.yaml")
	write(t, cluster, "name: render-test\nnetworking:\n  apiServerAddress: 192.0.2.10\n  apiServerPort: 7443\n")
	inv := filepath.Join(dir, "machines.yaml")
	write(t, inv, `defaults:
  user: Administrator
  passwordFrom: {env: WINCONFORM_RENDER_TEST_UNSET}
machines:
- name: win-a
  address: 192.0.2.20
- name: win-b
  address: 192.0.2.21
  expectedBuild: 10.0.26100
`)
	out := filepath.Join(dir, "render")
	code, stdout, stderr := runCLI(t, "join", "--render", out, "--inventory", inv, "--config", cluster)
	if code != 0 {
		t.Fatalf("join --render: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, f := range []string{"README.txt", "cluster/windows-node-services.yaml", "win-a/15-kubeadm-join.ps1", "win-a/files/kubeadm-join/join.yaml",
		"win-a/files/containerd/config.toml", "win-b/files/kubelet/command-line.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	disc, _ := os.ReadFile(filepath.Join(out, "win-a/files/kubeadm-join/discovery.conf"))
	if !strings.Contains(string(disc), "server: https://192.0.2.10:7443") {
		t.Errorf("the discovery kubeconfig names another API server:\n%s", disc)
	}
	toml, _ := os.ReadFile(filepath.Join(out, "win-b/files/containerd/config.toml"))
	if !strings.Contains(string(toml), "pause:3.10.2") {
		t.Errorf("a Windows Server 2025 machine's containerd runs another pause image:\n%s", toml)
	}
	for _, args := range [][]string{
		{"join", "--render", out, "--config", cluster},
		{"join", "--render", out, "--check", "--inventory", inv, "--config", cluster},
		{"join", "--vms", inv, "--config", cluster},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// A cluster file whose flannel Windows nodes cannot join (host-gw, or
// vxlan on another VNI or port) is refused when it is loaded with the
// machines, before any cluster or VM work: e2e --check with an inventory or
// a VM file, up with them, join --render. Before, only join refused it, once
// the cluster existed (PrepareControlPlane reading kube-flannel-cfg).
func TestWindowsMachinesNeedFlannelsVXLANBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WINCONFORM_TEST_PASSWORD", "not-used")
	inv := filepath.Join(dir, "machines.yaml")
	write(t, inv, "defaults:\n  user: Administrator\n  passwordFrom: {env: WINCONFORM_TEST_PASSWORD}\n  underlay: {shape: none}\nmachines:\n- name: win-a\n  address: 192.0.2.20\n")
	vmFile := filepath.Join(dir, "vms.yaml")
	write(t, vmFile, "provider: libvirt\nimage: /var/lib/libvirt/images/golden.qcow2\ncount: 1\nmachine:\n  user: Administrator\n  passwordFrom: {env: WINCONFORM_TEST_PASSWORD}\n  underlay: {shape: none}\n")
	bin, _ := fakeSuiteBinary(t, 2)
	for _, c := range []struct{ cni, want string }{
		{"cni:\n  backend: host-gw\n", "cni.backend"},
		{"cni:\n  backend: vxlan\n  vni: 1\n", "cni.vni 1"},
		{"cni:\n  backend: vxlan\n  port: 8472\n", "cni.port 8472"},
	} {
		cluster := filepath.Join(dir, "hybrid.yaml")
		write(t, cluster, "name: hybrid\nnetworking:\n  apiServerAddress: 192.0.2.10\n"+c.cni)
		for _, args := range [][]string{
			{"e2e", "--check", "--suite-binary", bin, "--config", cluster, "--inventory", inv},
			{"e2e", "--check", "--suite-binary", bin, "--config", cluster, "--vms", vmFile},
			{"up", "--config", cluster, "--inventory", inv},
			{"join", "--render", filepath.Join(dir, "render"), "--config", cluster, "--inventory", inv},
		} {
			code, _, stderr := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "vxlan") {
				t.Errorf("%q with %v: exit %d, %s; want %d naming %s", c.cni, args, code, stderr, exitUsage, c.want)
			}
		}
	}
}
