package reporttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// Break breaks one invariant of the record's contract (rundir.Invariants)
// in a report directory a consistent run wrote, by hand, as someone
// editing the record would: Apply edits the files in dir. Applies says
// whether the break can be made on run r (a matrix break needs a matrix).
type Break struct {
	Invariant string
	Name      string
	Applies   func(r *Run) bool
	Apply     func(t testing.TB, dir string)
}

// Breaks are the ways this package knows to break each invariant.
var Breaks = []Break{
	{Invariant: rundir.InvRunEntry, Name: "the run entry removed", Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { dropEntries(g, record.RunEntry) })
	}},
	{Invariant: rundir.InvEnded, Name: "the end time removed", Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { g["EndTime"] = "0001-01-01T00:00:00Z" })
	}},
	{Invariant: rundir.InvEnded, Name: "an end before the start", Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { g["EndTime"] = Started.Add(-48 * time.Hour).Format(time.RFC3339) })
	}},
	{Invariant: rundir.InvDryRun, Name: "marked a dry run", Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { g["SuiteConfig"].(map[string]any)["DryRun"] = true })
	}},
	{Invariant: rundir.InvSuiteSuccess, Name: "a failed run said to have succeeded", Applies: hasFailure, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { g["SuiteSucceeded"] = true })
	}},
	{Invariant: rundir.InvSuiteSuccess, Name: "a run whose specs all passed said to have failed", Applies: noFailure, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { g["SuiteSucceeded"] = false })
	}},
	{Invariant: rundir.InvSpecState, Name: "a failed spec's state set to passed, its failure kept", Applies: hasFailure, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			for _, sr := range specs(g) {
				if sr["State"] == "failed" {
					sr["State"] = "passed"
					return
				}
			}
		})
	}},
	{Invariant: rundir.InvSpecState, Name: "a passed spec given a failure", Applies: hasPass, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			for _, sr := range specs(g) {
				if sr["State"] == "passed" && sr["LeafNodeType"] == "It" {
					sr["Failure"] = map[string]any{"Message": "it failed after all", "Location": map[string]any{"FileName": "x_test.go", "LineNumber": 1}}
					return
				}
			}
		})
	}},
	{Invariant: rundir.InvPreRunStats, Name: "a spec removed from a run that succeeded", Applies: noFailure, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { removeIt(g) })
	}},
	{Invariant: rundir.InvPreRunStats, Name: "more specs than Ginkgo counted", Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			stats := g["PreRunStats"].(map[string]any)
			stats["TotalSpecs"] = stats["TotalSpecs"].(float64) - 1
		})
	}},
	{Invariant: rundir.InvPreRunStats, Name: "fewer specs said to run than the selection takes", Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			stats := g["PreRunStats"].(map[string]any)
			stats["SpecsThatWillRun"] = stats["SpecsThatWillRun"].(float64) - 1
		})
	}},
	{Invariant: rundir.InvNodeNames, Name: "one node named twice, simulated and real", Applies: known, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			editEntry(g, record.ClusterEntry, func(fs map[string]any) {
				nodes := fs["nodes"].([]any)
				twin := map[string]any{}
				for k, v := range nodes[0].(map[string]any) {
					twin[k] = v
				}
				twin["simulated"] = true
				fs["nodes"] = append(nodes, twin)
			})
		})
	}},
	{Invariant: rundir.InvReadiness, Name: "the readiness at the end removed", Applies: known, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { dropEntries(g, record.EndEntry) })
	}},
	{Invariant: rundir.InvEvidence, Name: "a Windows record naming a node the cluster lacks", Applies: onWindows, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			editEvidence(g, func(ev map[string]any) bool {
				if ev["level"] != "windows-node" {
					return false
				}
				ev["nodes"] = []any{"win-elsewhere"}
				return true
			})
		})
	}},
	{Invariant: rundir.InvEvidence, Name: "a Linux record naming a Windows node", Applies: onWindows, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			editEvidence(g, func(ev map[string]any) bool {
				if ev["level"] != "linux" {
					return false
				}
				ev["nodes"] = []any{WindowsNodes[0]}
				return true
			})
		})
	}},
	{Invariant: rundir.InvMatrix, Name: "the matrix file removed", Applies: hasMatrix, Apply: func(t testing.TB, dir string) {
		if err := os.Remove(filepath.Join(dir, reports.MatrixFile)); err != nil {
			t.Fatal(err)
		}
		Reseal(t, dir)
	}},
	{Invariant: rundir.InvMatrix, Name: "the matrix file edited", Applies: hasMatrix, Apply: func(t testing.TB, dir string) {
		editJSONFile(t, filepath.Join(dir, reports.MatrixFile), func(m map[string]any) { m["cni"] = "edited" })
	}},
	{Invariant: rundir.InvMatrix, Name: "the matrix entry removed", Applies: hasMatrix, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) { dropEntries(g, record.MatrixEntry) })
	}},
	{Invariant: rundir.InvStart, Name: "a record that starts two hours before its run", Applies: hasRunFile, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			start, _ := time.Parse(time.RFC3339Nano, g["StartTime"].(string))
			g["StartTime"] = start.Add(-2 * time.Hour).Format(time.RFC3339Nano)
		})
	}},
	{Invariant: rundir.InvStart, Name: "run.json of a run that ended before the record did", Applies: hasRunFile, Apply: func(t testing.TB, dir string) {
		editJSONFile(t, filepath.Join(dir, rundir.RunFile), func(m map[string]any) {
			started, _ := time.Parse(time.RFC3339Nano, m["started"].(string))
			m["ended"] = started.Add(time.Minute).Format(time.RFC3339Nano)
		})
	}},
	{Invariant: rundir.InvSkipReasons, Name: "a skip for want of a Windows node on a cluster with a Ready one", Applies: readyWindows, Apply: func(t testing.TB, dir string) {
		EditRecord(t, dir, func(g map[string]any) {
			for _, sr := range specs(g) {
				if sr["LeafNodeType"] == "It" && sr["State"] == "passed" {
					sr["State"] = "skipped"
					sr["Failure"] = map[string]any{"Message": "no Windows node in this cluster", "Location": map[string]any{"FileName": "x_test.go", "LineNumber": 1}}
					var kept []any
					for _, e := range entries(sr) {
						if e["Name"] != "winconform.evidence" && e["Name"] != "winconform.ledger" {
							kept = append(kept, e)
						}
					}
					sr["ReportEntries"] = append(kept, entryJSON("winconform.skip", "no-windows-node"))
					return
				}
			}
		})
	}},
}

