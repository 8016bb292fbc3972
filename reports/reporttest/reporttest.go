// Package reporttest builds report directories for tests of the packages
// that read them (gate, diff, html): a summary of the whole catalogue, with
// the outcomes a test names, and optionally a network matrix, a ledger and
// Ginkgo's report.
package reporttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
)

// Claim is what a test sets of one claim's result.
type Claim struct {
	Outcome     string
	Evidence    map[claims.Level]int
	SupportedBy []string
	Why         string
	// Shown are the showing specs by level and build; when nil, a shown
	// claim's are its Evidence at the levels that show it (on Windows, of
	// an unrecorded build).
	Shown []reports.Showing
}

// Shown is a claim shown at level.
func Shown(level claims.Level) Claim {
	return Claim{Outcome: reports.Shown, Evidence: map[claims.Level]int{level: 1}}
}

// Twin is a claim only supported by a Linux twin.
func Twin() Claim {
	return Claim{Outcome: reports.Supported, Evidence: map[claims.Level]int{claims.Linux: 1}, SupportedBy: []string{"linux twin"}, Why: "linux twin"}
}

// LinuxCluster is the default kind cluster: two Linux nodes, no Windows node.
var LinuxCluster = reports.ClusterView{Known: true, ServerVersion: "v1.37.2", CNI: "flannel/vxlan", LinuxNodes: 2}

// HybridCluster has two Linux nodes and two Windows nodes of build 10.0.20348.
var HybridCluster = reports.ClusterView{Known: true, ServerVersion: "v1.37.2", CNI: "flannel/vxlan", LinuxNodes: 2, WindowsNodes: 2, WindowsBuilds: []string{"10.0.20348"}}

// Summary is a summary of every claim of the catalogue: each skipped
// (no-windows-node) unless set names it.
func Summary(cluster reports.ClusterView, set map[string]Claim, specs ...reports.Spec) reports.Summary {
	s := reports.Summary{Format: reports.Format, Suite: "winconform", Succeeded: true, Cluster: cluster, Stamp: version.For(NewRunID()),
		Status: "succeeded", Headline: "Shown: test headline", Outcomes: map[string]int{}, SupportedBy: map[string]int{}, SkipReasons: map[string]int{}, Specs: specs}
	for _, c := range claims.All() {
		cl := Claim{Outcome: reports.Skipped, Why: "no-windows-node"}
		if v, ok := set[c.ID]; ok {
			cl = v
		}
		ev := cl.Evidence
		if ev == nil {
			ev = map[claims.Level]int{}
		}
		shown := cl.Shown
		if shown == nil && cl.Outcome == reports.Shown {
			for _, l := range claims.Levels {
				if n := ev[l]; n > 0 && c.Level.Shows(l) {
					sh := reports.Showing{Level: l, Specs: n}
					if l.OnWindows() {
						sh.Build = evidence.Unrecorded
					}
					shown = append(shown, sh)
				}
			}
		}
		r := reports.Claim{ID: c.ID, Kind: string(c.Kind), Level: c.Level, Title: c.Title, Outcome: cl.Outcome, Why: cl.Why,
			Evidence: ev, Specs: map[string]int{}, SupportedBy: cl.SupportedBy, Shown: shown}
		if cl.Outcome == reports.Skipped {
			r.SkipReasons = []string{"no-windows-node"}
		}
		s.Claims = append(s.Claims, r)
		s.Outcomes[cl.Outcome]++
		if cl.Outcome == reports.Shown {
			s.Shown++
		}
		if cl.Outcome == reports.Failed || cl.Outcome == reports.Blocked {
			s.Succeeded = false
			s.Status = "failed"
		}
	}
	s.Total = len(s.Claims)
	return s
}

var runs atomic.Int64

// NewRunID is a run ID of its own for each report directory a test makes,
// shaped as the CLI's (wc-<time>-<random>).
func NewRunID() string {
	return fmt.Sprintf("wc-20260301t120000-%08x", runs.Add(1))
}

// Dir is a report directory's contents.
type Dir struct {
	Summary reports.Summary
	Matrix  *netmatrix.Report
	Ledger  []reports.LedgerEntry
	// Retried names specs that passed on their second attempt (Ginkgo's report).
	Retried []string
	// Specs go into Ginkgo's report as they are, after Retried's.
	Specs []types.SpecReport
}

// Write writes d into a new temporary directory and returns it.
func Write(t testing.TB, d Dir) string {
	t.Helper()
	dir := t.TempDir()
	WriteTo(t, dir, d)
	return dir
}

// WriteTo writes d into dir.
func WriteTo(t testing.TB, dir string, d Dir) {
	t.Helper()
	if err := d.Summary.Write(dir); err != nil {
		t.Fatal(err)
	}
	if d.Matrix != nil {
		m := *d.Matrix
		if m.RunID == "" {
			m.Stamp = d.Summary.Stamp
		}
		writeJSON(t, filepath.Join(dir, "network-matrix.json"), &m)
	}
	if d.Ledger != nil {
		if err := reports.WriteLedger(dir, d.Summary.Stamp, d.Ledger); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.Retried) > 0 || len(d.Specs) > 0 {
		r := types.Report{SuiteDescription: "winconform"}
		for _, name := range d.Retried {
			r.SpecReports = append(r.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: name, State: types.SpecStatePassed, NumAttempts: 2})
		}
		r.SpecReports = append(r.SpecReports, d.Specs...)
		if err := os.MkdirAll(filepath.Join(dir, "ginkgo"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, filepath.Join(dir, "ginkgo", "report.json"), []types.Report{r})
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Cell is a matrix cell.
func Cell(source, target string, verdict netmatrix.Verdict, observed netmatrix.Observation, ids ...string) *netmatrix.Cell {
	return &netmatrix.Cell{Source: source, Target: target, Claims: ids, Expect: netmatrix.Expectation{Reachable: true},
		Observed: observed, Verdict: verdict, Repro: "kubectl exec " + source + " -- /probe connect " + target}
}
