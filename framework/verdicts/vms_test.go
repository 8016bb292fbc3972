package verdicts

import (
	"errors"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows/remote"
)

// INF-11: machines made for the run count as Windows machines only when
// they say they are (windows.Identify); a machine that answers WinRM but
// not as Windows (the stand-in on a Linux guest) is simulated, never a
// Windows machine; a machine that does not answer, or whose state is off,
// or a Windows one not joined, fails.
func TestVMRun(t *testing.T) {
	notWindows := errors.New(`machine win-r-2: its answer to what it is, "", does not read`)
	unreachable := &remote.Error{Machine: "win-r-3", Step: "identify", Kind: remote.ErrUnreachable, Detail: "connection refused"}
	real, sim, err := VMRun([]VMSeen{
		{Name: "win-r-1", Build: "10.0.20348.2700"},
		{Name: "win-r-2", What: notWindows},
	})
	if err != nil || len(real) != 1 || real[0].Name != "win-r-1" || len(sim) != 1 || sim[0].Name != "win-r-2" {
		t.Errorf("VMRun = %v, %v, %v", real, sim, err)
	}
	for _, tc := range []struct {
		seen VMSeen
		want string
	}{
		{VMSeen{Name: "a", State: errors.New("no provider ID")}, "the run's state"},
		{VMSeen{Name: "b", Identify: errors.New("refused")}, "does not answer Identify"},
		{VMSeen{Name: "c", What: unreachable}, "asking it what it is"},
		{VMSeen{Name: "d", Build: "10.0.20348.1", Joined: errors.New("node d is not Ready")}, "is Windows (10.0.20348.1) but not joined"},
	} {
		real, sim, err := VMRun([]VMSeen{{Name: "ok", Build: "10.0.20348.2700"}, tc.seen})
		if err == nil || !strings.Contains(err.Error(), tc.want) || real != nil || sim != nil {
			t.Errorf("%+v: %v, %v, %v; want an error saying %q", tc.seen, real, sim, err, tc.want)
		}
	}
}
