package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/testing/reporttest"
)

// The suite binary is no longer forced to --ginkgo.v (Suiterun adds it
// unless -q), and posts its progress to the CLI's listener.
func TestRunArgs(t *testing.T) {
	rf := runFlags{reportDir: "/r", suite: "networking", progressURL: "http://127.0.0.1:1/progress"}
	args := rf.args("/k")
	if slices.Contains(args, "--ginkgo.v") {
		t.Errorf("--ginkgo.v forced: %q", args)
	}
	if !slices.Contains(args, "--progress-report-url=http://127.0.0.1:1/progress") || !slices.Contains(args, "--suite=networking") {
		t.Errorf("%q", args)
	}
}

// A lab run (an existing cluster, Windows machines) gets 24 hours, as
// upstream's e2e runs do; the local cluster keeps Ginkgo's default (one
// hour); --timeout wins.
func TestSuiteTimeout(t *testing.T) {
	for _, c := range []struct {
		rf    runFlags
		local bool
		want  time.Duration
	}{
		{runFlags{}, true, 0},
		{runFlags{}, false, 24 * time.Hour},
		{runFlags{inventory: "machines.yaml"}, true, 24 * time.Hour},
		{runFlags{timeout: 3 * time.Hour}, false, 3 * time.Hour},
	} {
		if got := c.rf.suiteTimeout(c.local); got != c.want {
			t.Errorf("%+v local %v: %s, want %s", c.rf, c.local, got, c.want)
		}
	}
	rf := runFlags{binary: "x", procs: "1"}
	bin, _ := fakeSuiteBinary(t, 2)
	rf.binary = bin
	extra, err := rf.check(context.Background(), []string{"--strict-drift", "--progress-report-url", "http://localhost:8099/progress"})
	if err != nil || !slices.Equal(extra, []string{"--strict-drift"}) || rf.forward != "http://localhost:8099/progress" {
		t.Errorf("extra %q, timeout %s, forward %q, %v", extra, rf.timeout, rf.forward, err)
	}
}

// Colour codes only on a terminal, and never in CI or when asked not to.
func TestColorWanted(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tty, err := os.Open("/dev/tty")
	if err == nil {
		defer tty.Close()
		if !colorWanted(false, env(nil), tty) {
			t.Error("no colour on a terminal")
		}
		for _, e := range []map[string]string{{"CI": "true"}, {"CI": "1"}, {"NO_COLOR": "1"}} {
			if colorWanted(false, env(e), tty) {
				t.Errorf("colour with %v", e)
			}
		}
		if colorWanted(true, env(nil), tty) {
			t.Error("colour with --no-color")
		}
	}
	f, _ := os.Create(t.TempDir() + "/log")
	defer f.Close()
	if colorWanted(false, env(map[string]string{"CI": "false"}), f) {
		t.Error("colour codes into a file")
	}
}

// A run's last line says how it ended, from its record, and where the
// reports are; never "exit status 1". A run whose record cannot be read
// shows nothing, whatever the suite's exit status said.
func TestClosingLine(t *testing.T) {
	run := reporttest.IdealHybrid()
	run.Set("NET-01", reporttest.Spec{State: types.SpecStateFailed, Message: "no route"})
	dir := run.Write(t)
	line, readable := closingLine(run.ID, dir, suiterun.ExitError{Code: 1})
	if !readable || !strings.HasPrefix(line, "winconform e2e: run "+run.ID+" failed") || !strings.Contains(line, dir) || strings.Contains(line, "exit status") {
		t.Errorf("%v %q", readable, line)
	}
	line, readable = closingLine("wc-2", t.TempDir(), suiterun.ExitError{Code: 1})
	if readable || !strings.Contains(line, "before it wrote its record") {
		t.Errorf("%v %q", readable, line)
	}
	line, readable = closingLine("wc-3", t.TempDir(), nil)
	if readable || !strings.Contains(line, "its record cannot be read, so it shows nothing") {
		t.Errorf("a suite that passed without a record: %v %q", readable, line)
	}
}

// `winconform version` says the build and the defaults it installs.
func TestVersionCommand(t *testing.T) {
	code, out, stderr := runCLI(t, "version")
	for _, w := range []string{"winconform", "kubernetes  v1.37.2 by default", "1.35 (v1.35.4)", "kind", "v0.33.0", "containerd  2.3.7 on Windows nodes", "v2.3.7 (runc v1.4.3)"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, w, out, stderr)
		}
	}
	code, out, _ = runCLI(t, "version", "-o", "json")
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Kubernetes != "v1.37.2" || v.Version == "" {
		t.Errorf("json: %d %v %+v", code, err, v)
	}
}

