package rundir_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// A run killed before its end leaves its directory marked started: Load
// (the gate, the diff, the HTML) refuses it as killed, never reads a
// verdict from it; a run that ended is read as before.
func TestKilledRunIsNoVerdict(t *testing.T) {
	r := reporttest.Linux()
	dir := r.Write(t)
	if err := rundir.MarkStarted(dir, r.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	// This process is alive: the run is still going.
	_, err := rundir.Load(dir)
	var u *rundir.Unfinished
	if !errors.As(err, &u) || !u.Running {
		t.Fatalf("a run still going: %v", err)
	}
	wantErr(t, err, "still running", "no verdict before it ends")
	// Its process gone: killed.
	st := readRunFile(t, dir)
	st.PID = 1 << 30
	writeRunFile(t, dir, st)
	_, err = rundir.Load(dir)
	wantErr(t, err, "killed before the end", "run "+r.ID+" started", "no verdict")
	// Of another host: said so.
	st.Host = "ci-runner-7"
	writeRunFile(t, dir, st)
	wantErr(t, rundir.CheckFinished(dir), "on ci-runner-7 and did not finish")

	if err := rundir.MarkEnded(dir, "ended"); err != nil {
		t.Fatal(err)
	}
	reporttest.Reseal(t, dir) // as the CLI's Record.Finish seals after MarkEnded
	if _, err := rundir.Load(dir); err != nil {
		t.Errorf("a run that ended: %v", err)
	}
	if st := readRunFile(t, dir); st.Ended == nil || st.Outcome != "ended" || st.RunID != r.ID {
		t.Errorf("run file %+v", st)
	}
	// A directory without a run file (the suite binary alone, Sonobuoy) is not judged.
	if err := os.Remove(filepath.Join(dir, rundir.RunFile)); err != nil {
		t.Fatal(err)
	}
	if err := rundir.CheckFinished(dir); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), []byte(`{"format":`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, rundir.CheckFinished(dir), "run.json is not a run file")
}

func readRunFile(t *testing.T, dir string) rundir.RunState {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rundir.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var st rundir.RunState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func writeRunFile(t *testing.T, dir string, st rundir.RunState) {
	t.Helper()
	data, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A killed run's directory (run.json never ended, swept.json, a run file
// cut off while written, no summary) is a report: the next run moves it
// aside, named by the run in run.json, instead of refusing it or mixing
// with it.
func TestPrepareMovesAKilledRunAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rundir.MarkStarted(dir, "wc-20261125t180000-0a1b2c3d", time.Now()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, rundir.SweptFile), []byte(`{"format":"winconform.sweep/v1","dead":[]}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".run-123.json"), []byte(`{"form`), 0o644)
	aside, err := rundir.Prepare(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + ".wc-20261125t180000-0a1b2c3d"; aside != want {
		t.Errorf("moved aside to %s, want %s", aside, want)
	}
	if _, err := os.Stat(filepath.Join(aside, rundir.RunFile)); err != nil {
		t.Errorf("the killed run's run file did not move with it: %v", err)
	}
}