func hasFailure(r *Run) bool {
	for _, s := range r.Specs {
		if s.State.Is(types.SpecStateFailureStates) {
			return true
		}
	}
	return r.Interrupted
}

func noFailure(r *Run) bool { return !hasFailure(r) }

func hasPass(r *Run) bool {
	for _, s := range r.Specs {
		if s.State == 0 || s.State == types.SpecStatePassed {
			return true
		}
	}
	return false
}

func known(r *Run) bool      { return r.Facts != nil }
func hasMatrix(r *Run) bool  { return r.Matrix != nil }
func hasRunFile(r *Run) bool { return !r.NoRunFile }

func readyWindows(r *Run) bool {
	if r.Facts == nil || !hasPass(r) {
		return false
	}
	for _, n := range r.Facts.Nodes {
		if n.OS == "windows" && n.Ready && !n.Simulated {
			return true
		}
	}
	return false
}

// onWindows says whether the run has a passing spec with a Windows node
// record and one with a Linux record (the hybrid cluster's).
func onWindows(r *Run) bool {
	win, lin := false, false
	for _, s := range r.Specs {
		for _, e := range s.Evidence {
			win = win || (e.Level == "windows-node" && len(e.Nodes) > 0)
			lin = lin || (e.Level == "linux" && len(e.Nodes) > 0)
		}
	}
	return win && lin && readyWindows(r)
}

