package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/skips"
)

// spec builds the report of one It, labelled suite:networking by its container.
func spec(text string, state types.SpecState, msg string, leafLabels []string, entries ...types.ReportEntry) types.SpecReport {
	return types.SpecReport{
		ContainerHierarchyTexts:  []string{"[networking]", "pod to pod"},
		ContainerHierarchyLabels: [][]string{{"suite:networking"}, {}},
		LeafNodeType:             types.NodeTypeIt,
		LeafNodeText:             text,
		LeafNodeLabels:           leafLabels,
		State:                    state,
		Failure:                  types.Failure{Message: msg},
		RunTime:                  1500 * time.Millisecond,
		ReportEntries:            entries,
	}
}

func skipEntry(key string) types.ReportEntry {
	return types.ReportEntry{Name: skips.EntryName, Value: types.WrapEntryValue(key), Visibility: types.ReportEntryVisibilityNever}
}

func claimOf(t *testing.T, s Summary, id string) Claim {
	t.Helper()
	for _, c := range s.Claims {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("summary has no claim %s", id)
	return Claim{}
}

// sampleReport exercises every outcome:
//
//	NET-01 passed; NET-02 failed (one spec failed, one passed); NET-03 skipped
//	(no Windows node); NET-04 not run (filtered out); NET-05 skipped with no
//	recorded reason; NET-06 timed out; the rest not covered.
func sampleReport() types.Report {
	return types.Report{
		SuiteDescription: "winconform",
		SuiteSucceeded:   false,
		SpecReports: types.SpecReports{
			{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
			spec("passes", types.SpecStatePassed, "", []string{"claim:NET-01", "claim:NET-02", "os:linux"}),
			spec("fails", types.SpecStateFailed, "expected 1\nto equal 2", []string{"claim:NET-02", "os:windows"}),
			spec("skips", types.SpecStateSkipped, "no Windows node in this cluster", []string{"claim:NET-03", "os:windows"}, skipEntry("no-windows-node")),
			spec("skips too", types.SpecStateSkipped, "no Windows node in this cluster", []string{"claim:NET-03", "claim:NET-05", "os:windows"}, skipEntry("no-windows-node")),
			spec("filtered", types.SpecStateSkipped, "", []string{"claim:NET-04", "os:linux"}),
			spec("skips unrecorded", types.SpecStateSkipped, "Skip called directly", []string{"claim:NET-05", "os:linux"}),
			spec("times out", types.SpecStateTimedout, "A suite timeout occurred", []string{"claim:NET-06", "claim:NOPE-01", "os:linux"}),
		},
	}
}

func TestSummarizeOutcomes(t *testing.T) {
	s := Summarize(sampleReport())
	if s.Suite != "winconform" || s.Succeeded || s.Interrupted {
		t.Errorf("suite %q succeeded %v interrupted %v", s.Suite, s.Succeeded, s.Interrupted)
	}
	if len(s.Claims) != len(claims.All()) {
		t.Fatalf("%d claims, want one per catalogue entry (%d)", len(s.Claims), len(claims.All()))
	}
	for i, c := range claims.All() {
		if s.Claims[i].ID != c.ID || s.Claims[i].Kind != string(c.Kind) || s.Claims[i].Text != c.Text {
			t.Errorf("claims[%d] = %s/%s, want catalogue order %s/%s", i, s.Claims[i].ID, s.Claims[i].Kind, c.ID, c.Kind)
		}
	}
	cases := []struct {
		id                      string
		outcome                 string
		passed, failed, skipped int
		reasons                 []string
	}{
		{"NET-01", Passed, 1, 0, 0, nil},
		{"NET-02", Failed, 1, 1, 0, nil},
		{"NET-03", Skipped, 0, 0, 2, []string{"no-windows-node"}},
		{"NET-04", NotRun, 0, 0, 0, nil},
		{"NET-05", Skipped, 0, 0, 2, []string{"no-windows-node"}},
		{"NET-06", Failed, 0, 1, 0, nil},
		{"NET-07", NotCovered, 0, 0, 0, nil},
		{"LIM-07", NotCovered, 0, 0, 0, nil},
	}
	for _, c := range cases {
		got := claimOf(t, s, c.id)
		if got.Outcome != c.outcome || got.Passed != c.passed || got.Failed != c.failed || got.Skipped != c.skipped || !reflect.DeepEqual(got.Reasons, c.reasons) {
			t.Errorf("%s = %+v, want outcome %q passed %d failed %d skipped %d reasons %v",
				c.id, got, c.outcome, c.passed, c.failed, c.skipped, c.reasons)
		}
	}
	if want := map[string]int{"no-windows-node": 2, "unrecorded": 1}; !reflect.DeepEqual(s.SkipReasons, want) {
		t.Errorf("SkipReasons = %v, want %v (the filtered spec is not a skip)", s.SkipReasons, want)
	}
}

func TestSummarizeSpecs(t *testing.T) {
	s := Summarize(sampleReport())
	var names []string
	for _, sp := range s.Specs {
		names = append(names, sp.Name)
	}
	want := []string{
		"[networking] pod to pod passes",
		"[networking] pod to pod fails",
		"[networking] pod to pod skips",
		"[networking] pod to pod skips too",
		"[networking] pod to pod skips unrecorded",
		"[networking] pod to pod times out",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("specs = %q, want %q (no BeforeSuite, no filtered spec)", names, want)
	}
	byName := map[string]Spec{}
	for _, sp := range s.Specs {
		byName[sp.Name] = sp
	}
	p := byName["[networking] pod to pod passes"]
	if p.State != "passed" || p.Message != "" || p.SkipReason != "" || p.Seconds != 1.5 ||
		!reflect.DeepEqual(p.Labels, []string{"suite:networking", "claim:NET-01", "claim:NET-02", "os:linux"}) {
		t.Errorf("passed spec = %+v", p)
	}
	f := byName["[networking] pod to pod fails"]
	if f.State != "failed" || f.Message != "expected 1\nto equal 2" {
		t.Errorf("failed spec = %+v", f)
	}
	sk := byName["[networking] pod to pod skips"]
	if sk.State != "skipped" || sk.SkipReason != "no-windows-node" || sk.Message != "no Windows node in this cluster" {
		t.Errorf("skipped spec = %+v", sk)
	}
	if u := byName["[networking] pod to pod skips unrecorded"]; u.SkipReason != "" || u.Message != "Skip called directly" {
		t.Errorf("unrecorded skip = %+v", u)
	}
	if to := byName["[networking] pod to pod times out"]; to.State != "timedout" || to.Message != "A suite timeout occurred" {
		t.Errorf("timed-out spec = %+v", to)
	}
}

func TestSummarizeFailedWinsOverPassedInAnyOrder(t *testing.T) {
	for _, order := range [][]types.SpecState{
		{types.SpecStatePassed, types.SpecStateFailed, types.SpecStateSkipped},
		{types.SpecStateFailed, types.SpecStatePassed},
		{types.SpecStateSkipped, types.SpecStatePanicked, types.SpecStatePassed},
	} {
		var r types.Report
		for i, st := range order {
			msg := ""
			var entries []types.ReportEntry
			if st == types.SpecStateSkipped {
				msg = "skipped"
				entries = append(entries, skipEntry("too-few-nodes"))
			} else if st != types.SpecStatePassed {
				msg = "broke"
			}
			r.SpecReports = append(r.SpecReports, spec(strings.Repeat("x", i+1), st, msg, []string{"claim:WEB-01"}, entries...))
		}
		if got := claimOf(t, Summarize(r), "WEB-01").Outcome; got != Failed {
			t.Errorf("states %v: WEB-01 outcome %q, want failed", order, got)
		}
	}
}

func TestSummarizePassedWinsOverSkipped(t *testing.T) {
	r := types.Report{SpecReports: types.SpecReports{
		spec("a", types.SpecStateSkipped, "simulated", []string{"claim:CFG-01"}, skipEntry("simulated-node-only")),
		spec("b", types.SpecStatePassed, "", []string{"claim:CFG-01"}),
	}}
	c := claimOf(t, Summarize(r), "CFG-01")
	if c.Outcome != Passed || c.Passed != 1 || c.Skipped != 1 || !reflect.DeepEqual(c.Reasons, []string{"simulated-node-only"}) {
		t.Errorf("CFG-01 = %+v, want passed with one skip recorded", c)
	}
}

func TestSummarizeOnlyFilteredSpecs(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		spec("a", types.SpecStateSkipped, "", []string{"claim:NET-01"}),
		spec("b", types.SpecStateSkipped, "", []string{"claim:NET-01", "claim:NET-02"}),
	}}
	s := Summarize(r)
	if len(s.Specs) != 0 {
		t.Errorf("specs = %+v, want none (all filtered out)", s.Specs)
	}
	if len(s.SkipReasons) != 0 {
		t.Errorf("SkipReasons = %v, want none", s.SkipReasons)
	}
	for _, id := range []string{"NET-01", "NET-02"} {
		if c := claimOf(t, s, id); c.Outcome != NotRun || c.Skipped != 0 {
			t.Errorf("%s = %+v, want not run", id, c)
		}
	}
	counts := s.Counts()
	if counts[NotRun] != 2 || counts[NotCovered] != len(claims.All())-2 || counts[Passed]+counts[Failed]+counts[Skipped] != 0 {
		t.Errorf("counts = %v", counts)
	}
}

