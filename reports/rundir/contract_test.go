package rundir_test

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// consistentRuns are runs whose records keep their contract: the ideal
// hybrid run with a network matrix, the default Linux run, one with
// failures, one whose suite ran without the CLI (no run.json).
func consistentRuns() map[string]func() *reporttest.Run {
	return map[string]func() *reporttest.Run{
		"hybrid with a matrix": func() *reporttest.Run {
			r := reporttest.IdealHybrid()
			r.Matrix = &netmatrix.Report{ServerVersion: reporttest.Server, CNI: reporttest.CNI,
				Cells: []*netmatrix.Cell{reporttest.Cell("linux-a", "win-b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-01")}}
			return r
		},
		"linux": reporttest.Linux,
		"linux, two failures": func() *reporttest.Run {
			r := reporttest.Linux()
			r.Fail("NET-07", "no route")
			r.Block("NET-16", "BeforeAll failed")
			return r
		},
		"hybrid, no run.json": func() *reporttest.Run {
			r := reporttest.IdealHybrid()
			r.NoRunFile = true
			return r
		},
	}
}

func violations(r *rundir.Run) []string {
	var out []string
	for _, v := range r.Summary.Violations {
		out = append(out, v.Invariant)
	}
	return out
}

// Every run the harness writes keeps its record's contract.
func TestConsistentRunsKeepTheContract(t *testing.T) {
	for name, make := range consistentRuns() {
		run, err := rundir.Load(make().Write(t))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if vs := run.Summary.Violations; len(vs) > 0 {
			t.Errorf("%s breaks its contract: %v", name, vs)
		}
	}
}

// Each invariant is checked at load, with its own name: every way this
// project knows to break one (reporttest.Breaks), on every run it applies
// to, loads with that invariant named among the violations, and every
// view says so first (the summary's status, the JUnit's violations).
// Before the checked model each of these loaded clean.
func TestEachInvariantIsCheckedByName(t *testing.T) {
	covered := map[string]bool{}
	for _, b := range reporttest.Breaks {
		for name, make := range consistentRuns() {
			r := make()
			if b.Applies != nil && !b.Applies(r) {
				continue
			}
			covered[b.Invariant] = true
			t.Run(b.Invariant+"/"+b.Name+"/"+name, func(t *testing.T) {
				dir := r.Write(t)
				b.Apply(t, dir)
				run, err := rundir.Load(dir)
				if err != nil {
					t.Fatalf("refused outright (want a violation of %s): %v", b.Invariant, err)
				}
				if !slices.Contains(violations(run), b.Invariant) {
					t.Fatalf("violations %v, want %s among them", run.Summary.Violations, b.Invariant)
				}
				if !strings.Contains(run.Summary.Status, "breaks its contract") || !strings.Contains(run.Summary.Status, b.Invariant) ||
					!strings.HasPrefix(run.Summary.Headline, "NO VERDICT") {
					t.Errorf("the status %q and headline %q do not say the record breaks %s", run.Summary.Status, run.Summary.Headline, b.Invariant)
				}
				junit := filepath.Join(t.TempDir(), reports.JUnitFile)
				if err := run.WriteViews(t.TempDir(), junit); err != nil {
					t.Fatal(err)
				}
				data, _ := os.ReadFile(junit)
				if page := html.UnescapeString(string(data)); !strings.Contains(page, reports.ContractCase) || !strings.Contains(page, b.Invariant+":") {
					t.Errorf("the JUnit has no failed case naming %s", b.Invariant)
				}
			})
		}
	}
	for _, inv := range rundir.Invariants {
		if !covered[inv.Name] {
			t.Errorf("invariant %s: no break of it is tested", inv.Name)
		}
	}
}

// The contract is written down: docs/record.md names every invariant, and
// no other.
func TestTheContractIsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/record.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, inv := range rundir.Invariants {
		if !strings.Contains(doc, "`"+inv.Name+"`") {
			t.Errorf("docs/record.md does not name the invariant %s (%s)", inv.Name, inv.Rule)
		}
	}
}

