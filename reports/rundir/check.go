package rundir

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/reports"
)

// Invariant is one rule of the record's contract: the parts of a run's
// record must agree with one another, as one ledger whose totals add up.
// A record that breaks one loads with the violation named
// (reports.Summary.Violations); every view shows it first, and the gate
// and the baseline diff refuse the run.
type Invariant struct {
	Name string
	Rule string
}

// The invariants' names.
const (
	InvRunEntry     = "run-entry"
	InvEnded        = "ended"
	InvDryRun       = "not-dry-run"
	InvSuiteSuccess = "suite-success"
	InvSpecState    = "spec-state"
	InvPreRunStats  = "pre-run-stats"
	InvNodeNames    = "node-names"
	InvReadiness    = "readiness"
	InvEvidence     = "evidence"
	InvMatrix       = "matrix"
	InvStart        = "start"
	InvSkipReasons  = "skip-reasons"
)

// Invariants is the record's contract (docs/record.md says each in
// words; a test holds the page to this list).
var Invariants = []Invariant{
	{InvRunEntry, "the record names its run: one run entry, which the suite's first setup writes"},
	{InvEnded, "the record reached its end: Ginkgo's end time is set, and not before its start"},
	{InvDryRun, "the suite ran its specs: a dry run (--ginkgo.dry-run) ran nothing"},
	{InvSuiteSuccess, "the suite's success agrees with its specs: it succeeded exactly when no spec or setup node failed and Ginkgo named no failure of the suite"},
	{InvSpecState, "every spec's state agrees with its failure: a passed or pending spec has none, a failed, interrupted or aborted one has one"},
	{InvPreRunStats, "the specs recorded agree with Ginkgo's count before the run (PreRunStats): as many specs as it counted (fewer only in a run that did not succeed, whose absent specs never ran), and as many selected as it said would run"},
	{InvNodeNames, "each node is named once in the cluster's facts, and once in the readiness at the end"},
	{InvReadiness, "a run that reached its end records its nodes' readiness at the end (only nodes Ready at the start and at the end count)"},
	{InvEvidence, "every evidence record names what its cluster had: a result on Windows names real Windows nodes of the build it says (or a machine), a Linux result real Linux nodes, none a node NotReady for the whole run"},
	{InvMatrix, "a record that probed the network matrix has the matrix file it wrote, unchanged, and a matrix file comes with a record that probed"},
	{InvStart, "the record's start and end lie within the run's as run.json has them"},
	{InvSkipReasons, "every skip reason agrees with the cluster's facts where they decide it (no Windows node, a managed control plane)"},
}

// slack is how far the suite's clock may disagree with the CLI's about
// when the run started and ended (the same host: seconds).
const slack = time.Minute

// check reads Ginkgo's report g into r: the record's entries, strictly;
// the evidence its cluster cannot have made set aside; the invariants;
// and everything the views take, derived from the checked record. An
// error means g is not one run's readable record.
func (r *Run) check(g types.Report) error {
	if err := checkEntries(g); err != nil {
		return err
	}
	rec, err := record.Read(g)
	if err != nil {
		return err
	}
	r.Record, r.Recorded, r.Cluster, r.End = rec.Run, rec.Recorded, rec.Cluster, rec.End
	r.Started, r.Ended, r.DryRun = g.StartTime, g.EndTime, g.SuiteConfig.DryRun
	var vs []reports.Violation
	add := func(inv, format string, args ...any) {
		vs = append(vs, reports.Violation{Invariant: inv, Detail: fmt.Sprintf(format, args...)})
	}
	switch {
	case !rec.Recorded:
		add(InvRunEntry, "the record names no run (no %s entry: written by a winconform before run records, or the run stopped before its first setup): rerun the suites with this winconform", record.RunEntry)
	case rec.Run.RunID == "":
		add(InvRunEntry, "the run entry names no run ID")
	}
	if g.EndTime.IsZero() || g.EndTime.Before(g.StartTime) {
		add(InvEnded, "the record never reached its end (end %s, start %s): what it holds is partial; rerun the suites", stamp(g.EndTime), stamp(g.StartTime))
	}
	if g.SuiteConfig.DryRun {
		add(InvDryRun, "the run was a dry run (--ginkgo.dry-run): nothing ran, so nothing can be decided")
	}
	r.checkSuite(g, add)
	r.checkNodes(add)
	checked := r.checkEvidence(g, add)
	r.checkMatrix(g, add)
	r.checkStart(g, add)
	r.Report = checked
	r.Summary = reports.Summarize(checked)
	r.checkSkips(add)
	if len(vs) > 0 {
		r.Summary.Break(vs)
	}
	if r.Ledger, err = reports.Ledger(checked); err != nil {
		return err
	}
	if r.Ledger == nil {
		r.Ledger = []reports.LedgerEntry{}
	}
	r.Specs = specTimes(checked)
	return nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unset"
	}
	return t.UTC().Format(time.RFC3339)
}