// EditRecord edits dir's record (reports.GinkgoFile) as JSON, as a
// person with an editor would: the one suite report it holds. The
// manifest is written again (Reseal), as such a person can: what only
// the record's contract catches must be caught by it.
func EditRecord(t testing.TB, dir string, edit func(g map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, reports.GinkgoFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []map[string]any
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	edit(rs[0])
	out, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	Reseal(t, dir)
}

// Reseal writes dir's manifest again (rundir.Seal) for what dir holds
// now, as anyone who edits a report directory can: a manifest says what
// a directory holds, and only a signed statement that names it says who
// decided on it.
func Reseal(t testing.TB, dir string) {
	t.Helper()
	var m rundir.Manifest
	if data, err := os.ReadFile(filepath.Join(dir, rundir.ManifestFile)); err == nil {
		_ = json.Unmarshal(data, &m)
	}
	if err := rundir.Seal(dir, m.RunID); err != nil {
		t.Fatal(err)
	}
}

func editJSONFile(t testing.TB, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	Reseal(t, filepath.Dir(path))
}

func specs(g map[string]any) []map[string]any {
	var out []map[string]any
	for _, sr := range g["SpecReports"].([]any) {
		out = append(out, sr.(map[string]any))
	}
	return out
}

func entries(sr map[string]any) []map[string]any {
	var out []map[string]any
	es, _ := sr["ReportEntries"].([]any)
	for _, e := range es {
		out = append(out, e.(map[string]any))
	}
	return out
}

// entryJSON is a report entry as Ginkgo writes it: the value twice.
func entryJSON(name, value string) map[string]any {
	asJSON, _ := json.Marshal(value)
	return map[string]any{"Name": name, "Time": Started.Format(time.RFC3339), "Location": map[string]any{"FileName": "x_test.go", "LineNumber": 1},
		"Value": map[string]any{"AsJSON": string(asJSON), "Representation": value}}
}

// SetEntryValue sets entry e's value, both as Ginkgo keeps it.
func SetEntryValue(e map[string]any, value string) {
	asJSON, _ := json.Marshal(value)
	e["Value"] = map[string]any{"AsJSON": string(asJSON), "Representation": value}
}

func dropEntries(g map[string]any, name string) {
	for _, sr := range specs(g) {
		var kept []any
		for _, e := range entries(sr) {
			if e["Name"] != name {
				kept = append(kept, e)
			}
		}
		sr["ReportEntries"] = kept
	}
}

// editEntry edits the value of every entry name holds as a JSON object.
func editEntry(g map[string]any, name string, edit func(map[string]any)) {
	for _, sr := range specs(g) {
		for _, e := range entries(sr) {
			if e["Name"] != name {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(e["Value"].(map[string]any)["Representation"].(string)), &v); err != nil {
				panic(err)
			}
			edit(v)
			data, _ := json.Marshal(v)
			SetEntryValue(e, string(data))
		}
	}
}

// editEvidence edits the first evidence record of a passing It that edit
// takes (returns true for).
func editEvidence(g map[string]any, edit func(map[string]any) bool) {
	for _, sr := range specs(g) {
		if sr["State"] != "passed" {
			continue
		}
		for _, e := range entries(sr) {
			if e["Name"] != "winconform.evidence" {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(e["Value"].(map[string]any)["Representation"].(string)), &v); err != nil {
				panic(err)
			}
			if edit(v) {
				data, _ := json.Marshal(v)
				SetEntryValue(e, string(data))
				return
			}
		}
	}
}

// removeIt removes the last It spec from the record.
func removeIt(g map[string]any) {
	srs := g["SpecReports"].([]any)
	for i := len(srs) - 1; i >= 0; i-- {
		if srs[i].(map[string]any)["LeafNodeType"] == "It" {
			g["SpecReports"] = append(srs[:i:i], srs[i+1:]...)
			return
		}
	}
}
