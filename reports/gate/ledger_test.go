package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/testing/reporttest"
)

// The record as one ledger (issue 37): inputs of our own making, by kind,
// that a gate reading the record as files that each look fine shipped or
// misread. Each goes through Evaluate (files in, decision out) and must
// block for its reason or be refused naming it.
func TestHostileRecordsNeverShip(t *testing.T) {
	winPolicy := filepath.Join("..", "..", "policies", "windows-node-build.yaml")
	requireNET07 := "name: x\nrequired:\n- claims: [NET-07]\n"
	issue := func(subject string) string {
		return "knownIssues:\n- " + subject + "\n  reason: accepted\n  link: https://example.com/issues/1\n  expires: 2026-12-31\n"
	}
	neverRan := func(n int) func(r *reporttest.Run) {
		return func(r *reporttest.Run) {
			cut := 0
			for i := len(r.Specs) - 1; i >= 0 && cut < n; i-- {
				if slices.Contains(r.Specs[i].Labels, "claim:NET-07") {
					continue
				}
				r.Specs[i] = reporttest.Spec{Name: r.Specs[i].Name, Labels: r.Specs[i].Labels, State: types.SpecStateSkipped}
				cut++
			}
		}
	}
	cases := []struct {
		kind, name string
		run        func() *reporttest.Run // IdealHybrid when nil
		edit       func(r *reporttest.Run)
		tamper     func(t *testing.T, dir string)
		baseline   func(t *testing.T) string
		policy     string // windows-node-build.yaml when empty
		now        string
		block      string // a blocking reason, or
		refuse     string // what the refusal says
	}{
		// Incomplete runs: what never ran is unseen.
		{kind: "incomplete", name: "--fail-fast: 33 specs never ran, the required claim passed", edit: func(r *reporttest.Run) {
			r.Fail("NET-16", "no route")
			neverRan(33)(r)
		}, policy: requireNET07 + "otherFailures: report\n", block: "the run is incomplete: 33 selected spec(s) never ran"},
		{kind: "incomplete", name: "a spec aborted the suite, the rest never ran", edit: func(r *reporttest.Run) {
			r.One("NET-16").State, r.One("NET-16").Message = types.SpecStateAborted, "Abort() called: the cluster is gone"
			neverRan(10)(r)
		}, policy: requireNET07 + "otherFailures: report\n", block: "the run is incomplete"},
		{kind: "incomplete", name: "a parallel run cut short: specs Ginkgo counted are absent", run: reporttest.IdealHybrid, tamper: func(t *testing.T, d string) {
			reporttest.EditRecord(t, d, func(g map[string]any) {
				g["SuiteSucceeded"] = false
				g["SpecialSuiteFailureReasons"] = []any{"Aborted by a spec"}
				srs := g["SpecReports"].([]any)
				g["SpecReports"] = srs[:len(srs)-20]
				if end := srs[len(srs)-1].(map[string]any); end["LeafNodeType"] == "SynchronizedAfterSuite" {
					g["SpecReports"] = append(g["SpecReports"].([]any), end)
				}
			})
		}, policy: requireNET07, block: "counted before the run (PreRunStats) and absent from the record"},
		{kind: "incomplete", name: "one spec skipped without any reason", edit: func(r *reporttest.Run) {
			r.One("NET-16").State = types.SpecStateSkipped
			r.One("NET-16").Evidence = nil
		}, policy: requireNET07, block: "1 selected spec(s) never ran"},

		// Records whose parts disagree.
		{kind: "disagree", name: "a failed spec's state set to passed, its failure and the suite's failure kept", edit: func(r *reporttest.Run) {
			r.Fail("NET-07", "no route")
		}, tamper: func(t *testing.T, d string) {
			reporttest.EditRecord(t, d, func(g map[string]any) {
				for _, sr := range g["SpecReports"].([]any) {
					if sr := sr.(map[string]any); sr["State"] == "failed" {
						sr["State"] = "passed"
					}
				}
			})
		}, policy: requireNET07, refuse: "invariant spec-state"},
		{kind: "disagree", name: "a spec removed while PreRunStats counts it", edit: func(r *reporttest.Run) {
			r.Specs = append(r.Specs, reporttest.Spec{Name: "removed later", Labels: []string{"claim:NET-07"}, State: types.SpecStateFailed, Message: "no route"})
		}, tamper: func(t *testing.T, d string) {
			reporttest.EditRecord(t, d, func(g map[string]any) {
				g["SuiteSucceeded"] = true
				var kept []any
				for _, sr := range g["SpecReports"].([]any) {
					if !strings.Contains(sr.(map[string]any)["LeafNodeText"].(string), "removed later") {
						kept = append(kept, sr)
					}
				}
				g["SpecReports"] = kept
			})
		}, policy: requireNET07, refuse: "invariant pre-run-stats"},
		{kind: "disagree", name: "\"State\" and \"state\" both present", edit: func(r *reporttest.Run) { r.Fail("NET-07", "no route") }, tamper: func(t *testing.T, d string) {
			path := filepath.Join(d, "ginkgo", "report.json")
			data, _ := os.ReadFile(path)
			must(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"State": "failed"`, `"State": "failed", "state": "passed"`, 1)), 0o644))
		}, policy: requireNET07, refuse: `"State" and "state"`},
		{kind: "disagree", name: "the facts name a node twice, once simulated and once real", edit: func(r *reporttest.Run) {
			r.Facts.Nodes = append(r.Facts.Nodes, facts.Node{Name: "win-1", OS: "windows", Ready: true, Simulated: true, WindowsBuild: reporttest.Build})
		}, refuse: "invariant node-names"},
		{kind: "disagree", name: "the matrix file replaced by a kinder one", edit: func(r *reporttest.Run) {
			r.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("linux-a", "win-b/pod-ip", netmatrix.Regression, netmatrix.Blocked, "NET-01")}}
		}, tamper: func(t *testing.T, d string) {
			path := filepath.Join(d, "network-matrix.json")
			data, _ := os.ReadFile(path)
			must(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(data), `"regression"`, `"ok"`)), 0o644))
		}, refuse: "invariant matrix"},
		{kind: "disagree", name: "Windows records on a cluster whose Windows nodes were all simulated", edit: func(r *reporttest.Run) {
			for i := range r.Facts.Nodes {
				r.Facts.Nodes[i].Simulated = r.Facts.Nodes[i].OS == "windows"
			}
		}, refuse: "which is simulated (kwok)"},
		{kind: "disagree", name: "a skip for want of a Windows node beside Ready ones", edit: func(r *reporttest.Run) { r.Skip("NET-03", "no-windows-node") },
			refuse: "invariant skip-reasons"},
		{kind: "disagree", name: "a record that starts a day before its run", tamper: func(t *testing.T, d string) {
			reporttest.EditRecord(t, d, func(g map[string]any) { g["StartTime"] = reporttest.Started.Add(-24 * time.Hour).Format(time.RFC3339) })
		}, refuse: "invariant start"},

		// A claim label the catalogue lacks.
		{kind: "unknown claim", name: "a failed spec labelled WEB-2O", edit: func(r *reporttest.Run) {
			r.Specs = append(r.Specs, reporttest.Spec{Name: "web typo", Labels: []string{"claim:WEB-2O"}, State: types.SpecStateFailed, Message: "500", Evidence: []reporttest.Ev{reporttest.OnWindows()}})
		}, policy: requireNET07 + "otherFailures: report\n", block: "claim:WEB-2O, which the catalogue lacks"},
		{kind: "unknown claim", name: "a passing spec labelled WEB-2O and NET-07", edit: func(r *reporttest.Run) {
			r.One("NET-07").Labels = append(r.One("NET-07").Labels, "claim:WEB-2O")
		}, policy: requireNET07 + "otherFailures: report\n", block: "NET-07 failed"},

		// Nodes count when Ready at the run's start and end.
		{kind: "readiness", name: "a Windows node NotReady for the whole run", edit: func(r *reporttest.Run) {
			r.Facts.Nodes[3].Ready = false
			r.End = endReady(r, map[string]bool{"win-2": false})
			for i := range r.Specs {
				for j := range r.Specs[i].Evidence {
					r.Specs[i].Evidence[j].Nodes = dropNode(r.Specs[i].Evidence[j].Nodes, "win-2")
				}
			}
		}, block: "the cluster had 1 real Windows node(s); the policy needs at least 2"},
		{kind: "readiness", name: "a Windows node gone NotReady by the end", edit: func(r *reporttest.Run) {
			r.End = endReady(r, map[string]bool{"win-2": false})
		}, block: "the policy needs at least 2"},
		{kind: "readiness", name: "no readiness recorded at the end", edit: func(r *reporttest.Run) { r.NoEnd = true }, refuse: "invariant readiness"},

		// Waivers apply to observed failures of what they name, alone.
		{kind: "waiver", name: "a claim waiver over an observed failure and a blocked spec of the claim", edit: func(r *reporttest.Run) {
			r.Set("NET-07", reporttest.Spec{Name: "NET-07 a", State: types.SpecStateFailed, Message: "no route", Evidence: []reporttest.Ev{reporttest.OnLinux()}},
				reporttest.Spec{Name: "NET-07 b", State: types.SpecStateFailed, FailedIn: types.NodeTypeBeforeAll, Message: "BeforeAll failed"})
		}, policy: requireNET07 + issue("claim: NET-07"), block: "every spec of the claim that did not pass is an observed failure"},
		{kind: "waiver", name: "a claim waiver over an observed failure and a spec that never ran", edit: func(r *reporttest.Run) {
			r.Set("NET-07", reporttest.Spec{Name: "NET-07 a", State: types.SpecStateFailed, Message: "no route", Evidence: []reporttest.Ev{reporttest.OnLinux()}},
				reporttest.Spec{Name: "NET-07 b", State: types.SpecStateSkipped})
		}, policy: requireNET07 + issue("claim: NET-07"), block: "\"[synthetic] NET-07 b\" never ran"},
		{kind: "waiver", name: "a claim waiver over an observed failure and a Linux-twin failure", edit: func(r *reporttest.Run) {
			r.Set("WEB-01", reporttest.Spec{Name: "WEB-01 windows", State: types.SpecStateFailed, Message: "500", Evidence: []reporttest.Ev{reporttest.OnWindows()}},
				reporttest.Spec{Name: "WEB-01 twin", Labels: []string{"os:linux"}, State: types.SpecStateFailed, Message: "500", Evidence: []reporttest.Ev{reporttest.OnLinux()}})
		}, policy: "name: x\nrequired:\n- claims: [WEB-01]\n" + issue("claim: WEB-01"), block: "failed where the policy does not look"},
		{kind: "waiver", name: "a spec waiver naming a spec of two claims", edit: func(r *reporttest.Run) {
			r.One("NET-05").Labels = append(r.One("NET-05").Labels, "claim:NET-06")
			r.Fail("NET-05", "no route")
		}, policy: requireNET07 + issue("spec: \"[synthetic] NET-05 on the cluster\""), block: "carries the claims NET-05, NET-06"},
		{kind: "waiver", name: "--now a day before today", edit: func(r *reporttest.Run) { r.Fail("NET-07", "no route") },
			policy: requireNET07 + issue("claim: NET-07"), now: "2026-02-28", refuse: "never back"},

		// Baselines are runs, checked as runs, and earlier.
		{kind: "baseline", name: "a baseline that started a week after the run", baseline: func(t *testing.T) string {
			b := reporttest.IdealHybrid()
			b.Start = reporttest.Started.Add(7 * 24 * time.Hour)
			return b.Write(t)
		}, refuse: "not before the run it is the baseline of"},
		{kind: "baseline", name: "a dry run as the baseline", baseline: func(t *testing.T) string {
			dir := reporttest.IdealHybrid().AsBaseline().Write(t)
			reporttest.EditRecord(t, dir, func(g map[string]any) { g["SuiteConfig"].(map[string]any)["DryRun"] = true })
			return dir
		}, refuse: "invariant not-dry-run"},
		{kind: "baseline", name: "a baseline whose suite says it succeeded over a failure", baseline: func(t *testing.T) string {
			b := reporttest.IdealHybrid().AsBaseline()
			b.Fail("NET-07", "no route")
			dir := b.Write(t)
			reporttest.EditRecord(t, dir, func(g map[string]any) { g["SuiteSucceeded"] = true })
			return dir
		}, refuse: "invariant suite-success"},
		{kind: "baseline", name: "a claim the baseline's catalogue lacks, failing now", edit: func(r *reporttest.Run) { r.Fail("NET-16", "no route") },
			baseline: func(t *testing.T) string {
				b := reporttest.IdealHybrid().AsBaseline()
				b.Catalogue = "sha256:00000000000000aa"
				dir := b.Write(t)
				reporttest.EditRecord(t, dir, func(g map[string]any) {
					for _, sr := range g["SpecReports"].([]any) {
						for _, e := range sr.(map[string]any)["ReportEntries"].([]any) {
							if e := e.(map[string]any); e["Name"] == "winconform.run" {
								v := e["Value"].(map[string]any)["Representation"].(string)
								reporttest.SetEntryValue(e, strings.Replace(v, `"NET-16",`, "", 1))
							}
						}
					}
				})
				return dir
			}, policy: requireNET07 + "otherFailures: report\n", block: "newly failing since the baseline"},
	}
	counts := map[string]int{}
	for _, c := range cases {
		counts[c.kind]++
		t.Run(c.kind+": "+c.name, func(t *testing.T) {
			r := reporttest.IdealHybrid()
			if c.run != nil {
				r = c.run()
			}
			if c.edit != nil {
				c.edit(r)
			}
			dir := r.Write(t)
			if c.tamper != nil {
				c.tamper(t, dir)
				reporttest.Reseal(t, dir) // as anyone can: the contract must catch it
			}
			pol := winPolicy
			if c.policy != "" {
				pol = filepath.Join(t.TempDir(), "policy.yaml")
				must(t, os.WriteFile(pol, []byte(c.policy), 0o644))
			}
			o := Options{Report: dir, Policy: pol, Now: c.now, Clock: func() time.Time { return today }}
			if c.baseline != nil {
				o.Baseline = c.baseline(t)
			}
			res, err := Evaluate(o)
			switch {
			case c.refuse != "":
				if err == nil || !strings.Contains(err.Error(), c.refuse) {
					t.Errorf("decided %s (%v), want it refused saying %q", res.Decision, err, c.refuse)
				}
			case err != nil:
				t.Fatalf("refused: %v; want BLOCKED saying %q", err, c.block)
			case !res.Blocked():
				t.Errorf("SHIP; want BLOCKED saying %q", c.block)
			case !hasReason(res, c.block):
				t.Errorf("blocked for %q; want a reason saying %q", res.Reasons, c.block)
			}
		})
	}
	t.Logf("hostile records by kind: %v", counts)
}

// endReady is the run's readiness at its end: each node of its facts as
// Ready as at the start, but those in change.
func endReady(r *reporttest.Run, change map[string]bool) *facts.Readiness {
	end := &facts.Readiness{}
	for _, n := range r.Facts.Nodes {
		ready := n.Ready
		if v, ok := change[n.Name]; ok {
			ready = v
		}
		end.Nodes = append(end.Nodes, facts.NodeReadiness{Name: n.Name, Ready: ready})
	}
	return end
}
