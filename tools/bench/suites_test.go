package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/reports/rundir"
)

// TestPrintSuitesBench: the bench's figures are ratios to what it replaces
// and to the targets, and the ten slowest specs' share is of the summed
// spec time of the serial run.
func TestPrintSuitesBench(t *testing.T) {
	var specs []rundir.SpecTime
	for i := 12; i >= 1; i-- { // 12 specs of 12, 11, ..., 1 s: 78 s in all
		specs = append(specs, rundir.SpecTime{Spec: fmt.Sprintf("spec %02d", i), State: "passed", Took: time.Duration(i) * time.Second})
	}
	ts := []suiteTiming{
		{Procs: 1, Took: 100 * time.Second, Result: "passed", Specs: specs},
		{Procs: 2, Took: 95 * time.Second, Result: "passed"},
	}
	var out bytes.Buffer
	if err := printSuitesBench(&out, ts, wasFigures{serial: 200 * time.Second, parallel: 190 * time.Second}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"1          100.0    passed  200.0  0.50x    150 (met)",
		"2          95.0     passed  190.0  0.50x    90 (missed)",
		"parallel/serial: 0.95x",
		// 12+11+...+3 = 75 s of 78 s; 75 % of the 100 s wall time
		"the 10 slowest specs of the serial run: 75.0 s, 96% of its 78.0 s of spec time (75% of its wall time)",
		"12.0     15%    passed  spec 12",
		"3.0      4%     passed  spec 03",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "spec 02") {
		t.Errorf("output lists more than the ten slowest:\n%s", got)
	}
}

func TestPrintSuitesBenchWithoutSpecTimes(t *testing.T) {
	var out bytes.Buffer
	ts := []suiteTiming{{Procs: 1, Took: time.Minute, Result: "error: no cluster"}, {Procs: 4, Took: time.Minute, Result: "passed"}}
	if err := printSuitesBench(&out, ts, wasFigures{serial: time.Minute, parallel: time.Minute}); err != nil {
		t.Fatal(err)
	}
	// A run that broke off meets no target, however quick it was.
	if !strings.Contains(out.String(), "no spec times") || !strings.Contains(out.String(), "150 (not judged: the run did not pass)") ||
		!strings.Contains(out.String(), "4          60.0     passed             60.0  1.00x    -") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestRunReportsExitStatus: a winconform that ends with a status is a run
// with that status (1, a failed run, is still timed), and a binary that
// cannot be started is an error, never a status.
func TestRunReportsExitStatus(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "winconform")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\"\nexit \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &winconform{bin: bin}
	for code, want := range map[int]string{0: "passed", 1: "failed (timed anyway)", 2: "error: winconform e2e exit status 2", 130: "error: winconform e2e exit status 130"} {
		var out bytes.Buffer
		got, err := w.run(context.Background(), &out, strconv.Itoa(code), "x")
		if err != nil || got != code || runResult(got) != want {
			t.Errorf("exit %d: got %d (%s), %v", code, got, runResult(got), err)
		}
		if out.String() != strconv.Itoa(code)+" x\n" {
			t.Errorf("exit %d: output %q", code, out.String())
		}
		if err := w.must(context.Background(), &out, strconv.Itoa(code)); (err == nil) != (code == 0) {
			t.Errorf("must, exit %d: %v", code, err)
		}
	}
	missing := &winconform{bin: filepath.Join(dir, "absent")}
	if code, err := missing.run(context.Background(), io.Discard, "up"); err == nil || code != -1 {
		t.Errorf("a missing binary: %d, %v", code, err)
	}
}