func TestSummarizeSkipEntryAloneMarksSelected(t *testing.T) {
	// A skip recorded by skips.Skip is a real skip even if the message is empty.
	r := types.Report{SpecReports: types.SpecReports{
		spec("a", types.SpecStateSkipped, "", []string{"claim:ID-02"}, skipEntry("no-active-directory")),
	}}
	s := Summarize(r)
	if c := claimOf(t, s, "ID-02"); c.Outcome != Skipped || !reflect.DeepEqual(c.Reasons, []string{"no-active-directory"}) {
		t.Errorf("ID-02 = %+v", c)
	}
	if s.SkipReasons["no-active-directory"] != 1 || len(s.Specs) != 1 {
		t.Errorf("SkipReasons %v specs %d", s.SkipReasons, len(s.Specs))
	}
}

func TestSummarizeIgnoresOtherEntries(t *testing.T) {
	other := types.ReportEntry{Name: "something else", Value: types.WrapEntryValue("no-windows-node")}
	r := types.Report{SpecReports: types.SpecReports{
		spec("a", types.SpecStateSkipped, "skipped", []string{"claim:NET-01"}, other),
	}}
	s := Summarize(r)
	if s.SkipReasons["unrecorded"] != 1 || s.SkipReasons["no-windows-node"] != 0 {
		t.Errorf("SkipReasons = %v, want only unrecorded", s.SkipReasons)
	}
	if c := claimOf(t, s, "NET-01"); c.Outcome != Skipped || c.Reasons != nil {
		t.Errorf("NET-01 = %+v", c)
	}
}

