// Package reporttest makes runs' records for the tests of the packages that
// read them (rundir, gate, diff, html, the CLI): the Ginkgo report the
// suites would leave (its specs with their evidence records and ledger
// entries, the run's entry, the cluster's facts), turned into a report
// directory by the harness's own writer (rundir.Write), as the suite's
// ReportAfterSuite does. There is no other way to make a report directory:
// every test reads a run through the same record the real suites write.
//
// Two runs are made from the catalogue: IdealHybrid, on a cluster of two
// Linux and two Windows nodes, in which every claim is shown as the
// catalogue asks; and Linux, the default kind cluster, without Windows
// nodes. Tests break one thing of a run and check what the reader decides.
package reporttest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/internal/runid"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// The clusters' keys.
const (
	Server = "v1.37.2"
	CNI    = "flannel/vxlan"
	Build  = "10.0.20348" // Windows Server 2022, the build of both Windows nodes
)

// Started is when every synthetic run started; each ran for an hour. A
// fixed start keeps the tests that read dates (known issues' expiry, the
// gate's --now) from depending on the day they run.
var Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// LinuxNodes and WindowsNodes are the nodes of the clusters.
var (
	LinuxNodes   = []string{"cp", "lin-w"}
	WindowsNodes = []string{"win-1", "win-2"}
)

// HybridFacts are the facts of the hybrid cluster: a Linux control plane, a
// Linux worker, and two Ready Windows nodes of Build.
func HybridFacts() *facts.Facts {
	fs := LinuxFacts()
	fs.Nodes = append(fs.Nodes,
		facts.Node{Name: "win-1", OS: "windows", Ready: true, WindowsBuild: Build},
		facts.Node{Name: "win-2", OS: "windows", Ready: true, WindowsBuild: Build})
	return fs
}

// LinuxFacts are the facts of the default kind cluster: a Linux control
// plane and a Linux worker.
func LinuxFacts() *facts.Facts {
	return &facts.Facts{ServerVersion: Server, CNI: CNI, Nodes: []facts.Node{
		{Name: "cp", OS: "linux", ControlPlane: true, Ready: true},
		{Name: "lin-w", OS: "linux", Ready: true},
	}}
}

// Ev is an evidence record as a spec writes it.
type Ev = evidence.Record

// Spec is one It of a synthetic run.
type Spec struct {
	Name   string
	Labels []string // claim:<ID> for each claim, and any other
	// State is Ginkgo's; a zero State is passed.
	State   types.SpecState
	Message string
	// FailedIn is the node a failure happened in (zero: the It itself;
	// types.NodeTypeBeforeAll: a setup that blocked the spec).
	FailedIn   types.NodeType
	SkipReason string // a skips.Reason key (skipped, inconclusive)
	Evidence   []Ev
	// Ledger entries are decided (ledger.Entry.Decide) as ledger.Record does.
	Ledger []ledger.Entry
	// Attempts more than 1: Ginkgo retried the spec (--flake-attempts):
	// a passed spec passed on its last attempt, and each attempt before
	// failed with FirstFailure (a default when empty), kept as Ginkgo
	// keeps it (AdditionalFailures).
	Attempts     int
	FirstFailure string
	// Artifacts names the directory of the spec's artifacts.
	Artifacts string
}

// RetryLocation is where the failed attempts of a retried spec failed.
var RetryLocation = types.CodeLocation{FileName: "suites/networking/retry.go", LineNumber: 42}

// retries are the failures of the spec's attempts before its last, as
// Ginkgo v2.32.0 keeps them (internal/group.go): each attempt's failure,
// its message headed "Failure recorded during attempt N:\n".
func (s Spec) retries() []types.AdditionalFailure {
	var out []types.AdditionalFailure
	for n := 1; n < s.Attempts; n++ {
		msg := s.FirstFailure
		if msg == "" || n > 1 {
			msg = fmt.Sprintf("failed on attempt %d", n)
		}
		out = append(out, types.AdditionalFailure{State: types.SpecStateFailed, Failure: types.Failure{
			Message: fmt.Sprintf("Failure recorded during attempt %d:\n%s", n, msg), Location: RetryLocation, FailureNodeType: types.NodeTypeIt}})
	}
	return out
}