// `winconform results DIR` shows a report directory in the terminal.
func TestResultsCommand(t *testing.T) {
	run := reporttest.IdealHybrid()
	run.Set("NET-01", reporttest.Spec{State: types.SpecStateFailed, Message: "no route to 10.244.1.5"})
	run.One("NET-02").Attempts, run.One("NET-02").FirstFailure = 2, "i/o timeout"
	dir := run.Write(t)
	code, out, stderr := runCLI(t, "results", dir)
	if code != 0 || !strings.Contains(out, "CLAIM") || !strings.Contains(out, "NET-02") || !strings.Contains(out, "no route to 10.244.1.5") ||
		!regexp.MustCompile(`passed \(flaky\)\s.*NET-02.*passed on attempt 2; attempt 1 failed at suites/networking/retry.go:42: i/o timeout`).MatchString(out) {
		t.Errorf("exit %d:\n%s%s", code, out, stderr)
	}
	code, out, _ = runCLI(t, "results", dir, "--outcome", "failed")
	if code != 0 || !strings.Contains(out, "NET-01") || strings.Contains(out, "NET-02 ") {
		t.Errorf("--outcome failed: exit %d:\n%s", code, out)
	}
	code, _, stderr = runCLI(t, "results", dir, "--outcome", "faild")
	if code != exitUsage || !strings.Contains(stderr, `did you mean "failed"`) {
		t.Errorf("--outcome faild: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "results", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "no ginkgo/report.json") {
		t.Errorf("an empty directory: exit %d: %s", code, stderr)
	}
	// What a claim needs, and what showed it: a twin shows nothing on Windows.
	twin := reporttest.Linux().Write(t)
	code, out, _ = runCLI(t, "results", twin, "--outcome", "supported")
	if code != 0 || !regexp.MustCompile(`WEB-01\s+supported\s+windows-node\s+not shown`).MatchString(out) || !strings.Contains(out, "NEEDS") {
		t.Errorf("a claim supported by a Linux twin: exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "results", twin, "--outcome", "shown")
	if code != 0 || !regexp.MustCompile(`NET-07\s+shown\s+linux\s+linux`).MatchString(out) || !regexp.MustCompile(`SCH-01\s+shown\s+scheduler\s+scheduler`).MatchString(out) {
		t.Errorf("claims shown at their levels: exit %d:\n%s", code, out)
	}
	// Issue 37: a run whose Windows nodes were all simulated, its records
	// saying windows-node on them, shows nothing on Windows, and says the
	// record breaks its contract; a mislabelled spec is a failed claim.
	sim := reporttest.IdealHybrid()
	for i := range sim.Facts.Nodes {
		if sim.Facts.Nodes[i].OS == "windows" {
			sim.Facts.Nodes[i].Simulated = true
		}
	}
	sim.Specs = append(sim.Specs, reporttest.Spec{Name: "WEB-2O typo", Labels: []string{"claim:WEB-2O"}, Evidence: []reporttest.Ev{reporttest.API()}})
	code, out, _ = runCLI(t, "results", sim.Write(t))
	if code != 0 || strings.Contains(out, "windows-node on 10.0.20348") || !strings.Contains(out, "breaks its contract") ||
		!strings.Contains(out, "evidence: spec") || !regexp.MustCompile(`WEB-2O\s+failed`).MatchString(out) {
		t.Errorf("a run on simulated Windows nodes whose records say windows-node: exit %d:\n%.4000s", code, out)
	}
}

// A local cluster records the shape it was made from; up reuses it only
// when asked for the same shape, else names the fields and the fix.
func TestClusterShape(t *testing.T) {
	ctx := context.Background()
	made := kind.DefaultConfig()
	made, err := made.WithKubernetesVersion("1.36")
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	var log bytes.Buffer
	if err := kind.CompareShape(ctx, cs, made, &log); err == nil || !strings.Contains(err.Error(), "records no shape") || !strings.Contains(err.Error(), "winconform down --name winconform") {
		t.Errorf("a cluster without a record: %v", err)
	}
	if err := kind.RecordShape(ctx, cs, made); err != nil {
		t.Fatal(err)
	}
	if err := kind.CompareShape(ctx, cs, made, &log); err != nil || !strings.Contains(log.String(), "same shape") {
		t.Errorf("the same shape: %v, %q", err, log.String())
	}
	patient := made
	patient.ReadyTimeout.Duration = time.Hour
	if err := kind.CompareShape(ctx, cs, patient, &log); err != nil {
		t.Errorf("another ready timeout is the same shape: %v", err)
	}
	asked := kind.DefaultConfig()
	asked.CNI.Backend = "host-gw"
	err = kind.CompareShape(ctx, cs, asked, &log)
	for _, w := range []string{"another shape", "kubernetesVersion v1.36.3 there, v1.37.2 asked for", "cni.backend vxlan there, host-gw asked for", "winconform down --name winconform"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("another shape: %v; want %q", err, w)
		}
	}
}
