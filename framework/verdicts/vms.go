package verdicts

import (
	"errors"
	"fmt"

	"github.com/winconform/winconform/infra/windows/remote"
)

// VMSeen is what INF-11's spec saw of one machine of a VM run (made by
// `winconform vms up`, listed in the inventory the run wrote).
type VMSeen struct {
	// Name is the machine's name.
	Name string
	// State is what is wrong with the run's state file about the machine
	// (nil: it names the machine with its provider ID, ready, at the
	// inventory's address).
	State error
	// Identify is the unauthenticated wsmid:Identify's error: nil when the
	// machine's WinRM answered.
	Identify error
	// What is windows.Identify's error: nil when the machine said it is
	// Windows and of which build (Build); a failure to reach it (a
	// *remote.Error) is no answer; any other error is an answer that is not
	// Windows's, as the simulated machines (the WS-Management stand-in on a
	// Linux guest) give.
	What  error
	Build string
	// Joined is, for a Windows machine, whether its node is its own, Ready
	// and Windows (windows.Identity.Joined's error).
	Joined error
}

// VMRun decides INF-11 from what the spec saw of each machine: an error
// when the run's state does not match the inventory, a machine's WinRM
// does not answer, or a Windows machine is not joined; else the machines
// that are Windows (real) and those that answered WinRM without being
// Windows (simulated: they support the claim, and are never evidence of a
// Windows machine).
func VMRun(seen []VMSeen) (real, simulated []VMSeen, err error) {
	var errs []error
	for _, s := range seen {
		var re *remote.Error
		switch {
		case s.State != nil:
			errs = append(errs, fmt.Errorf("machine %s: the run's state: %w", s.Name, s.State))
		case s.Identify != nil:
			errs = append(errs, fmt.Errorf("machine %s: its WinRM does not answer Identify: %w", s.Name, s.Identify))
		case errors.As(s.What, &re):
			errs = append(errs, fmt.Errorf("machine %s: asking it what it is: %w", s.Name, s.What))
		case s.What != nil:
			simulated = append(simulated, s)
		case s.Joined != nil:
			errs = append(errs, fmt.Errorf("machine %s is Windows (%s) but not joined: %w", s.Name, s.Build, s.Joined))
		default:
			real = append(real, s)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return real, simulated, nil
}