// Run is a synthetic run.
type Run struct {
	// ID is the run's ID (NewRunID when empty).
	ID string
	// Catalogue is the catalogue version the run recorded (this one's when
	// empty).
	Catalogue string
	// Unrecorded leaves the run's entry out of its record.
	Unrecorded bool
	// Facts are the cluster's; nil when the run never reached it.
	Facts  *facts.Facts
	Specs  []Spec
	Matrix *netmatrix.Report
	// LabelFilter is the run's selection: claims whose specs it leaves out
	// are not run.
	LabelFilter string
	// Interrupted says the run was cut short (an interrupt, the suite's
	// time limit).
	Interrupted bool
	// NoRunFile leaves run.json out (the suite run without the CLI).
	NoRunFile bool
	// End is the nodes' readiness at the run's end; nil: each node of
	// Facts as Ready as it was at the start. NoEnd leaves it out (a run
	// that stopped before its end).
	End   *facts.Readiness
	NoEnd bool
	// Start is when the run started (Started when zero); Took how long it
	// ran (an hour when zero).
	Start time.Time
	Took  time.Duration
}

// AsBaseline makes r a baseline: a run that started a day before Started.
func (r *Run) AsBaseline() *Run {
	r.Start = Started.Add(-24 * time.Hour)
	return r
}

func (r *Run) started() time.Time {
	if r.Start.IsZero() {
		return Started
	}
	return r.Start
}

func (r *Run) ended() time.Time {
	if r.Took == 0 {
		return r.started().Add(time.Hour)
	}
	return r.started().Add(r.Took)
}

// windowsOn are the records of a result on the hybrid cluster's first
// Windows node, at level.
func windowsOn(level claims.Level) Ev {
	r := Ev{Level: level, Detail: "real Windows node win-1", Build: Build, Nodes: []string{"win-1"}}
	if level == claims.WindowsMachine {
		r.Machines = []string{"win-1"}
	}
	return r
}

// OnWindows is a record of a result on the hybrid cluster's first Windows node.
func OnWindows() Ev { return windowsOn(claims.WindowsNode) }

// OnLinux is a record of a result on the clusters' Linux nodes.
func OnLinux() Ev {
	return Ev{Level: claims.Linux, Detail: "real linux node(s) cp, lin-w", Nodes: LinuxNodes}
}

// Simulated is a record of a result on simulated Windows nodes.
func Simulated() Ev {
	return Ev{Level: claims.Scheduler, Detail: "simulated Windows nodes (kwok): wc-sched-1, wc-sched-2", Nodes: []string{"wc-sched-1", "wc-sched-2"}}
}

// API is a record of a result the API server alone decided.
func API() Ev { return Ev{Level: claims.API, Detail: "dry-run create"} }

// PlacementOnly are the claims whose specs, on any cluster, observe only
// the control plane's placement (onto Linux nodes, or about Windows nodes
// without their kubelets): scheduler, even with real Windows nodes.
var PlacementOnly = []string{"SCH-03", "SCH-08", "LIM-08"}

