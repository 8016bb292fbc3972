package windows_test

import (
	"testing"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestJoinWithDefenderTurnedOff joins a machine whose Microsoft Defender is
// installed but turned off (its WinDefend service stopped and disabled, as
// a policy or another antivirus leaves it): its cmdlets then fail (see
// simmachine/refusals.go), and the join must take it as absent.
func TestJoinWithDefenderTurnedOff(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.sim.SetFact("service:WinDefend", "Disabled/Stopped")
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	st, _ := rep.Step(windows.StepDefender)
	if st.Changed || st.Error != "" || st.Status["defender"] != false || st.Status["reason"] != "the WinDefend service is Stopped" {
		t.Errorf("the defender step: %+v", st)
	}
	if got := r.sim.Exclusions(); len(got) != 0 {
		t.Errorf("exclusions %v on a Defender that is off", got)
	}
}
