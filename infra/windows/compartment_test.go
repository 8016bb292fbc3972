package windows_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// compartmentNamespace is HNS's setting that makes a containerd pod's
// network compartment its own namespace, so that the SMB client resolves a
// share's name in it (kubernetes-sigs/windows-gmsa#30: without it, \\name\share
// fails from a pod while \\address\share works).
const compartmentNamespace = `registry:HKLM\SYSTEM\CurrentControlSet\Services\hns\State\EnableCompartmentNamespace`

// TestJoinEnablesCompartmentNamespace: the join sets EnableCompartmentNamespace
// to 1 before any pod runs on the node, as image-builder's containerd role
// (ansible/windows/roles/runtimes/tasks/containerd.yml, "Apply SMB Resolution
// Fix for containerd") and AKS's Windows images do. Windows reads the value
// when it makes a pod's compartment (hcsshim#882: GNS checks for the key),
// so no reboot follows; a second join changes nothing.
func TestJoinEnablesCompartmentNamespace(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if v := r.sim.Fact(compartmentNamespace); v != "1" {
		t.Fatalf("EnableCompartmentNamespace is %q after the join, want 1", v)
	}
	if r.sim.Reboots() != 0 {
		t.Errorf("the machine rebooted %d times for a value Windows reads when it makes a compartment", r.sim.Reboots())
	}
	steps := r.sim.Steps()
	if i, j := slices.Index(steps, windows.StepCompartmentNS), slices.Index(steps, "kubeadm-join:join"); i < 0 || j < i {
		t.Errorf("the machine ran %v: the value must be set before the node runs pods", steps)
	}
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	if st, _ := rep.Step(windows.StepCompartmentNS); st.Changed {
		t.Error("a second join set the value again")
	}
}

// TestJoinSaysPodsKeepTheirCompartments: on a node that has run pods (joined
// before, by the harness or by hand), setting the value now leaves the pods
// made before in the compartments they have (kubernetes.io, configure-gmsa:
// "running Pods will need to be recreated"); the step says so.
func TestJoinSaysPodsKeepTheirCompartments(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.sim.SetFact(compartmentNamespace, "0")
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	st, _ := rep.Step(windows.StepCompartmentNS)
	if !st.Changed || !strings.Contains(st.Output, "the pods made before keep their network compartments") || r.sim.Fact(compartmentNamespace) != "1" {
		t.Errorf("the step: changed %t, output %q, value %q", st.Changed, st.Output, r.sim.Fact(compartmentNamespace))
	}
}