func TestSummarizeInterrupted(t *testing.T) {
	// The reasons Ginkgo v2.21 writes (internal/suite.go, interrupt_handler.go).
	for reason, want := range map[string]bool{
		"Interrupted by User":                                 true,
		"Interrupted by Other Ginkgo Process":                 true,
		"Suite skipped in BeforeSuite":                        false,
		"Detected pending specs and --fail-on-pending is set": false,
		"Detected no specs ran and --fail-on-empty is set":    false,
	} {
		s := Summarize(types.Report{SpecialSuiteFailureReasons: []string{reason}})
		if s.Interrupted != want {
			t.Errorf("reason %q: Interrupted = %v, want %v", reason, s.Interrupted, want)
		}
	}
}

// When the suite's --timeout elapses, Ginkgo skips every spec not yet run
// (state skipped, no message: they look filtered out) and records "Suite
// Timeout Elapsed". The report is as partial as after an interrupt.
func TestSummarizeSuiteTimeoutIsPartial(t *testing.T) {
	r := sampleReport()
	r.SpecialSuiteFailureReasons = []string{"Suite Timeout Elapsed"}
	if s := Summarize(r); !s.Interrupted || !strings.Contains(s.Markdown(), "partial report") {
		t.Errorf("a suite timeout is not reported as a partial run")
	}
}

func TestCounts(t *testing.T) {
	counts := Summarize(sampleReport()).Counts()
	want := map[string]int{Passed: 1, Failed: 2, Skipped: 2, NotRun: 1, NotCovered: len(claims.All()) - 6}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("Counts() = %v, want %v", counts, want)
	}
}

