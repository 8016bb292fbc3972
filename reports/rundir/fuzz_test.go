package rundir_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/gate"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// The loader takes any bytes as a record: it refuses them, or loads a
// model the same way twice, whose views can be written, and that the gate
// ships only when the record keeps its contract and the run is complete.
// Never a panic. The seeds are records the harness writes; `go test
// -fuzz=FuzzLoad ./reports/rundir` searches further.
func FuzzLoad(f *testing.F) {
	for _, r := range []*reporttest.Run{reporttest.Linux(), reporttest.IdealHybrid()} {
		r.Fail("NET-07", "no route")
		dir := r.Write(f)
		data, err := os.ReadFile(filepath.Join(dir, reports.GinkgoFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"SuiteSucceeded": true, "SpecReports": []}]`))
	f.Add([]byte(`[{"SpecReports": [{"LeafNodeType": "It", "State": "passed", "ReportEntries": [{"Name": "winconform.evidence", "Value": {"AsJSON": "\"x\"", "Representation": "x"}}]}]}]`))
	p, err := policy.Load("../../policies/linux-only.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "ginkgo"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, reports.GinkgoFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := rundir.Load(dir)
		if err != nil {
			return
		}
		again, err := rundir.Load(dir)
		if err != nil || again.Digest != run.Digest || again.Summary.Status != run.Summary.Status || len(again.Summary.Claims) != len(run.Summary.Claims) {
			t.Fatalf("loaded twice, two models: %v", err)
		}
		if err := run.WriteViews(t.TempDir(), filepath.Join(t.TempDir(), reports.JUnitFile)); err != nil {
			t.Fatalf("the views of a loaded model: %v", err)
		}
		start := run.Started
		if start.IsZero() || start.Year() < 2000 || start.Year() > 3000 {
			start = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		}
		res, err := gate.Decide(gate.Input{Policy: p, PolicyFile: "linux-only.yaml", Run: run, Now: start.Add(24 * time.Hour)})
		if err == nil && !res.Blocked() && (len(run.Summary.Violations) > 0 || len(run.Incomplete()) > 0 || !run.Recorded) {
			t.Fatalf("SHIP for a record that breaks its contract or ran incompletely: %v %v", run.Summary.Violations, run.Incomplete())
		}
	})
}
