// Package rundir reads a run's report directory back: the summary (which
// must be there, of this winconform's format), and when the run wrote them
// the cluster's facts, the network matrix, the limitation ledger and
// Ginkgo's own report (for specs that passed only on a retry). The gate, the
// baseline diff and the HTML report read a run through it, so that every one
// of them refuses the same bad directories with the same errors: each names
// the file and the fix.
package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
)

// Files of a report directory, as the suites write them.
const (
	SummaryFile = "summary.json"
	ClusterFile = "cluster.json"
	MatrixFile  = "network-matrix.json"
	LedgerFile  = "limitations.json"
	GinkgoFile  = "ginkgo/report.json"
	// UnderlayFile is the underlay check's report, which winconform e2e
	// writes beside them when machines joined through the underlay.
	UnderlayFile = "underlay-check.json"
)

// Run is one run's report directory, read.
type Run struct {
	Dir     string
	Summary reports.Summary
	// Cluster is nil when the run never reached the cluster.
	Cluster *facts.Facts
	// Matrix is nil when the run did not probe the network matrix.
	Matrix *netmatrix.Report
	// Ledger is nil when the run wrote no limitations.json.
	Ledger []reports.LedgerEntry
	// Retried lists the specs that passed only on a retry (Ginkgo's
	// --flake-attempts): flaky specs.
	Retried []string
	// Specs are the run's It specs with their run times, slowest first
	// (empty when the run wrote no Ginkgo report).
	Specs []SpecTime
}

// SpecTime is one spec's run time, as Ginkgo's report has it: its set-up
// (BeforeEach, JustBeforeEach) and clean-up (AfterEach, DeferCleanup)
// included, per-process set-up (SynchronizedBeforeSuite) not.
type SpecTime struct {
	Spec  string        `json:"spec"`
	State string        `json:"state"`
	Took  time.Duration `json:"took"`
}

// Load reads the report directory dir. Its run must have ended (a run
// killed before its end is refused, CheckFinished), the summary must be
// there and complete; the other files are read when present, and refused when half
// written.
func Load(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such report directory: pass the directory a run wrote (`make e2e` writes _output/report, `make test` _output/test-report)", dir)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s is a file, not a report directory: pass the directory that holds summary.json", dir)
	}
	if err := CheckFinished(dir); err != nil {
		return nil, err
	}
	if err := checkComplete(filepath.Join(dir, SummaryFile)); err != nil {
		return nil, err
	}
	s, err := reports.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, Summary: s}
	var f struct {
		version.Stamp
		facts.Facts
	}
	if ok, err := readJSON(dir, ClusterFile, &f); err != nil {
		return nil, err
	} else if ok {
		if err := sameRun(dir, ClusterFile, s.RunID, f.RunID); err != nil {
			return nil, err
		}
		r.Cluster = &f.Facts
	}
	var m netmatrix.Report
	if ok, err := readJSON(dir, MatrixFile, &m); err != nil {
		return nil, err
	} else if ok {
		if err := sameRun(dir, MatrixFile, s.RunID, m.RunID); err != nil {
			return nil, err
		}
		r.Matrix = &m
	}
	var ledger json.RawMessage
	if ok, err := readJSON(dir, LedgerFile, &ledger); err != nil {
		return nil, err
	} else if ok {
		lf, err := reports.DecodeLedger(ledger)
		if err != nil {
			return nil, fmt.Errorf("%s: not the layout this winconform writes (%v): rerun the suites with this version", filepath.Join(dir, LedgerFile), err)
		}
		if err := sameRun(dir, LedgerFile, s.RunID, lf.RunID); err != nil {
			return nil, err
		}
		if lf.Entries == nil {
			lf.Entries = []reports.LedgerEntry{}
		}
		r.Ledger = lf.Entries
	}
	var ginkgo []types.Report
	if ok, err := readJSON(dir, GinkgoFile, &ginkgo); err != nil {
		return nil, err
	} else if ok {
		r.Retried = retried(ginkgo)
		r.Specs = specTimes(ginkgo)
	}
	return r, nil
}

// checkComplete refuses a file that is there but empty or cut short, which
// is what a run killed while writing its reports leaves.
func checkComplete(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // ReadSummary says what is missing
	}
	if len(bytes.TrimSpace(data)) == 0 || !json.Valid(data) {
		return halfWritten(path)
	}
	return nil
}

// sameRun refuses a file of another run than the summary's: a directory
// that mixes two runs' files would report one run's cluster or matrix
// under the other's results. A file or summary written before run stamps
// (no run ID) is taken as it is.
func sameRun(dir, name, summaryRun, fileRun string) error {
	if summaryRun == "" || fileRun == "" || summaryRun == fileRun {
		return nil
	}
	return fmt.Errorf("%s belongs to run %s, but %s to run %s: the directory mixes two runs' reports; pass the directory one run wrote (each run writes its own)",
		filepath.Join(dir, name), fileRun, SummaryFile, summaryRun)
}

func halfWritten(path string) error {
	return fmt.Errorf("%s is half written (empty, or cut short: not complete JSON): the run that wrote it was stopped while writing its reports; rerun the suites (`make e2e`) or pass a complete report directory", path)
}

// readJSON decodes dir/name into v when the file exists; ok is false when
// it does not.
func readJSON(dir, name string, v any) (bool, error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s: %v", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 || !json.Valid(data) {
		return false, halfWritten(path)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: not the layout this winconform writes (%v): rerun the suites with this version", path, err)
	}
	return true, nil
}

// retried lists the It specs that passed after more than one attempt.
func retried(rs []types.Report) []string {
	var out []string
	for _, r := range rs {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt && sr.State == types.SpecStatePassed && sr.NumAttempts > 1 {
				out = append(out, sr.FullText())
			}
		}
	}
	sort.Strings(out)
	return out
}

// specTimes lists the It specs, slowest first.
func specTimes(rs []types.Report) []SpecTime {
	var out []SpecTime
	for _, r := range rs {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt {
				out = append(out, SpecTime{Spec: sr.FullText(), State: sr.State.String(), Took: sr.RunTime})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Took > out[j].Took })
	return out
}

// Exists says whether dir/rel exists (an artifact directory, say).
func (r *Run) Exists(rel string) bool {
	_, err := os.Stat(filepath.Join(r.Dir, rel))
	return err == nil
}
