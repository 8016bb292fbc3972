package windows_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/internal/simmachine"
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