// Decoding is strict: the record is read as written, or refused naming
// what a lenient reader would have taken silently.
func TestStrictDecodingRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
	}{
		{"a key the record's types lack", func(t *testing.T, dir string) {
			reporttest.EditRecord(t, dir, func(g map[string]any) { g["ShipIt"] = true })
		}, "ShipIt"},
		{"\"State\" and \"state\" in one spec", func(t *testing.T, dir string) {
			path := filepath.Join(dir, reports.GinkgoFile)
			data, _ := os.ReadFile(path)
			out := strings.Replace(string(data), `"State": "failed"`, `"State": "failed", "state": "passed"`, 1)
			if out == string(data) {
				t.Fatal("no failed spec to edit")
			}
			os.WriteFile(path, []byte(out), 0o644)
		}, `"State" and "state"`},
		{"a key written twice", func(t *testing.T, dir string) {
			path := filepath.Join(dir, reports.GinkgoFile)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, []byte(strings.Replace(string(data), `"SuiteSucceeded": false`, `"SuiteSucceeded": false, "SuiteSucceeded": true`, 1)), 0o644)
		}, "written twice"},
		{"an entry whose two values differ", func(t *testing.T, dir string) {
			reporttest.EditRecord(t, dir, func(g map[string]any) {
				for _, sr := range g["SpecReports"].([]any) {
					for _, e := range sr.(map[string]any)["ReportEntries"].([]any) {
						e := e.(map[string]any)
						if e["Name"] == "winconform.evidence" {
							v := e["Value"].(map[string]any)
							asJSON, _ := json.Marshal(`{"level":"api"}`)
							v["AsJSON"] = string(asJSON)
							return
						}
					}
				}
			})
		}, "AsJSON and its Representation differ"},
		{"an evidence record with a key records lack", func(t *testing.T, dir string) {
			reporttest.EditRecord(t, dir, func(g map[string]any) {
				for _, sr := range g["SpecReports"].([]any) {
					for _, e := range sr.(map[string]any)["ReportEntries"].([]any) {
						e := e.(map[string]any)
						if e["Name"] == "winconform.evidence" {
							reporttest.SetEntryValue(e, `{"level":"linux","nodes":["cp"],"verdict":"shown"}`)
							return
						}
					}
				}
			})
		}, "verdict"},
		{"an evidence record that is no JSON", func(t *testing.T, dir string) {
			reporttest.EditRecord(t, dir, func(g map[string]any) {
				for _, sr := range g["SpecReports"].([]any) {
					for _, e := range sr.(map[string]any)["ReportEntries"].([]any) {
						e := e.(map[string]any)
						if e["Name"] == "winconform.evidence" {
							reporttest.SetEntryValue(e, `windows-node on win-1`)
							return
						}
					}
				}
			})
		}, "evidence entry"},
		{"a skip reason the harness does not have", func(t *testing.T, dir string) {
			reporttest.EditRecord(t, dir, func(g map[string]any) {
				for _, sr := range g["SpecReports"].([]any) {
					for _, e := range sr.(map[string]any)["ReportEntries"].([]any) {
						e := e.(map[string]any)
						if e["Name"] == "winconform.skip" {
							reporttest.SetEntryValue(e, "trust-me")
							return
						}
					}
				}
			})
		}, `"trust-me" is none the harness has`},
		{"a run entry with a key it lacks", func(t *testing.T, dir string) {
			reporttest.EditRecord(t, dir, func(g map[string]any) {
				for _, sr := range g["SpecReports"].([]any) {
					for _, e := range sr.(map[string]any)["ReportEntries"].([]any) {
						e := e.(map[string]any)
						if e["Name"] == "winconform.run" {
							var v map[string]any
							json.Unmarshal([]byte(e["Value"].(map[string]any)["Representation"].(string)), &v)
							v["verdict"] = "ship"
							data, _ := json.Marshal(v)
							reporttest.SetEntryValue(e, string(data))
						}
					}
				}
			})
		}, "verdict"},
		{"a second document after the record", func(t *testing.T, dir string) {
			path := filepath.Join(dir, reports.GinkgoFile)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, append(data, []byte("\n[]")...), 0o644)
		}, "half written"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := reporttest.Linux()
			r.Fail("NET-07", "no route")
			r.Skip("NET-16", "no-load-balancer")
			dir := r.Write(t)
			c.edit(t, dir)
			_, err := rundir.Load(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("loaded (%v), want it refused saying %q", err, c.want)
			}
		})
	}
}
