package reporttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
)

// Synthetic hybrid runs: the Ginkgo report the suites would leave on a
// cluster of two Linux and two Windows nodes (its specs, their evidence
// records and ledger entries, the cluster's facts), turned into a report
// directory by the harness's own reports (reports.Summarize, reports.Ledger),
// as the suites' ReportAfterSuite does. Tests break one thing of the ideal
// run and check what the gate decides.

// The hybrid cluster's keys.
const (
	Server = "v1.37.2"
	CNI    = "flannel/vxlan"
	Build  = "10.0.20348" // Windows Server 2022, the build of both Windows nodes
)

// HybridFacts are the facts of the hybrid cluster: a Linux control plane, a
// Linux worker, and two Ready Windows nodes of Build.
func HybridFacts() *facts.Facts {
	return &facts.Facts{ServerVersion: Server, CNI: CNI, Nodes: []facts.Node{
		{Name: "cp", OS: "linux", ControlPlane: true, Ready: true},
		{Name: "lin-w", OS: "linux", Ready: true},
		{Name: "win-1", OS: "windows", Ready: true, WindowsBuild: Build},
		{Name: "win-2", OS: "windows", Ready: true, WindowsBuild: Build},
	}}
}

// Ev is an evidence record as a spec writes it (framework/evidence's
// report entry).
type Ev struct {
	Level   claims.Level `json:"level"`
	Detail  string       `json:"detail,omitempty"`
	Partial string       `json:"partial,omitempty"`
	// Build is the Windows build of the node the result was obtained on.
	Build string `json:"build,omitempty"`
}

// Spec is one It of a synthetic run.
type Spec struct {
	Name   string
	Labels []string // claim:<ID> for each claim, and any other
	// State is Ginkgo's; a zero State is passed.
	State      types.SpecState
	Message    string
	SkipReason string // a skips.Reason key (skipped, inconclusive)
	Evidence   []Ev
	// Ledger entries are decided (ledger.Entry.Decide) as ledger.Record does.
	Ledger   []ledger.Entry
	Attempts int // more than 1: passed on a retry
}

// Run is a synthetic run.
type Run struct {
	// Facts are the cluster's; nil when the run never reached it.
	Facts  *facts.Facts
	Specs  []Spec
	Matrix *netmatrix.Report
}

// IdealHybrid is a run on the hybrid cluster in which every claim of the
// catalogue has one passing spec that shows it: on a real Windows node of
// Build for claims about Windows nodes (the scheduler's included: on a
// cluster with real Windows nodes the scheduling specs use them), on the
// Windows machine or in the domain for those levels, on Linux nodes for
// Linux claims (and for the Linux side of claims about both), by the API
// server for the API's. Every documented limitation is observed as this
// server version is expected to behave (it holds, or it was lifted as
// expected). NET-15's matrix spec records Windows cells beside its Linux
// ones (on a hybrid cluster its Service has Windows endpoints too).
func IdealHybrid() *Run {
	r := &Run{Facts: HybridFacts()}
	cluster := ledger.Cluster{Server: Server, CNI: CNI}
	for _, c := range claims.All() {
		sp := Spec{Name: SpecName(c.ID), Labels: []string{"claim:" + c.ID}}
		switch c.Level {
		case claims.Linux:
			sp.Evidence = []Ev{{Level: claims.Linux, Detail: "linux nodes cp, lin-w"}}
		case claims.API:
			sp.Evidence = []Ev{{Level: claims.API, Detail: "dry-run create"}}
		case claims.Scheduler, claims.WindowsNode:
			sp.Evidence = []Ev{{Level: claims.WindowsNode, Detail: "real Windows node win-1", Build: Build}}
		default:
			sp.Evidence = []Ev{{Level: c.Level, Detail: "win-1", Build: Build}}
		}
		if c.Level.OnWindows() && c.About("linux") {
			sp.Evidence = append(sp.Evidence, Ev{Level: claims.Linux, Detail: "linux side"})
		}
		if c.ID == "NET-15" {
			sp.Evidence = append(sp.Evidence, Ev{Level: claims.WindowsNode, Detail: "2 matrix cell(s) probed", Build: Build})
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

// SpecName is the name of claim id's spec in IdealHybrid.
func SpecName(id string) string { return id + " on the hybrid cluster" }

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

// Set replaces the specs of claim id.
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

// Ginkgo is the run's Ginkgo report, as the suites leave it: the cluster's
// facts on the SynchronizedBeforeSuite, each spec's entries as the
// framework's packages add them.
func (r *Run) Ginkgo() types.Report {
	rep := types.Report{SuiteDescription: "winconform", SuiteSucceeded: true}
	if r.Facts != nil {
		data, _ := json.Marshal(r.Facts)
		rep.SpecReports = append(rep.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed,
			ReportEntries: types.ReportEntries{entry(reports.ClusterEntry, string(data))}})
	}
	for _, s := range r.Specs {
		sr := types.SpecReport{ContainerHierarchyTexts: []string{"[synthetic]"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: s.Name,
			LeafNodeLabels: s.Labels, State: s.State, NumAttempts: max(s.Attempts, 1)}
		if sr.State == 0 {
			sr.State = types.SpecStatePassed
		}
		if sr.State != types.SpecStatePassed {
			sr.Failure = types.Failure{Message: s.Message}
			if sr.State.Is(types.SpecStateFailureStates) {
				rep.SuiteSucceeded = false
			}
		}
		if s.SkipReason != "" {
			sr.ReportEntries = append(sr.ReportEntries, entry(skips.EntryName, s.SkipReason))
			if s.SkipReason == skips.Inconclusive.Key && !strings.HasPrefix(s.Message, skips.Inconclusive.Text) {
				sr.Failure.Message = skips.Inconclusive.Text + ": " + s.Message
			}
		}
		for _, e := range s.Evidence {
			data, _ := json.Marshal(e)
			sr.ReportEntries = append(sr.ReportEntries, entry(evidence.EntryName, string(data)))
		}
		for _, e := range s.Ledger {
			e.Decide()
			data, _ := json.Marshal(e)
			sr.ReportEntries = append(sr.ReportEntries, entry(ledger.EntryName, string(data)))
		}
		rep.SpecReports = append(rep.SpecReports, sr)
	}
	return rep
}

func entry(name, value string) types.ReportEntry {
	return types.ReportEntry{Name: name, Value: types.WrapEntryValue(value), Visibility: types.ReportEntryVisibilityNever}
}

// Write writes the run's report directory (summary, ledger, cluster.json,
// network matrix, Ginkgo's report) into a new temporary directory.
func (r *Run) Write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	g := r.Ginkgo()
	s := reports.Summarize(g)
	s.Stamp = version.For(NewRunID())
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := reports.Ledger(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteLedger(dir, s.Stamp, entries); err != nil {
		t.Fatal(err)
	}
	if r.Facts != nil {
		if err := reports.WriteCluster(dir, s.Stamp, r.Facts); err != nil {
			t.Fatal(err)
		}
	}
	if r.Matrix != nil {
		m := *r.Matrix
		m.Stamp = s.Stamp
		writeJSON(t, filepath.Join(dir, "network-matrix.json"), &m)
	}
	if err := os.MkdirAll(filepath.Join(dir, "ginkgo"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "ginkgo", "report.json"), []types.Report{g})
	return dir
}
