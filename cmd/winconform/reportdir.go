package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/winconform/winconform/internal/runid"

	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// prepareReportDir readies the report directory for this run: a previous
// run's report there is moved aside, whole, never deleted (rundir.Prepare),
// and a rerun of that report reads it where it now is.
func (r *runFlags) prepareReportDir() error {
	before, statErr := os.Stat(r.rerun)
	aside, err := rundir.Prepare(r.reportDir)
	if err != nil {
		return err
	}
	if aside == "" {
		return nil
	}
	fmt.Fprintf(errOut, "the previous report in %s is now in %s\n", r.reportDir, aside)
	if after, err := os.Stat(aside); r.rerun != "" && statErr == nil && err == nil && os.SameFile(before, after) {
		r.rerun = aside
	}
	return nil
}

// stepFailed ends a run whose step (up) failed before the suites ran: its
// report directory gets a JUnit file with the step as a failed test case.
// Refused input (a usage error) is no run: the directory is left as it is.
func (r *runFlags) stepFailed(step string, stepErr error) error {
	var refused unusable
	if errors.As(stepErr, &refused) {
		return stepErr
	}
	if err := r.prepareReportDir(); err != nil {
		fmt.Fprintln(errOut, "winconform: no JUnit of the failure:", err)
		return stepErr
	}
	err := writeStepFailure(errOut, r.reportDir, r.runID, step, stepErr)
	r.copyJUnit()
	return err
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
// beside it (underlay-check.json: every machine's rungs, what was seen,
// the rule that is missing and its fix).
func (r *runFlags) underlayFailed(rep *underlay.Report, checkErr error) error {
	err := r.stepFailed("underlay check", checkErr)
	var refused unusable
	if rep == nil || errors.As(checkErr, &refused) || r.runID == "" {
		return err
	}
	if werr := r.writeUnderlay(rep); werr != nil {
		fmt.Fprintln(errOut, "winconform: no underlay check report:", werr)
	} else {
		fmt.Fprintf(errOut, "the underlay check's rungs are in %s\n", filepath.Join(r.reportDir, rundir.UnderlayFile))
	}
	return err
}

// writeUnderlay writes the underlay check's report, stamped with the run,
// into the report directory (nothing when rep is nil).
func (r *runFlags) writeUnderlay(rep *underlay.Report) error {
	if rep == nil {
		return nil
	}
	stamped := struct {
		version.Stamp
		*underlay.Report
	}{version.For(r.runID), rep}
	return writeJSON(filepath.Join(r.reportDir, rundir.UnderlayFile), stamped)
}

// stepFailedIn is stepFailed for `up` and `join` with --report-dir: the
// directory is readied as for a run (a report there is moved aside); none
// without one.
func stepFailedIn(w io.Writer, dir, step string, stepErr error) error {
	var refused unusable
	if dir == "" || stepErr == nil || errors.As(stepErr, &refused) {
		return stepErr
	}
	r := runFlags{reportDir: dir}
	if err := r.prepareReportDir(); err != nil {
		fmt.Fprintln(w, "winconform: no JUnit of the failure:", err)
		return stepErr
	}
	// up and join are no run of suites; their report is a run of its own.
	id, err := runid.Begin("")
	if err != nil {
		return stepErr
	}
	return writeStepFailure(w, dir, id, step, stepErr)
}

// checkStepDir refuses, before any work, an up's or a join's --report-dir
// that a failure's JUnit could not go to (one holding other files).
func checkStepDir(dir string) error {
	if dir == "" {
		return nil
	}
	return usage(rundir.Check(dir))
}

// writeStepFailure writes the JUnit file of a run whose step failed before
// the suites ran (reports.WriteStepFailure), so that a dashboard that reads
// only JUnit shows the run red, and returns stepErr.
func writeStepFailure(w io.Writer, dir, runID, step string, stepErr error) error {
	path := filepath.Join(dir, reports.JUnitFile)
	if err := reports.WriteStepFailure(path, version.For(runID), step, stepErr); err != nil {
		fmt.Fprintln(w, "winconform: no JUnit of the failure:", err)
	} else {
		fmt.Fprintf(w, "the failure of %s is in %s\n", step, path)
	}
	return stepErr
}
