// Package rundir reads a run's report directory back from the run's record:
// Ginkgo's report with the run's entries (ginkgo/report.json: each spec's
// evidence records, the run's ID and catalogue, the cluster's facts), the
// network matrix the suites wrote as they probed, and run.json where the CLI
// ran the suites. The summary and the limitation ledger are derived from the
// record here (reports.Summarize and reports.Ledger are deterministic over
// it), exactly as the suite derived them for summary.json and
// limitations.json, which are never read back: editing a derived file
// changes no verdict. The gate, the baseline diff, the HTML report and
// `winconform results` read a run through Load, so that every one of them
// refuses the same bad directories with the same errors, each naming the
// file and the fix.
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
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/reports"
)

// UnderlayFile is the underlay check's report, which winconform e2e writes
// beside the suites' files when machines joined through the underlay.
const UnderlayFile = "underlay-check.json"

// Run is one run, read from its record.
type Run struct {
	Dir string
	// Record is what the run recorded of itself (framework/record);
	// Recorded is false when its report holds no run entry (a run that
	// stopped before its first setup, or a report of another program).
	Record   record.Run
	Recorded bool
	// Started and Ended are the suite's start and end, as Ginkgo's report
	// has them (Ended is zero when the report never reached its end).
	Started, Ended time.Time
	// DryRun says the suite ran with --ginkgo.dry-run: nothing ran.
	DryRun bool
	// State is run.json (rundir.RunFile), nil where the suite ran without
	// the CLI (the suite binary alone, Sonobuoy's plugin).
	State *RunState
	// Summary is derived from the record (reports.Summarize).
	Summary reports.Summary
	// Cluster is nil when the run never reached the cluster.
	Cluster *facts.Facts
	// Matrix is nil when the run did not probe the network matrix.
	Matrix *netmatrix.Report
	// Ledger is derived from the record (reports.Ledger).
	Ledger []reports.LedgerEntry
	// Retried lists the specs that passed only on a retry (Ginkgo's
	// --flake-attempts): flaky specs.
	Retried []string
	// Specs are the run's It specs with their run times, slowest first.
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

// Load reads the report directory dir. Its run must have ended where the
// CLI marked it (a run killed before its end is refused, CheckFinished),
// and its record must be there and whole; the network matrix is read when
// present, and refused when half written or of another run.
func Load(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such report directory: pass the directory a run wrote (`make e2e` writes _output/report, `make test` _output/test-report)", dir)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s is a file, not a report directory: pass the directory that holds %s", dir, reports.GinkgoFile)
	}
	if err := CheckFinished(dir); err != nil {
		return nil, err
	}
	r := &Run{Dir: dir}
	if state, err := readState(dir); err == nil {
		r.State = state
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var rs []types.Report
	ok, err := readJSON(dir, reports.GinkgoFile, &rs)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%s: no %s, the run's record (Ginkgo's report, which the suite writes when it ends): is %s the report directory of a run that ended? (`make e2e` writes _output/report); a run killed before its end leaves none: rerun the suites",
			filepath.Join(dir, reports.GinkgoFile), reports.GinkgoFile, dir)
	case len(rs) != 1:
		return nil, fmt.Errorf("%s holds %d suite reports, a run's record holds one: pass the directory one run wrote", filepath.Join(dir, reports.GinkgoFile), len(rs))
	}
	g := rs[0]
	run, fs, recorded, err := record.Read(g)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: pass the directory one run wrote", filepath.Join(dir, reports.GinkgoFile), err)
	}
	r.Record, r.Recorded, r.Cluster = run, recorded, fs
	r.Started, r.Ended, r.DryRun = g.StartTime, g.EndTime, g.SuiteConfig.DryRun
	r.Summary = reports.Summarize(g)
	if r.Ledger, err = reports.Ledger(g); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, reports.GinkgoFile), err)
	}
	if r.Ledger == nil {
		r.Ledger = []reports.LedgerEntry{}
	}
	r.Retried, r.Specs = retried(g), specTimes(g)
	var m netmatrix.Report
	if ok, err := readJSON(dir, reports.MatrixFile, &m); err != nil {
		return nil, err
	} else if ok {
		if err := sameRun(dir, reports.MatrixFile, run.RunID, m.RunID); err != nil {
			return nil, err
		}
		r.Matrix = &m
	}
	if r.State != nil {
		if err := sameRun(dir, RunFile, run.RunID, r.State.RunID); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// sameRun refuses a file of another run than the record's: a directory
// that mixes two runs' files would report one run's matrix under the
// other's results.
func sameRun(dir, name, recordRun, fileRun string) error {
	if recordRun == fileRun {
		return nil
	}
	return fmt.Errorf("%s belongs to run %s, but the record %s to run %s: the directory mixes two runs' reports; pass the directory one run wrote (each run writes its own)",
		filepath.Join(dir, name), orNone(fileRun), reports.GinkgoFile, orNone(recordRun))
}

func orNone(id string) string {
	if id == "" {
		return "(none)"
	}
	return id
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
func retried(r types.Report) []string {
	var out []string
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && sr.State == types.SpecStatePassed && sr.NumAttempts > 1 {
			out = append(out, sr.FullText())
		}
	}
	sort.Strings(out)
	return out
}

// specTimes lists the It specs, slowest first.
func specTimes(r types.Report) []SpecTime {
	var out []SpecTime
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt {
			out = append(out, SpecTime{Spec: sr.FullText(), State: sr.State.String(), Took: sr.RunTime})
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
