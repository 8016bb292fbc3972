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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/internal/userfile"
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
	// Summary is derived from the record (reports.Summarize). Its Flaky
	// is the run's one list of the specs that passed only on a retry
	// (Ginkgo's --flake-attempts), each with its first failure, which
	// every view of a flake reads.
	Summary reports.Summary
	// Cluster is nil when the run never reached the cluster.
	Cluster *facts.Facts
	// Matrix is nil when the run did not probe the network matrix.
	Matrix *netmatrix.Report
	// Ledger is derived from the record (reports.Ledger).
	Ledger []reports.LedgerEntry
	// Specs are the run's It specs with their run times, slowest first.
	Specs []SpecTime
	// Report is the record as checked: Ginkgo's report without the
	// evidence records its own cluster cannot have made. Every view
	// derived from the run (JUnit included) is derived from it.
	Report types.Report
	// End is the nodes' readiness at the run's end (nil: not recorded).
	End *facts.Readiness
	// Missing counts the specs PreRunStats counts that the record lacks,
	// in a run cut short (a parallel run stopped before it handed them out).
	Missing int
	// Digest is the SHA-256 of the record's files as read (the Ginkgo
	// report, then the network matrix): what a verdict binds to.
	Digest string
	// matrixSum is the matrix file's own SHA-256.
	matrixSum string
	// manifestSum and recordSum are the SHA-256 (hex) of the manifest
	// (ManifestFile) and of the record file.
	manifestSum, recordSum string
}

// Incomplete lists what the run selected and did not run to its end: the
// specs that never ran or were interrupted, and how many the record lacks.
// An incomplete run never ships.
func (r *Run) Incomplete() []string {
	var out []string
	for _, sp := range r.Summary.Specs {
		if sp.Result == reports.SpecNeverRan || sp.Result == reports.SpecInterrupted {
			out = append(out, sp.Name+" ("+sp.Result+")")
		}
	}
	if r.Missing > 0 {
		out = append(out, fmt.Sprintf("%d spec(s) counted before the run (PreRunStats) and absent from the record", r.Missing))
	}
	return out
}

// SpecTime is one spec's run time, as Ginkgo's report has it: its set-up
// (BeforeEach, JustBeforeEach) and clean-up (AfterEach, DeferCleanup)
// included, per-process set-up (SynchronizedBeforeSuite) not.
type SpecTime struct {
	Spec  string        `json:"spec"`
	State string        `json:"state"`
	Took  time.Duration `json:"took"`
}

// Load reads the report directory dir into the run's checked model: the
// one thing every consumer takes (the gate, diff, results, the HTML and
// Markdown reports, JUnit, report). Its run must have ended where the CLI
// marked it (a run killed before its end is refused, CheckFinished), and
// the directory must hold what its manifest says the run wrote (each
// file missing, added or changed is named). The
// record is decoded strictly and refused when it is not one run's whole
// record; a record that reads but breaks an invariant of its contract
// (Invariants, docs/record.md) loads with its violations in
// Summary.Violations, which every view shows first and the gate refuses.
func Load(dir string) (*Run, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := CheckFinished(dir); err != nil {
		return nil, err
	}
	r, err := read(dir)
	if err != nil {
		return nil, err
	}
	if r.manifestSum, err = checkManifest(dir); err != nil {
		return nil, err
	}
	return r, nil
}

func checkDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: no such report directory: pass the directory a run wrote (`make e2e` writes _output/report, `make test` _output/test-report)", dir)
	case err != nil:
		return fmt.Errorf("%s: %v", dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s is a file, not a report directory: pass the directory that holds %s", dir, reports.GinkgoFile)
	}
	return nil
}

// read reads and checks dir's record, its network matrix and run.json.
func read(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	if state, err := readState(dir); err == nil {
		r.State = state
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var rs []types.Report
	data, ok, err := readStrict(dir, reports.GinkgoFile, &rs)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%s: no %s, the run's record (Ginkgo's report, which the suite writes when it ends): is %s the report directory of a run that ended? (`make e2e` writes _output/report); a run killed before its end leaves none: rerun the suites",
			filepath.Join(dir, reports.GinkgoFile), reports.GinkgoFile, dir)
	case len(rs) != 1:
		return nil, fmt.Errorf("%s holds %d suite reports, a run's record holds one: pass the directory one run wrote", filepath.Join(dir, reports.GinkgoFile), len(rs))
	}
	r.recordSum = hexSum(data)
	digest := sha256.New()
	digest.Write(data)
	var m netmatrix.Report
	mdata, ok, err := readStrict(dir, reports.MatrixFile, &m)
	if err != nil {
		return nil, err
	} else if ok {
		r.Matrix, r.matrixSum = &m, sum(mdata)
		digest.Write(mdata)
	}
	r.Digest = "sha256:" + hex.EncodeToString(digest.Sum(nil))
	if err := r.check(rs[0]); err != nil {
		return nil, fmt.Errorf("%s: %v: pass the directory one run wrote", filepath.Join(dir, reports.GinkgoFile), err)
	}
	// A record that names no run breaks run-entry; its files are held
	// to the run it names when it names one.
	if r.Matrix != nil && r.Recorded {
		if err := sameRun(dir, reports.MatrixFile, r.Record.RunID, r.Matrix.RunID); err != nil {
			return nil, err
		}
	}
	if r.State != nil && r.Recorded {
		if err := sameRun(dir, RunFile, r.Record.RunID, r.State.RunID); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// sum is data's digest as the record's own fields write it (sha256:HEX).
func sum(data []byte) string { return "sha256:" + hexSum(data) }

// hexSum is data's SHA-256 in hex, as the manifest and a statement name it.
func hexSum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
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

// readStrict decodes dir/name into v strictly (decodeStrict) when the file
// exists, returning its bytes; ok is false when it does not.
func readStrict(dir, name string, v any) ([]byte, bool, error) {
	path := filepath.Join(dir, name)
	data, err := userfile.Read("", path, userfile.Report)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	if len(bytes.TrimSpace(data)) == 0 || !json.Valid(data) {
		return nil, false, halfWritten(path)
	}
	if err := decodeStrict(data, v); err != nil {
		return nil, false, fmt.Errorf("%s: not the layout this winconform writes (%v): a record is read as written, nothing added or changed; rerun the suites with this version", path, err)
	}
	return data, true, nil
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

// CheckBaseline refuses base as the baseline of cur: a baseline is an
// earlier run, read and checked as any run is. It must keep its record's
// contract (no violation), be another run than cur, and have started
// before cur did.
func CheckBaseline(base, cur *Run) error {
	if vs := base.Summary.Violations; len(vs) > 0 {
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = "invariant " + v.String()
		}
		return fmt.Errorf("%s: the baseline's record breaks its contract (docs/record.md), so nothing can be compared with it (%d violation(s)):\n  %s", base.Dir, len(vs), strings.Join(lines, "\n  "))
	}
	if base.Record.RunID == cur.Record.RunID {
		return fmt.Errorf("%s is run %s, the run the report holds: give an earlier run's report directory (last night's, the last release's)", base.Dir, orNone(cur.Record.RunID))
	}
	if !base.Started.Before(cur.Started) {
		return fmt.Errorf("%s: run %s started %s, not before the run it is the baseline of (%s, started %s): a baseline is an earlier run (last night's, the last release's)",
			base.Dir, orNone(base.Record.RunID), stamp(base.Started), orNone(cur.Record.RunID), stamp(cur.Started))
	}
	return nil
}