// IdealHybrid is a run on the hybrid cluster in which every claim of the
// catalogue has one passing spec that shows it: on the real Windows node
// win-1 (of Build) for claims about Windows nodes, the scheduler's
// included (on a cluster with real Windows nodes the scheduling specs use
// them), but PlacementOnly's; on the Windows machine or in the domain for
// those levels; on the Linux nodes for Linux claims (and for the Linux
// side of claims about both); by the API server for the API's. Every
// documented limitation is observed as this server version is expected to
// behave (it holds, or it was lifted as expected). NET-15's matrix spec
// records Windows cells beside its Linux ones (on a hybrid cluster its
// Service has Windows endpoints too).
func IdealHybrid() *Run {
	r := &Run{Facts: HybridFacts()}
	cluster := ledger.Cluster{Server: Server, CNI: CNI}
	for _, c := range claims.All() {
		sp := Spec{Name: SpecName(c.ID), Labels: []string{"claim:" + c.ID}}
		switch {
		case c.Level == claims.Linux:
			sp.Evidence = []Ev{OnLinux()}
		case c.Level == claims.API:
			sp.Evidence = []Ev{API()}
		case slices.Contains(PlacementOnly, c.ID):
			sp.Evidence = []Ev{{Level: claims.Scheduler, Detail: "the scheduler's placement onto Linux node lin-w", Nodes: []string{"lin-w"}}}
		case c.Level == claims.Scheduler:
			sp.Evidence = []Ev{OnWindows()}
		default:
			sp.Evidence = []Ev{windowsOn(c.Level)}
		}
		if c.Level.OnWindows() && c.About("linux") {
			sp.Evidence = append(sp.Evidence, Ev{Level: claims.Linux, Detail: "linux side", Nodes: []string{"lin-w"}})
		}
		if c.ID == "NET-15" {
			sp.Evidence = append(sp.Evidence, Ev{Level: claims.WindowsNode, Detail: "2 matrix cell(s) probed", Build: Build, Nodes: []string{"win-1"}})
		}
		if c.Limitation != nil {
			e := ledger.New(c.ID, cluster)
			e.Observed, e.Evidence = e.Expected, "observed as this version is expected to behave"
			sp.Ledger = []ledger.Entry{e}
		}
		r.Specs = append(r.Specs, sp)
	}
	return r
}

// Twins are the claims on Windows nodes whose Linux twins pass in Linux.
var Twins = []string{"WEB-01", "NET-22"}

// Linux is a run on the default kind cluster (no Windows node): the claims
// about Linux nodes shown on them, the API server's at their level, the
// scheduler's on simulated Windows nodes; every claim about Windows nodes
// skipped for want of one, the Linux twins of Twins passing.
func Linux() *Run {
	r := &Run{Facts: LinuxFacts()}
	cluster := ledger.Cluster{Server: Server, CNI: CNI}
	for _, c := range claims.All() {
		sp := Spec{Name: SpecName(c.ID), Labels: []string{"claim:" + c.ID}}
		switch c.Level {
		case claims.Linux:
			sp.Evidence = []Ev{OnLinux()}
		case claims.API:
			sp.Evidence = []Ev{API()}
		case claims.Scheduler:
			sp.Evidence = []Ev{Simulated()}
		default:
			sp.State, sp.Message, sp.SkipReason = types.SpecStateSkipped, "no Windows node", skips.NoWindowsNode.Key
		}
		if c.Limitation != nil && len(sp.Evidence) > 0 {
			e := ledger.New(c.ID, cluster)
			e.Observed, e.Evidence = e.Expected, "observed as this version is expected to behave"
			sp.Ledger = []ledger.Entry{e}
		}
		r.Specs = append(r.Specs, sp)
		if slices.Contains(Twins, c.ID) {
			r.Specs = append(r.Specs, Spec{Name: TwinName(c.ID), Labels: []string{"claim:" + c.ID, "os:linux"}, Evidence: []Ev{OnLinux()}})
		}
	}
	return r
}

// SpecName is the name of claim id's spec in the runs.
func SpecName(id string) string { return id + " on the cluster" }

// TwinName is the name of claim id's Linux twin in Linux.
func TwinName(id string) string { return id + " Linux twin" }

// Of returns the specs of claim id.
func (r *Run) Of(id string) []*Spec {
	var out []*Spec
	for i := range r.Specs {
		if slices.Contains(r.Specs[i].Labels, "claim:"+id) {
			out = append(out, &r.Specs[i])
		}
	}
	return out
}

// One returns the first spec of claim id; it panics when there is none.
func (r *Run) One(id string) *Spec {
	s := r.Of(id)
	if len(s) == 0 {
		panic("reporttest: no spec of " + id)
	}
	return s[0]
}

