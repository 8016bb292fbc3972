package windows_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestJoinRebootsAPendingReboot joins a machine on which Windows has a
// reboot pending (Component Based Servicing's RebootPending: an update or a
// feature installed; files to replace at the next boot): the join reboots it
// before it installs anything, and the boot does what was pending.
func TestJoinRebootsAPendingReboot(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, RebootTime: 50 * time.Millisecond})
	r.sim.SetFact("env:pendingReboot", `Component Based Servicing\RebootPending|Session Manager\PendingFileRenameOperations`)
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if r.sim.Reboots() != 1 {
		t.Errorf("the machine rebooted %d times, want once, before the install", r.sim.Reboots())
	}
	if st, _ := rep.Step(windows.StepPreflight); !st.Rebooted {
		t.Errorf("preflight does not report the reboot: %+v", st)
	}
	steps := r.sim.Steps()
	if i := slices.Index(steps, "reboot"); i < 0 || slices.Index(steps, "containers-feature") < i {
		t.Errorf("the machine ran %v: the reboot must come before the install", steps)
	}
}

// TestJoinRefusesAFullSystemDrive joins a machine whose C: has 8 GiB of 127 GiB free: the
// kubelet would evict its pods and remove images at once (below 15% free),
// so the join stops at preflight, naming the numbers.
func TestJoinRefusesAFullSystemDrive(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.sim.SetFact("env:sizeBytes", "136365211648")
	r.sim.SetFact("env:freeBytes", "8589934592")
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrDiskSpace) || !strings.Contains(err.Error(), "8.0 GiB free of 127.0 GiB (6%)") {
		t.Fatalf("err = %v, want ErrDiskSpace naming the free space", err)
	}
	if got := r.sim.Steps(); !slices.Equal(got, []string{"preflight"}) {
		t.Errorf("the machine ran %v after preflight refused it", got)
	}
}

// With more than one routable adapter, the kubelet takes the address its
// host name resolves to (k8s.io/kubernetes pkg/kubelet/nodestatus
// setters.go: --node-ip, else the host name's lookup, else
// ChooseHostInterface), and flannel the interface of the lowest-metric
// default route (flannel's Windows backend asks for the default route's
// interface when --iface is not given): they can disagree. Without nodeIP
// the join stops at preflight, naming the addresses and the field, before
// it installs anything; with nodeIP it goes on.
func TestJoinStopsOnSeveralAddressesWithoutNodeIP(t *testing.T) {
	t.Parallel()
	const two = "10.0.0.5 on Ethernet|192.168.56.20 on Ethernet 2"
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.sim.SetFact("env:ipv4", two)
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrNodeAddress) {
		t.Fatalf("err = %v, want ErrNodeAddress", err)
	}
	for _, want := range []string{"10.0.0.5 on Ethernet", "192.168.56.20 on Ethernet 2", "set nodeIP"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if got := r.sim.Steps(); !slices.Equal(got, []string{"preflight"}) {
		t.Errorf("the machine ran %v, want preflight alone", got)
	}

	r = newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) { m.NodeIP = "192.168.56.20" })
	r.sim.SetFact("env:ipv4", two)
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("with nodeIP: %v", err)
	}
	r.checkNoProblems()
}
