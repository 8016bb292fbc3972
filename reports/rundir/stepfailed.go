package rundir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
)

// Ready readies dir for a run's reports: a previous run's report there is
// moved aside, whole, never deleted (Prepare), which is said in w. rerun
// is a report directory the run reads (a rerun's input, or ""); Ready
// returns where it now is: aside, when it was the report moved.
func Ready(w io.Writer, dir, rerun string) (string, error) {
	before, statErr := os.Stat(rerun)
	aside, err := Prepare(dir)
	if err != nil {
		return rerun, err
	}
	if aside == "" {
		return rerun, nil
	}
	fmt.Fprintf(w, "the previous report in %s is now in %s\n", dir, aside)
	if after, err := os.Stat(aside); rerun != "" && statErr == nil && err == nil && os.SameFile(before, after) {
		return aside, nil
	}
	return rerun, nil
}

// StepFailed ends run runID, whose step failed with stepErr before the
// suites ran: dir is readied (Ready) and gets the run's JUnit file with
// the step as a failed test case (reports.WriteStepFailure), so that a
// dashboard that reads only JUnit shows the run red. Where the JUnit is,
// or why there is none, is said in w. It says whether dir was readied:
// when not, dir holds nothing of this run.
func StepFailed(w io.Writer, dir, runID, step string, stepErr error) bool {
	if _, err := Ready(w, dir, ""); err != nil {
		fmt.Fprintln(w, "winconform: no JUnit of the failure:", err)
		return false
	}
	path := filepath.Join(dir, reports.JUnitFile)
	if err := reports.WriteStepFailure(path, version.For(runID), step, stepErr); err != nil {
		fmt.Fprintln(w, "winconform: no JUnit of the failure:", err)
	} else {
		fmt.Fprintf(w, "the failure of %s is in %s\n", step, path)
	}
	return true
}
