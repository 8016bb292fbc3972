package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
)

// Write writes a run's report directory dir from its record, Ginkgo's
// report g, as the suite's ReportAfterSuite does: the record itself
// (reports.GinkgoFile), then, from the record read back as every reader
// reads it (the checked model: strict, its invariants checked), the
// summary, the limitation ledger, the cluster's facts, and the run's one
// JUnit file at junit; last, the manifest of what is there (Seal). What
// the views say is what Load gives any reader of the directory,
// violations first. run.json is not required to have ended: the run is
// still writing.
func Write(dir string, g types.Report, junit string) (*Run, error) {
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(reports.GinkgoFile)), 0o755); err != nil {
		return nil, err
	}
	if err := reporters.GenerateJSONReport(g, filepath.Join(dir, reports.GinkgoFile)); err != nil {
		return nil, err
	}
	run, err := read(dir)
	if err != nil {
		return nil, err
	}
	if err := run.WriteViews(dir, junit); err != nil {
		return run, err
	}
	return run, Seal(dir, run.Record.RunID)
}

// WriteViews writes what is derived from the model for people and other
// tools into dir: summary.json and summary.md, the limitation ledger,
// cluster.json, and the JUnit file at junit.
func (r *Run) WriteViews(dir, junit string) error {
	s := r.Summary
	if err := s.Write(dir); err != nil {
		return err
	}
	if err := reports.WriteLedger(dir, s.Stamp, r.Ledger); err != nil {
		return err
	}
	if r.Cluster != nil {
		data, err := json.MarshalIndent(struct {
			version.Stamp
			*facts.Facts
		}{s.Stamp, r.Cluster}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, reports.ClusterFile), data, 0o644); err != nil {
			return err
		}
	}
	if err := reports.WriteJUnit(junit, r.Report, s); err != nil {
		return fmt.Errorf("writing %s: %w", junit, err)
	}
	return nil
}