// checkEntries refuses an entry of the harness's that two readers would
// read two ways: Ginkgo keeps each entry's value twice (AsJSON, and
// Representation, which the harness reads); both must say the same. And
// every evidence and ledger entry must parse, strictly.
func checkEntries(g types.Report) error {
	for _, sr := range g.SpecReports {
		for _, e := range sr.ReportEntries {
			if !strings.HasPrefix(e.Name, "winconform.") {
				continue
			}
			if e.Value.AsJSON != "" {
				var v string
				if err := json.Unmarshal([]byte(e.Value.AsJSON), &v); err != nil {
					return fmt.Errorf("spec %q: entry %s holds a value that is not the string the harness writes (%v)", sr.FullText(), e.Name, err)
				}
				if v != e.Value.Representation {
					return fmt.Errorf("spec %q: entry %s says two things (its AsJSON and its Representation differ): one record, two readings", sr.FullText(), e.Name)
				}
			}
			var err error
			switch e.Name {
			case evidence.EntryName:
				_, err = evidence.Parse(e.StringRepresentation())
			case ledger.EntryName:
				_, err = ledger.Parse(e.StringRepresentation())
			case skips.EntryName:
				if !skips.Known(e.StringRepresentation()) {
					err = fmt.Errorf("skip reason %q is none the harness has (framework/skips)", e.StringRepresentation())
				}
			}
			if err != nil {
				return fmt.Errorf("spec %q: %v", sr.FullText(), err)
			}
		}
	}
	return nil
}

