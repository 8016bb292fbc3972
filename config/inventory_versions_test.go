package config

import (
	"testing"
)

// kubeletVersion and containerdVersion say which versions the node runs
// when the sources do not (a directory, an archive named without its
// version) or when the kubelet is not the cluster's version. The inventory
// checks their form only, and writes them as the harness uses them (the
// kubelet with its v, containerd without); whether they exist, and work with
// the cluster, the join checks before it touches a machine.
func TestVersions(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(`defaults:
  containerdVersion: v2.3.7
  kubeletVersion: 1.36.3
machines:
- name: win-a
  address: 192.168.56.20
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
- name: win-b
  address: 192.168.56.21
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
  containerdVersion: 1.7.28
  kubeletVersion: ~
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := inv.Machines[0]; a.ContainerdVersion != "2.3.7" || a.KubeletVersion != "v1.36.3" {
		t.Errorf("win-a (from defaults): containerd %q, kubelet %q", a.ContainerdVersion, a.KubeletVersion)
	}
	if b := inv.Machines[1]; b.ContainerdVersion != "1.7.28" || b.KubeletVersion != "" {
		t.Errorf("win-b (its own containerd, no kubelet): containerd %q, kubelet %q", b.ContainerdVersion, b.KubeletVersion)
	}
	for _, tc := range []struct{ yaml, field, msg string }{
		{"  kubeletVersion: \"1.36\"\n", "kubeletVersion", `"1.36" is not a Kubernetes version`},
		{"  kubeletVersion: v1.37.2-dirty\n", "kubeletVersion", "is not a Kubernetes version"},
		{"  kubeletVersion: latest\n", "kubeletVersion", "is not a Kubernetes version"},
		{"  containerdVersion: \"2.3\"\n", "containerdVersion", `"2.3" is not a containerd version`},
		{"  containerdVersion: [2.3.7]\n", "containerdVersion", "not a string"},
	} {
		_, err := f.load(machineYAML(tc.yaml), nil)
		oneProblem(t, err, "machines[0]."+tc.field, tc.msg)
	}
}