// Set replaces the specs of claim id (none: the claim is not covered).
func (r *Run) Set(id string, specs ...Spec) {
	r.Specs = slices.DeleteFunc(r.Specs, func(s Spec) bool { return slices.Contains(s.Labels, "claim:"+id) })
	for i := range specs {
		if !slices.Contains(specs[i].Labels, "claim:"+id) {
			specs[i].Labels = append(specs[i].Labels, "claim:"+id)
		}
		if specs[i].Name == "" {
			specs[i].Name = SpecName(id)
		}
	}
	r.Specs = append(r.Specs, specs...)
}

// Fail makes claim id's specs fail with message, keeping their evidence:
// a failure observed where they ran.
func (r *Run) Fail(id, message string) {
	for _, s := range r.Of(id) {
		s.State, s.Message = types.SpecStateFailed, message
	}
}

// Skip makes claim id's specs skip for reason (a skips.Reason key).
func (r *Run) Skip(id, reason string) {
	r.Set(id, Spec{State: types.SpecStateSkipped, Message: reason, SkipReason: reason})
}

// Block makes claim id's specs blocked: a setup node failed before they ran.
func (r *Run) Block(id, message string) {
	r.Set(id, Spec{State: types.SpecStateFailed, FailedIn: types.NodeTypeBeforeAll, Message: message})
}

// Ginkgo is the run's Ginkgo report, its record as the suites leave it:
// the run's entry and the cluster's facts on the SynchronizedBeforeSuite,
// each spec's entries as the framework's packages add them.
func (r *Run) Ginkgo() types.Report {
	r.stamp()
	rep := types.Report{SuiteDescription: "winconform", SuiteSucceeded: true, StartTime: r.started(), EndTime: r.ended()}
	rep.SuiteConfig.LabelFilter = r.LabelFilter
	if r.Interrupted {
		rep.SuiteSucceeded = false
		rep.SpecialSuiteFailureReasons = []string{"Interrupted by User"}
	}
	setup := types.SpecReport{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed}
	if !r.Unrecorded {
		rec := record.New(r.ID, "")
		if r.Catalogue != "" {
			rec.Catalogue = r.Catalogue
		}
		setup.ReportEntries = append(setup.ReportEntries, entryOf(record.RunEntry, rec))
	}
	if r.Facts != nil {
		setup.ReportEntries = append(setup.ReportEntries, entryOf(record.ClusterEntry, r.Facts))
	}
	rep.SpecReports = append(rep.SpecReports, setup)
	if r.Matrix != nil {
		_, written := r.matrixFile()
		rep.SpecReports[0].ReportEntries = append(rep.SpecReports[0].ReportEntries, entryOf(record.MatrixEntry, written))
	}
	selected := func([]string) bool { return true }
	if r.LabelFilter != "" {
		f, err := types.ParseLabelFilter(r.LabelFilter)
		if err != nil {
			panic(err)
		}
		selected = f
	}
	rep.PreRunStats.TotalSpecs = len(r.Specs)
	for _, s := range r.Specs {
		sr := types.SpecReport{ContainerHierarchyTexts: []string{"[synthetic]"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: s.Name,
			LeafNodeLabels: s.Labels, State: s.State, NumAttempts: max(s.Attempts, 1)}
		if selected(s.Labels) {
			rep.PreRunStats.SpecsThatWillRun++
		}
		if !selected(s.Labels) {
			// Left out by the run's selection: Ginkgo reports it skipped,
			// never attempted, without a word.
			sr.State, sr.NumAttempts = types.SpecStateSkipped, 0
			rep.SpecReports = append(rep.SpecReports, sr)
			continue
		}
		if sr.State == 0 {
			sr.State = types.SpecStatePassed
		}
		sr.AdditionalFailures = s.retries()
		if s.Attempts > 1 {
			sr.MaxFlakeAttempts = s.Attempts
		}
		if sr.State != types.SpecStatePassed {
			sr.Failure = types.Failure{Message: s.Message, FailureNodeType: s.FailedIn}
			if sr.State.Is(types.SpecStateFailureStates) {
				rep.SuiteSucceeded = false
				if s.Message == "" {
					sr.Failure.Message = "failed" // Ginkgo records a failure with every failed state
				}
			}
		}
		if s.SkipReason != "" {
			sr.ReportEntries = append(sr.ReportEntries, entry(skips.EntryName, s.SkipReason))
			if s.SkipReason == skips.Inconclusive.Key && !strings.HasPrefix(s.Message, skips.Inconclusive.Text) {
				sr.Failure.Message = skips.Inconclusive.Text + ": " + s.Message
			}
		}
		for _, e := range s.Evidence {
			sr.ReportEntries = append(sr.ReportEntries, entryOf(evidence.EntryName, e))
		}
		if s.Artifacts != "" {
			sr.ReportEntries = append(sr.ReportEntries, entry(reports.ArtifactsEntry, s.Artifacts))
		}
		for _, e := range s.Ledger {
			e.Decide()
			sr.ReportEntries = append(sr.ReportEntries, entryOf(ledger.EntryName, e))
		}
		rep.SpecReports = append(rep.SpecReports, sr)
	}
	if !r.NoEnd {
		end := r.End
		if end == nil {
			end = &facts.Readiness{Nodes: []facts.NodeReadiness{}}
			if r.Facts != nil {
				for _, n := range r.Facts.Nodes {
					end.Nodes = append(end.Nodes, facts.NodeReadiness{Name: n.Name, Ready: n.Ready})
				}
			}
		}
		rep.SpecReports = append(rep.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeSynchronizedAfterSuite, State: types.SpecStatePassed,
			ReportEntries: types.ReportEntries{entryOf(record.EndEntry, end)}})
	}
	return rep
}