// checkSuite holds the suite's success, each spec's state and the count of
// specs against one another.
func (r *Run) checkSuite(g types.Report, add func(string, string, ...any)) {
	var failed []string
	its, selected := 0, 0
	sel := reports.Selector(g)
	for _, sr := range g.SpecReports {
		name := sr.FullText()
		if name == "" {
			name = sr.LeafNodeType.String()
		}
		switch {
		case sr.State.Is(types.SpecStatePassed|types.SpecStatePending) && !sr.Failure.IsZero():
			add(InvSpecState, "%q is %s, yet records a failure (%q)", name, sr.State, firstLine(sr.Failure.Message))
		case sr.State.Is(types.SpecStateFailureStates) && sr.Failure.IsZero():
			add(InvSpecState, "%q is %s, yet records no failure", name, sr.State)
		case sr.State == types.SpecStateInvalid:
			add(InvSpecState, "%q has no state", name)
		}
		if sr.State.Is(types.SpecStateFailureStates) {
			failed = append(failed, name)
		}
		if sr.LeafNodeType == types.NodeTypeIt {
			its++
			if sel(sr) {
				selected++
			}
		}
	}
	switch {
	case g.SuiteSucceeded && len(failed) > 0:
		add(InvSuiteSuccess, "the suite says it succeeded, yet %d spec(s) or setup node(s) failed: %s", len(failed), strings.Join(failed, "; "))
	case g.SuiteSucceeded && len(g.SpecialSuiteFailureReasons) > 0:
		add(InvSuiteSuccess, "the suite says it succeeded, yet Ginkgo names its failure: %s", strings.Join(g.SpecialSuiteFailureReasons, "; "))
	case !g.SuiteSucceeded && len(failed) == 0 && len(g.SpecialSuiteFailureReasons) == 0 && !g.SuiteConfig.DryRun:
		add(InvSuiteSuccess, "the suite says it failed, yet no spec or setup node failed and Ginkgo names no failure of the suite")
	}
	total, willRun := g.PreRunStats.TotalSpecs, g.PreRunStats.SpecsThatWillRun
	switch {
	case its > total:
		add(InvPreRunStats, "the record holds %d spec(s), Ginkgo counted %d before the run", its, total)
	case its < total && g.SuiteSucceeded:
		add(InvPreRunStats, "the record holds %d spec(s) of the %d Ginkgo counted before the run, and says the suite succeeded: specs were removed", its, total)
	case its < total:
		r.Missing = total - its // cut short: never handed out
	case selected != willRun:
		add(InvPreRunStats, "the record's selection (label filter, focus and skip) takes %d spec(s); Ginkgo said %d would run", selected, willRun)
	}
	if r.Missing > 0 && selected > willRun {
		add(InvPreRunStats, "the record's selection takes %d spec(s); Ginkgo said %d would run", selected, willRun)
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// checkNodes holds the nodes' names unique, and the readiness at the end
// recorded where the run reached it.
func (r *Run) checkNodes(add func(string, string, ...any)) {
	if r.Cluster != nil {
		seen := map[string]bool{}
		for _, n := range r.Cluster.Nodes {
			if seen[n.Name] {
				add(InvNodeNames, "the cluster's facts name node %q twice: one name, two nodes", n.Name)
			}
			seen[n.Name] = true
		}
	}
	if r.End != nil {
		seen := map[string]bool{}
		for _, n := range r.End.Nodes {
			if seen[n.Name] {
				add(InvNodeNames, "the readiness at the end names node %q twice", n.Name)
			}
			seen[n.Name] = true
		}
	}
	if r.Cluster != nil && r.End == nil && !r.Ended.IsZero() && !interrupted(r) {
		add(InvReadiness, "the run reached its end, and its record has no %s entry (the nodes' readiness at the end): no node can be counted as the run's", record.EndEntry)
	}
}

func interrupted(r *Run) bool {
	return r.Summary.Interrupted || r.Missing > 0
}

// checkEvidence holds every evidence record of the It specs against the
// cluster's facts, and returns the record with each record its cluster
// cannot have made replaced by a partial one saying why (which shows
// nothing): a result on a Windows node (windows-node, domain) names real
// Windows nodes of the build it says; a result on a Windows machine names
// a machine or a node; a Linux result names real Linux nodes; no record
// names a node NotReady for the whole run; no result on Windows comes from
// a run that never reached its cluster.
func (r *Run) checkEvidence(g types.Report, add func(string, string, ...any)) types.Report {
	nodes := map[string]facts.Node{}
	if r.Cluster != nil {
		for _, n := range r.Cluster.Nodes {
			nodes[n.Name] = n
		}
	}
	out := g
	out.SpecReports = slices.Clone(g.SpecReports)
	for i, sr := range out.SpecReports {
		changed := false
		entries := slices.Clone(sr.ReportEntries)
		for j, e := range entries {
			if e.Name != evidence.EntryName {
				continue
			}
			rec, _ := evidence.Parse(e.StringRepresentation()) // checkEntries parsed it
			problems := r.recordProblems(rec, nodes)
			for _, p := range problems {
				add(InvEvidence, "spec %q: a %s record %s", sr.FullText(), rec.Level, p)
			}
			if len(problems) > 0 {
				partial := evidence.Record{Level: rec.Level, Detail: rec.Detail, Partial: "set aside: the record " + problems[0]}
				data, _ := json.Marshal(partial)
				entries[j].Value = types.ReportEntryValue{Representation: string(data)}
				changed = true
			}
		}
		if changed {
			out.SpecReports[i].ReportEntries = entries
		}
	}
	return out
}

func (r *Run) recordProblems(rec evidence.Record, nodes map[string]facts.Node) []string {
	var out []string
	known := r.Cluster != nil
	onWindows := rec.Level.OnWindows()
	switch {
	case !onWindows && rec.Level != claims.Linux:
		return nil // the API server's, or the scheduler's (on nodes made during the run)
	case onWindows && !known:
		return []string{"on a cluster the run never reached"}
	case (rec.Level == claims.WindowsNode || rec.Level == claims.Domain) && len(rec.Nodes) == 0:
		out = append(out, "names no node (a result on a Windows node names the nodes it was obtained on)")
	case rec.Level == claims.WindowsMachine && len(rec.Nodes)+len(rec.Machines) == 0:
		out = append(out, "names no machine and no node")
	}
	for _, name := range rec.Nodes {
		n, ok := nodes[name]
		switch {
		case !known:
		case !ok:
			out = append(out, fmt.Sprintf("names node %s, which the cluster did not have", name))
		case n.Simulated:
			out = append(out, fmt.Sprintf("names node %s, which is simulated (kwok): it shows nothing of %s", name, rec.Level))
		case onWindows && n.OS != "windows":
			out = append(out, fmt.Sprintf("names node %s, a %s node", name, n.OS))
		case !onWindows && n.OS != "linux":
			out = append(out, fmt.Sprintf("names node %s, a %s node", name, n.OS))
		case onWindows && evidence.BuildOf(rec.Build) != buildOf(n):
			out = append(out, fmt.Sprintf("says build %s for node %s, whose build is %s", noneIfEmpty(rec.Build), name, noneIfEmpty(n.WindowsBuild)))
		case !n.Ready && r.End != nil && !r.End.Ready(name):
			out = append(out, fmt.Sprintf("names node %s, which was NotReady at the run's start and at its end", name))
		}
	}
	return out
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// buildOf is a node's build as a record has it: its label when that is a
// build, else none.
func buildOf(n facts.Node) string {
	if (evidence.Record{Level: claims.WindowsNode, Build: n.WindowsBuild}).Check() != nil {
		return ""
	}
	return evidence.BuildOf(n.WindowsBuild)
}

// checkMatrix holds the matrix entry of the record and the matrix file
// together: a record that probed has the file it wrote, unchanged; a file
// comes with a record that probed.
func (r *Run) checkMatrix(g types.Report, add func(string, string, ...any)) {
	var probed *record.Matrix
	for _, sr := range g.SpecReports {
		for _, e := range sr.ReportEntries {
			if e.Name == record.MatrixEntry {
				var m record.Matrix
				if err := record.Decode(e.StringRepresentation(), &m); err != nil {
					add(InvMatrix, "the %s entry cannot be read: %v", record.MatrixEntry, err)
					return
				}
				if probed != nil {
					add(InvMatrix, "the record holds two %s entries", record.MatrixEntry)
				}
				probed = &m
			}
		}
	}
	switch {
	case probed == nil && r.Matrix != nil:
		add(InvMatrix, "%s is there, but the record never probed the matrix: the file is not this record's", reports.MatrixFile)
	case probed != nil && r.Matrix == nil && r.Dir != "":
		add(InvMatrix, "the record probed the matrix (%d cell(s)), and %s is missing", probed.Cells, reports.MatrixFile)
	case probed != nil && r.Matrix != nil && probed.SHA256 != r.matrixSum:
		add(InvMatrix, "%s is not the file the run wrote (its digest %s; the record's %s)", reports.MatrixFile, r.matrixSum, probed.SHA256)
	}
}

// checkStart holds the record's start and end within run.json's.
func (r *Run) checkStart(g types.Report, add func(string, string, ...any)) {
	st := r.State
	if st == nil || g.StartTime.IsZero() {
		return
	}
	if g.StartTime.Before(st.Started.Add(-slack)) {
		add(InvStart, "the record starts %s, before its run started (%s, %s)", stamp(g.StartTime), stamp(st.Started), RunFile)
	}
	if st.Ended != nil && g.EndTime.After(st.Ended.Add(slack)) {
		add(InvStart, "the record ends %s, after its run ended (%s, %s)", stamp(g.EndTime), stamp(*st.Ended), RunFile)
	}
	if st.Ended != nil && g.StartTime.After(st.Ended.Add(slack)) {
		add(InvStart, "the record starts %s, after its run ended (%s, %s)", stamp(g.StartTime), stamp(*st.Ended), RunFile)
	}
}

// checkSkips holds each skip reason against the cluster's facts where the
// facts (read at the start) decide it: no Windows node while a real one
// was Ready at the start; a managed control plane, with a control-plane
// node in the facts. (Simulated nodes are made during the run, after the
// facts: simulated-node-only is not the facts' to decide.)
func (r *Run) checkSkips(add func(string, string, ...any)) {
	if r.Cluster == nil {
		return
	}
	var readyWindows, controlPlane []string
	for _, n := range r.Cluster.Nodes {
		switch {
		case n.Simulated:
			continue
		case n.OS == "windows" && n.Ready:
			readyWindows = append(readyWindows, n.Name)
		}
		if n.ControlPlane {
			controlPlane = append(controlPlane, n.Name)
		}
	}
	for _, sp := range r.Summary.Specs {
		switch {
		case sp.SkipReason == skips.NoWindowsNode.Key && len(readyWindows) > 0:
			add(InvSkipReasons, "spec %q skipped for %q, and the cluster had the Ready Windows node(s) %s", sp.Name, sp.SkipReason, strings.Join(readyWindows, ", "))
		case sp.SkipReason == skips.ManagedControlPlane.Key && len(controlPlane) > 0:
			add(InvSkipReasons, "spec %q skipped for %q, and the cluster's facts have the control-plane node(s) %s", sp.Name, sp.SkipReason, strings.Join(controlPlane, ", "))
		}
	}
}
