package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// reportingSuite is a suite binary that writes a report (the directory
// $FAKE_REPORT, its run's ID replaced by the one it is given) into its
// --report-dir and keeps its arguments in $FAKE_ARGS.
const reportingSuite = `#!/bin/sh
printf '%s\n' "$@" > "$FAKE_ARGS"
for a; do case "$a" in --report-dir=*) d="${a#--report-dir=}";; --run-id=*) id="${a#--run-id=}";; esac; done
cp -r "$FAKE_REPORT"/. "$d/"
sed -i "s/wc-fake-run-id/$id/g" "$d/ginkgo/report.json"
`

// unreachable is a kubeconfig of a cluster nothing answers for.
const unreachable = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// versionOnly is a kubeconfig of an API server that answers /version and
// nothing else (404): a cluster the run reaches, whose other answers the
// run survives.
func versionOnly(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/version" {
			fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(strings.Replace(unreachable, "https://127.0.0.1:1", srv.URL, 1)), 0o600)
	return kc
}

// failedRun is a report directory whose run had a failed spec.
func failedRun(t *testing.T, dir string) *reporttest.Run {
	t.Helper()
	r := reporttest.Linux()
	r.Set("NET-07", reporttest.Spec{Name: "networking NET-07 pod to pod", State: types.SpecStateFailed, Message: "timeout", Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteTo(t, dir)
	return r
}

// summaryOf is the run in dir, as its record says.
func summaryOf(dir string) (reports.Summary, error) {
	run, err := rundir.Load(dir)
	if err != nil {
		return reports.Summary{}, err
	}
	return run.Summary, nil
}

// `make e2e RERUN=_output/report` (docs/running.md's example) reads the report
// it reruns and writes the new one to the same directory: the input is
// moved aside, whole, and the rerun names it there; nothing is deleted.
func TestRerunKeepsItsInput(t *testing.T) {
	t.Chdir(t.TempDir())
	old := failedRun(t, "_output/report")
	bin, args, next := filepath.Join(t.TempDir(), "e2e.test"), filepath.Join(t.TempDir(), "args"), t.TempDir()
	os.WriteFile(bin, []byte(reportingSuite), 0o755)
	newer := reporttest.Linux()
	newer.ID, newer.NoRunFile, newer.Start, newer.Took = "wc-fake-run-id", true, time.Now(), time.Millisecond
	newer.WriteTo(t, next)
	t.Setenv("FAKE_ARGS", args)
	t.Setenv("FAKE_REPORT", next)
	kc := versionOnly(t)

	rf := runFlags{binary: bin, reportDir: "_output/report", procs: "1", rerun: "_output/report", runID: "nightly-2"}
	if err := rf.rerunFocus(); err != nil {
		t.Fatal(err)
	}
	if err := runSuite(context.Background(), rf, kc, nil, nil); err != nil {
		t.Fatalf("runSuite: %v", err)
	}
	aside := "_output/report." + old.ID
	kept, err := summaryOf(aside)
	if err != nil || kept.RunID != old.ID {
		t.Fatalf("the rerun's input report is gone (%v): it must be kept, moved aside to %s", err, aside)
	}
	got, _ := os.ReadFile(args)
	abs, _ := filepath.Abs(aside)
	if !strings.Contains(string(got), "--rerun-of="+abs+"\n") {
		t.Errorf("the rerun names its input %s? its arguments:\n%s", abs, got)
	}
	if s, err := summaryOf("_output/report"); err != nil || s.RunID != rf.runID {
		t.Errorf("the new report: %v %q, want this run's", err, s.RunID)
	}
}

// A failed up's JUnit (rundir.StepFailed, tested there) is returned as the
// step's error and copied to --junit-file.
func TestUpFailureWritesAJUnit(t *testing.T) {
	t.Chdir(t.TempDir())
	failedRun(t, "_output/report")
	rf := runFlags{reportDir: "_output/report", junitFile: "junit-copy.xml"}
	upErr := errors.New("kind: the control plane did not come up")
	if err := rf.stepFailed("up", upErr); !errors.Is(err, upErr) {
		t.Errorf("stepFailed returned %v, want the step's error", err)
	}
	data, err := os.ReadFile(filepath.Join("_output/report", reports.JUnitFile))
	if err != nil || !strings.Contains(string(data), "the control plane did not come up") {
		t.Errorf("the JUnit of a failed up: %v\n%s", err, data)
	}
	if cp, err := os.ReadFile("junit-copy.xml"); err != nil || string(cp) != string(data) {
		t.Errorf("--junit-file: %v\n%s", err, cp)
	}
}

// Refused input (a usage error: a cluster of another shape, a bad flag) is
// no run: it writes no JUnit and leaves the previous report where it is.
func TestRefusedInputWritesNoJUnit(t *testing.T) {
	t.Chdir(t.TempDir())
	old := failedRun(t, "_output/report")
	junit, _ := os.ReadFile(filepath.Join("_output/report", reports.JUnitFile))
	refused := usage(errors.New("cluster \"kind\" was made from another shape: winconform down --name kind"))
	rf := runFlags{reportDir: "_output/report"}
	if err := rf.stepFailed("up", refused); !errors.Is(err, refused) {
		t.Errorf("stepFailed returned %v", err)
	}
	if err := stepFailedIn(io.Discard, "_output/report", "join", refused); !errors.Is(err, refused) {
		t.Errorf("stepFailedIn returned %v", err)
	}
	if s, err := summaryOf("_output/report"); err != nil || s.RunID != old.ID {
		t.Errorf("the previous report was moved for refused input: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join("_output/report", reports.JUnitFile)); string(now) != string(junit) {
		t.Error("refused input left a JUnit of a failed step in place of the run's")
	}
}

// A failed underlay check leaves, beside the JUnit of the failure, the
// rungs every machine climbed: which one failed, what was seen, the fix.
// Before, only the JUnit was written and the climb was in the log alone.
func TestUnderlayFailureWritesItsRungs(t *testing.T) {
	t.Chdir(t.TempDir())
	rep := &underlay.Report{Machines: []underlay.MachineReport{{Machine: "wc-remote", OS: "linux", Shape: underlay.Routed, Rungs: []underlay.Rung{
		{Name: "route", Result: underlay.RungOK},
		{Name: "vxlan-out", Result: underlay.RungFailed, Problem: "no DOCKER-USER rule for udp/4789", Fix: "winconform up --name kind"},
	}}}}
	rf := runFlags{reportDir: "_output/report", runID: "nightly-1"}
	if err := rf.underlayFailed(rep, rep.Err()); err == nil || !strings.Contains(err.Error(), "vxlan-out") {
		t.Errorf("underlayFailed returned %v, want the check's error", err)
	}
	junit, err := os.ReadFile(filepath.Join("_output/report", reports.JUnitFile))
	if err != nil || !strings.Contains(string(junit), "underlay check") {
		t.Errorf("the JUnit of the failure: %v\n%s", err, junit)
	}
	data, err := os.ReadFile(filepath.Join("_output/report", rundir.UnderlayFile))
	if err != nil {
		t.Fatalf("no %s: %v", rundir.UnderlayFile, err)
	}
	var got struct {
		RunID    string                   `json:"runID"`
		Machines []underlay.MachineReport `json:"machines"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.RunID != rf.runID || got.RunID == "" || len(got.Machines) != 1 || got.Machines[0].Rungs[1].Fix != "winconform up --name kind" {
		t.Errorf("%s: %s (run %s)", rundir.UnderlayFile, data, rf.runID)
	}

	// A check that never climbed (no cluster) has no rungs to write.
	t.Chdir(t.TempDir())
	rf = runFlags{reportDir: "_output/report"}
	_ = rf.underlayFailed(nil, errors.New("cluster \"kind\" does not exist"))
	if _, err := os.Stat(filepath.Join("_output/report", rundir.UnderlayFile)); err == nil {
		t.Error("an underlay report for a check that never ran")
	}
}