// matrixFile is the network matrix file's bytes and what the run records
// of them (record.Matrix), as netmatrix.Matrix.Write makes them.
func (r *Run) matrixFile() ([]byte, record.Matrix) {
	m := *r.Matrix
	if m.RunID == "" {
		m.Stamp = version.For(r.ID)
	}
	data, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(data)
	return data, record.Matrix{Cells: len(m.Cells), SHA256: "sha256:" + hex.EncodeToString(sum[:])}
}

func (r *Run) stamp() {
	if r.ID == "" {
		r.ID = NewRunID()
	}
}

func entryOf(name string, v any) types.ReportEntry {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return entry(name, string(data))
}

func entry(name, value string) types.ReportEntry {
	return types.ReportEntry{Name: name, Value: types.WrapEntryValue(value), Visibility: types.ReportEntryVisibilityNever}
}

// Write writes the run's report directory into a new temporary directory:
// what the suite's rundir.Write makes of the record, the network matrix,
// and run.json (started at Started, ended an hour later) unless NoRunFile,
// sealed as the CLI seals a run it ends (rundir.Seal).
func (r *Run) Write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	r.WriteTo(t, dir)
	return dir
}

// WriteTo is Write into dir.
func (r *Run) WriteTo(t testing.TB, dir string) {
	t.Helper()
	g := r.Ginkgo()
	stamp := version.For(r.ID)
	if r.Matrix != nil {
		data, _ := r.matrixFile()
		if err := os.WriteFile(filepath.Join(dir, reports.MatrixFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rundir.Write(dir, g, filepath.Join(dir, reports.JUnitFile)); err != nil {
		t.Fatal(err)
	}
	if !r.NoRunFile {
		ended := r.ended()
		writeJSON(t, filepath.Join(dir, rundir.RunFile), rundir.RunState{Format: rundir.RunFormat, Stamp: stamp, Started: r.started(), Ended: &ended, Outcome: "ended"})
		if err := rundir.Seal(dir, r.ID); err != nil {
			t.Fatal(err)
		}
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

var runs atomic.Int64

// NewRunID is a run ID of its own for each run a test makes, shaped as the
// CLI's (wc-<time>-<random>).
func NewRunID() string {
	return runid.At(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), uint16(runs.Add(1)))
}

// Cell is a matrix cell.
func Cell(source, target string, verdict netmatrix.Verdict, observed netmatrix.Observation, ids ...string) *netmatrix.Cell {
	return &netmatrix.Cell{Source: source, Target: target, Claims: ids, Expect: netmatrix.Expectation{Reachable: true},
		Observed: observed, Verdict: verdict, Repro: "kubectl exec " + source + " -- /probe connect " + target}
}
