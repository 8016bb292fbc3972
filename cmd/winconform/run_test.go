package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/progress"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/internal/testing/reporttest"
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

// The CLI prints an N of M line per spec from the progress of every
// process of a parallel run, counts the run itself, and passes the run's
// progress (in Sonobuoy's form, as framework/progress posts it) on to the
// user's own --progress-report-url: each process's own counts would say
// less than the run.
func TestProgressLines(t *testing.T) {
	var (
		mu        sync.Mutex
		forwarded []progress.Update
	)
	user := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var u progress.Update
		json.NewDecoder(r.Body).Decode(&u)
		mu.Lock()
		forwarded = append(forwarded, u)
		mu.Unlock()
	}))
	defer user.Close()
	var out syncBuffer
	p, err := startProgress(4, &out, user.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first, second := progress.New(p.URL, &out), progress.New(p.URL, &out)
	first.SuiteWillBegin(types.Report{PreRunStats: types.PreRunStats{TotalSpecs: 9, SpecsThatWillRun: 4}})
	spec := func(text string, state types.SpecState, attempts, process int) types.SpecReport {
		return types.SpecReport{ContainerHierarchyTexts: []string{"[networking]"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: text,
			State: state, NumAttempts: attempts, ParallelProcess: process, RunTime: 1500 * time.Millisecond}
	}
	// A Linux twin of a Windows claim passes: it supports the claim, it
	// shows nothing on Windows, and no count takes it for a pass.
	twin := spec("WEB-01 on a Linux twin", types.SpecStatePassed, 1, 2)
	twin.LeafNodeLabels = []string{"claim:WEB-01", "os:linux"}
	twin.ReportEntries = types.ReportEntries{{Name: evidence.EntryName, Value: types.WrapEntryValue(`{"level":"linux","nodes":["lin-w"]}`)}}
	first.SpecDidEnd(spec("pods reach pods", types.SpecStatePassed, 1, 1))
	second.SpecDidEnd(spec("a filtered spec", types.SpecStateSkipped, 0, 2))
	second.SpecDidEnd(spec("a Windows pod reaches a Service", types.SpecStateFailed, 1, 2))
	second.SpecDidEnd(twin)
	first.SpecDidEnd(spec("needs a Windows node", types.SpecStateSkipped, 1, 1))
	want := "1 of 4  passed   [networking] pods reach pods  1.5s\n" +
		"2 of 4  failed   [networking] a Windows pod reaches a Service  1.5s\n" +
		"3 of 4  supported only [networking] WEB-01 on a Linux twin  1.5s\n" +
		"4 of 4  skipped  [networking] needs a Windows node  1.5s\n"
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", out.String(), want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forwarded) != 5 || forwarded[0].Event != progress.Start || forwarded[0].Total != 4 {
		t.Fatalf("forwarded %+v", forwarded)
	}
	last := forwarded[4]
	if last.Total != 2 || last.Completed != 1 || len(last.Failures) != 1 || last.Msg != "4 of 4 specs done (1 passed, 1 supported only, 1 failed, 1 skipped); last: skipped [networking] needs a Windows node" {
		t.Errorf("the run's last update %+v: want the run's counts (total 2: a skip and a twin leave it, completed 1, one failure), not a process's", last)
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
	dir := run.Write(t)
	code, out, stderr := runCLI(t, "results", dir)
	if code != 0 || !strings.Contains(out, "CLAIM") || !strings.Contains(out, "NET-02") || !strings.Contains(out, "no route to 10.244.1.5") {
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
	if err := compareShape(ctx, cs, made, &log); err == nil || !strings.Contains(err.Error(), "records no shape") || !strings.Contains(err.Error(), "winconform down --name winconform") {
		t.Errorf("a cluster without a record: %v", err)
	}
	if err := writeShape(ctx, cs, made); err != nil {
		t.Fatal(err)
	}
	if err := compareShape(ctx, cs, made, &log); err != nil || !strings.Contains(log.String(), "same shape") {
		t.Errorf("the same shape: %v, %q", err, log.String())
	}
	patient := made
	patient.ReadyTimeout.Duration = time.Hour
	if err := compareShape(ctx, cs, patient, &log); err != nil {
		t.Errorf("another ready timeout is the same shape: %v", err)
	}
	asked := kind.DefaultConfig()
	asked.CNI.Backend = "host-gw"
	err = compareShape(ctx, cs, asked, &log)
	for _, w := range []string{"another shape", "kubernetesVersion v1.36.3 there, v1.37.2 asked for", "cni.backend vxlan there, host-gw asked for", "winconform down --name winconform"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("another shape: %v; want %q", err, w)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
