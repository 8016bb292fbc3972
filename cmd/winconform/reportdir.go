package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/winconform/winconform/internal/runid"

	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// prepareReportDir readies the report directory for this run
// (rundir.Ready): a previous run's report there is moved aside, and a
// rerun of that report reads it where it now is.
func (r *runFlags) prepareReportDir() error {
	rerun, err := rundir.Ready(errOut, r.reportDir, r.rerun)
	r.rerun = rerun
	return err
}

// stepFailed ends a run whose step (up) failed before the suites ran: its
// report directory gets a JUnit file with the step as a failed test case
// (rundir.StepFailed), copied to --junit-file. Refused input (a usage
// error) is no run: the directory is left as it is.
func (r *runFlags) stepFailed(step string, stepErr error) error {
	var refused unusable
	if errors.As(stepErr, &refused) {
		return stepErr
	}
	if rundir.StepFailed(errOut, r.reportDir, r.runID, step, stepErr) {
		r.copyJUnit()
	}
	return stepErr
}

// copyJUnit writes the run's JUnit file to --junit-file too, when given.
func (r *runFlags) copyJUnit() {
	if r.junitFile == "" {
		return
	}
	data, err := os.ReadFile(filepath.Join(r.reportDir, reports.JUnitFile))
	if err == nil {
		err = os.WriteFile(r.junitFile, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(errOut, "winconform: --junit-file:", err)
	}
}

// underlayFailed ends a run whose underlay check failed: the JUnit of the
// failure (stepFailed) and, when the check climbed its rungs, their report
// beside it (underlay.Report.WriteStamped).
func (r *runFlags) underlayFailed(rep *underlay.Report, checkErr error) error {
	err := r.stepFailed("underlay check", checkErr)
	var refused unusable
	if rep == nil || errors.As(checkErr, &refused) || r.runID == "" {
		return err
	}
	if werr := rep.WriteStamped(filepath.Join(r.reportDir, rundir.UnderlayFile), r.runID); werr != nil {
		fmt.Fprintln(errOut, "winconform: no underlay check report:", werr)
	} else {
		fmt.Fprintf(errOut, "the underlay check's rungs are in %s\n", filepath.Join(r.reportDir, rundir.UnderlayFile))
	}
	return err
}

// stepFailedIn is stepFailed for `up` and `join` with --report-dir
// (rundir.StepFailed); none without one.
func stepFailedIn(w io.Writer, dir, step string, stepErr error) error {
	var refused unusable
	if dir == "" || stepErr == nil || errors.As(stepErr, &refused) {
		return stepErr
	}
	// up and join are no run of suites; their report is a run of its own.
	id, err := runid.Begin("")
	if err != nil {
		return stepErr
	}
	rundir.StepFailed(w, dir, id, step, stepErr)
	return stepErr
}

// checkStepDir refuses, before any work, an up's or a join's --report-dir
// that a failure's JUnit could not go to (one holding other files).
func checkStepDir(dir string) error {
	if dir == "" {
		return nil
	}
	return usage(rundir.Check(dir))
}
