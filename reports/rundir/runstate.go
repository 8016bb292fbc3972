package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/winconform/winconform/internal/atomicfile"
	"github.com/winconform/winconform/internal/userfile"
	"github.com/winconform/winconform/internal/version"
)

// RunFile marks a report directory with its run: written when the run
// starts, finished when it ends. A run killed before its end (SIGKILL, a
// lost machine) leaves it unfinished, so that what it wrote is never read
// as a verdict.
const RunFile = "run.json"

// SweptFile is what a run removed, before its specs, of what dead runs
// left in the cluster (the CLI writes it: suiterun.SweepReport).
const SweptFile = "swept.json"

// RunFormat is RunFile's format.
const RunFormat = "winconform.run/v1"

// RunState is RunFile.
type RunState struct {
	Format string `json:"format"`
	// Stamp is the run's ID and the harness that ran it.
	version.Stamp
	Started time.Time `json:"started"`
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	// Ended is when the run ended (also a failed or interrupted run);
	// nil while it runs, and for ever when it was killed.
	Ended *time.Time `json:"ended,omitempty"`
	// Outcome is how it ended, in a few words.
	Outcome string `json:"outcome,omitempty"`
}

// MarkStarted writes dir's RunFile for a run that starts now.
func MarkStarted(dir, runID string, started time.Time) error {
	host, _ := os.Hostname()
	return writeState(dir, RunState{Format: RunFormat, Stamp: version.For(runID), Started: started.UTC(), Host: host, PID: os.Getpid()})
}

// MarkEnded finishes dir's RunFile: the run ended, as outcome says.
func MarkEnded(dir, outcome string) error {
	st, err := readState(dir)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	st.Ended, st.Outcome = &now, outcome
	return writeState(dir, *st)
}

// Unfinished is refused input: a report directory whose run started and
// did not end.
type Unfinished struct {
	Dir   string
	State RunState
	// Running says the run's process is still there (on this host).
	Running bool
}

func (u *Unfinished) Error() string {
	s := u.State
	at := s.Started.Format(time.RFC3339)
	host, _ := os.Hostname()
	switch {
	case u.Running:
		return fmt.Sprintf("%s: run %s is still running (started %s, pid %d on this host): no verdict before it ends", u.Dir, s.RunID, at, s.PID)
	case s.Host != "" && s.Host != host:
		return fmt.Sprintf("%s: run %s started %s on %s and did not finish (killed before the end, or still running there): what it wrote is partial, no verdict; rerun the suites", u.Dir, s.RunID, at, s.Host)
	}
	return fmt.Sprintf("%s: killed before the end: run %s started %s and never finished (its process, pid %d, is gone); what it wrote is partial, no verdict: rerun the suites (`make e2e`)", u.Dir, s.RunID, at, s.PID)
}

// CheckFinished refuses the report directory of a run that started and
// never ended (*Unfinished). A directory without RunFile (the suite binary
// run alone, Sonobuoy's results) is not judged.
func CheckFinished(dir string) error {
	st, err := readState(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Ended != nil:
		return nil
	}
	host, _ := os.Hostname()
	return &Unfinished{Dir: dir, State: *st, Running: st.Host == host && processAlive(st.PID)}
}

func readState(dir string) (*RunState, error) {
	path := filepath.Join(dir, RunFile)
	data, err := userfile.Read("", path, userfile.Report)
	if err != nil {
		return nil, err
	}
	var st RunState
	if err := json.Unmarshal(data, &st); err != nil || st.Format != RunFormat {
		return nil, fmt.Errorf("%s is not a run file of this winconform (%s): the run that wrote it was stopped while writing it, or is of another version", path, RunFormat)
	}
	return &st, nil
}

// writeState writes RunFile whole or not at all (a temporary file renamed).
func writeState(dir string, st RunState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, RunFile), append(data, '\n'), 0o644)
}

// processAlive says whether process pid is there (signal 0).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