func TestMarkdown(t *testing.T) {
	md := Summarize(sampleReport()).Markdown()
	for _, want := range []string{
		"# winconform run: failed\n",
		"Claims: 1 passed, 2 failed, 2 skipped, 1 not run, 69 not covered (of 75).",
		"## Skipped specs by reason\n\n| reason | specs |\n|---|---|\n| no-windows-node | 2 |\n| unrecorded | 1 |\n",
		"## Claims\n\n| claim | kind | outcome | passed | failed | skipped | skip reasons |\n|---|---|---|---|---|---|---|\n",
		"| NET-01 | path | passed | 1 | 0 | 0 |  |\n",
		"| NET-02 | path | failed | 1 | 1 | 0 |  |\n",
		"| NET-03 | path | skipped | 0 | 0 | 2 | no-windows-node |\n",
		"| NET-04 | path | not run | 0 | 0 | 0 |  |\n",
		"| LIM-07 | limit | not covered | 0 | 0 | 0 |  |\n",
		"## Failed specs\n\n",
		"- **[networking] pod to pod fails** (failed): expected 1\n",
		"- **[networking] pod to pod times out** (timedout): A suite timeout occurred\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "to equal 2") {
		t.Error("Markdown shows more than the first line of a failure message")
	}
	for _, unwanted := range []string{"passes** (", "skips** ("} {
		if strings.Contains(md, unwanted) {
			t.Errorf("Markdown lists a passed or skipped spec as failed (%q)", unwanted)
		}
	}
	if strings.Index(md, "| CFG-01 |") > strings.Index(md, "| NET-01 |") || strings.Index(md, "| NET-09 |") > strings.Index(md, "| NET-10 |") {
		t.Error("claims table is not in catalogue order")
	}
}

func TestMarkdownWithoutFailures(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		spec("passes", types.SpecStatePassed, "", []string{"claim:NET-01"}),
		spec("filtered", types.SpecStateSkipped, "", []string{"claim:NET-02"}),
	}}
	md := Summarize(r).Markdown()
	if !strings.HasPrefix(md, "# winconform run: succeeded\n") {
		t.Errorf("Markdown header: %q", strings.SplitN(md, "\n", 2)[0])
	}
	if strings.Contains(md, "Failed specs") {
		t.Errorf("Markdown has a Failed specs section without failures:\n%s", md)
	}
	if strings.Contains(md, "Skipped specs by reason") {
		t.Errorf("Markdown has a skip table without skips:\n%s", md)
	}
	if !strings.Contains(md, "Claims: 1 passed, 0 failed, 0 skipped, 1 not run, 73 not covered (of 75).") {
		t.Errorf("Markdown counts:\n%s", md)
	}
}

func TestMarkdownInterrupted(t *testing.T) {
	r := sampleReport()
	r.SpecialSuiteFailureReasons = []string{"Interrupted by User"}
	md := Summarize(r).Markdown()
	if !strings.HasPrefix(md, "# winconform run: was interrupted (partial report)\n") {
		t.Errorf("Markdown header: %q", strings.SplitN(md, "\n", 2)[0])
	}
}

// A pending spec (PIt, or the Pending decorator) did not fail; Ginkgo does
// not fail the suite for it by default.
func TestMarkdownPendingIsNotAFailure(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		spec("passes", types.SpecStatePassed, "", []string{"claim:NET-01"}),
		spec("not written yet", types.SpecStatePending, "", []string{"claim:NET-02"}),
	}}
	md := Summarize(r).Markdown()
	if strings.Contains(md, "Failed specs") || strings.Contains(md, "not written yet** (pending)") {
		t.Errorf("a pending spec is reported as failed:\n%s", md)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports", "nested")
	s := Summarize(sampleReport())
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("summary.json does not parse: %v", err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("summary.json round trip differs:\n got %+v\nwant %+v", back, s)
	}
	// The JSON uses the documented field names.
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"suite", "succeeded", "specs", "claims", "skipReasons"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("summary.json lacks key %q", k)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != s.Markdown() {
		t.Error("summary.md differs from Markdown()")
	}
}

func TestWriteFailsOnAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Summarize(types.Report{}).Write(f); err == nil {
		t.Error("Write into a path that is a file returned no error")
	}
}

// The skip reason survives Ginkgo's JSON report (what ReportAfterSuite gets
// from parallel processes and what --json-report writes).
func TestSummarizeAfterJSONRoundTrip(t *testing.T) {
	path := writeReports(t, []types.Report{sampleReport()})
	r, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(r)
	if c := claimOf(t, s, "NET-03"); c.Outcome != Skipped || !reflect.DeepEqual(c.Reasons, []string{"no-windows-node"}) {
		t.Errorf("after JSON, NET-03 = %+v", c)
	}
	if s.SkipReasons["no-windows-node"] != 2 {
		t.Errorf("after JSON, SkipReasons = %v", s.SkipReasons)
	}
	if !reflect.DeepEqual(s.Counts(), Summarize(sampleReport()).Counts()) {
		t.Errorf("after JSON, counts %v differ from %v", s.Counts(), Summarize(sampleReport()).Counts())
	}
}
