// Package diff compares a run with a baseline run (last night's, or the
// last release's): claims newly failing and newly fixed, every outcome
// that changed, evidence gained or lost per claim, matrix cells whose
// observation or verdict changed, ledger verdicts that changed, and the
// clusters on each side (Windows builds, server versions, and whether their
// shapes differ). It writes diff.md and diff.json.
package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// Format names the layout of diff.json.
const Format = "winconform.diff/v1"

// Files the diff is written to.
const (
	JSONFile     = "diff.json"
	MarkdownFile = "diff.md"
)

// Side is one run of the comparison.
type Side struct {
	Dir string `json:"dir"`
	// RunID is the run's ID, as its summary has it; Record the digest of
	// its record as read (rundir.Run.Digest), which binds the diff to it.
	RunID                 string   `json:"runID,omitempty"`
	Record                string   `json:"record,omitempty"`
	Status                string   `json:"status"`
	Headline              string   `json:"headline"`
	ClusterKnown          bool     `json:"clusterKnown"`
	ServerVersion         string   `json:"serverVersion,omitempty"`
	CNI                   string   `json:"cni,omitempty"`
	LinuxNodes            int      `json:"linuxNodes"`
	WindowsNodes          int      `json:"windowsNodes"`
	SimulatedWindowsNodes int      `json:"simulatedWindowsNodes,omitempty"`
	WindowsBuilds         []string `json:"windowsBuilds,omitempty"`
	Shown                 int      `json:"shown"`
	ShownOnWindows        int      `json:"shownOnWindows"`
}

// Describe is the side's cluster in a few words.
func (s Side) Describe() string {
	if !s.ClusterKnown {
		return "cluster unknown (the run did not reach it)"
	}
	builds := "no Windows build"
	if len(s.WindowsBuilds) > 0 {
		builds = "Windows builds " + strings.Join(s.WindowsBuilds, ", ")
	}
	return fmt.Sprintf("Kubernetes %s, %s, %d Linux and %d Windows node(s), %s", orUnknown(s.ServerVersion), orUnknown(s.CNI), s.LinuxNodes, s.WindowsNodes, builds)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ClaimChange is a claim whose outcome or evidence changed.
type ClaimChange struct {
	Claim  string `json:"claim"`
	Title  string `json:"title"`
	Before string `json:"before"` // the outcome in the baseline
	After  string `json:"after"`
	// Evidence counts passing specs per level on each side.
	BeforeEvidence map[claims.Level]int `json:"beforeEvidence,omitempty"`
	AfterEvidence  map[claims.Level]int `json:"afterEvidence,omitempty"`
	Gained         []claims.Level       `json:"gained,omitempty"`
	Lost           []claims.Level       `json:"lost,omitempty"`
	// Change says it in words: "shown (windows-node 2) before, supported
	// (linux twin) now".
	Change string `json:"change"`
	// Why is the current run's reason for the outcome.
	Why string `json:"why,omitempty"`
}

// CellState is a matrix cell's observation and verdict.
type CellState struct {
	Observed string `json:"observed"`
	Verdict  string `json:"verdict"`
}

func (c *CellState) String() string {
	if c == nil {
		return "absent"
	}
	return c.Verdict + " (" + c.Observed + ")"
}

// CellChange is a matrix cell whose observation or verdict changed, or that
// one side lacks.
type CellChange struct {
	Source string     `json:"source"`
	Target string     `json:"target"`
	Claims []string   `json:"claims,omitempty"`
	Before *CellState `json:"before"`
	After  *CellState `json:"after"`
	Repro  string     `json:"repro,omitempty"`
}

// LedgerChange is a ledger entry whose verdict changed, or that one side lacks.
type LedgerChange struct {
	Claim          string `json:"claim"`
	Spec           string `json:"spec"`
	Source         string `json:"source,omitempty"`
	Before         string `json:"before"` // verdict, or "absent"
	After          string `json:"after"`
	ObservedBefore string `json:"observedBefore,omitempty"`
	ObservedAfter  string `json:"observedAfter,omitempty"`
}

// Diff is what changed from a baseline run to a run.
type Diff struct {
	Format string `json:"format"`
	// Stamp is the compared run's ID (Report.RunID: the run whose
	// report.html shows this diff) and the harness that compared.
	version.Stamp
	Baseline Side `json:"baseline"`
	Report   Side `json:"report"`
	// ShapeChanges lists how the clusters' shapes differ (node counts by
	// OS, CNI); empty when they are alike.
	ShapeChanges []string `json:"shapeChanges,omitempty"`
	// BuildChanges and VersionChange say what moved that a build gate
	// compares (not a change of shape).
	BuildChanges  []string `json:"buildChanges,omitempty"`
	VersionChange string   `json:"versionChange,omitempty"`
	NewlyFailing  []string `json:"newlyFailing"`
	NewlyFixed    []string `json:"newlyFixed"`
	// LostShown lists claims shown in the baseline and not now.
	LostShown []string `json:"lostShown"`
	// NotRunNow lists claims this run did not select (a narrower run):
	// they are not compared.
	NotRunNow []string `json:"notRunNow,omitempty"`
	// OnlyInReport and OnlyInBaseline list the claims of one side's
	// catalogue that the other's lacks (a baseline recorded under an older
	// catalogue): claims compare by ID; a claim only in the report's that
	// fails now is newly failing, the others are not compared.
	OnlyInReport   []string      `json:"onlyInReport,omitempty"`
	OnlyInBaseline []string      `json:"onlyInBaseline,omitempty"`
	Claims         []ClaimChange `json:"claims"`
	// MatrixCompared and LedgerCompared say whether both runs had them.
	MatrixCompared bool           `json:"matrixCompared"`
	Cells          []CellChange   `json:"cells"`
	LedgerCompared bool           `json:"ledgerCompared"`
	Ledger         []LedgerChange `json:"ledger"`
	// Notes say what could not be compared.
	Notes []string `json:"notes,omitempty"`
}

// failing outcomes: a claim that has one of these is failing.
var failing = []string{reports.Failed, reports.Blocked}

// Failing says whether outcome counts as failing.
func Failing(outcome string) bool { return slices.Contains(failing, outcome) }

func side(r *rundir.Run) Side {
	s, c := r.Summary, r.Summary.Cluster
	return Side{Dir: r.Dir, RunID: s.RunID, Record: r.Digest, Status: s.Status, Headline: s.Headline, ClusterKnown: c.Known, ServerVersion: c.ServerVersion, CNI: c.CNI,
		LinuxNodes: c.LinuxNodes, WindowsNodes: c.WindowsNodes, SimulatedWindowsNodes: c.SimulatedWindowsNodes,
		WindowsBuilds: c.WindowsBuilds, Shown: s.Shown, ShownOnWindows: s.ShownOnWindows}
}

// Compare finds what changed from base to cur.
func Compare(base, cur *rundir.Run) Diff {
	d := Diff{Format: Format, Stamp: version.For(cur.Summary.RunID), Baseline: side(base), Report: side(cur),
		NewlyFailing: []string{}, NewlyFixed: []string{}, LostShown: []string{}, Claims: []ClaimChange{}, Cells: []CellChange{}, Ledger: []LedgerChange{}}
	d.ShapeChanges = shape(d.Baseline, d.Report)
	if b, a := d.Baseline.WindowsBuilds, d.Report.WindowsBuilds; !slices.Equal(b, a) {
		d.BuildChanges = append(d.BuildChanges, fmt.Sprintf("Windows builds %s -> %s", list(b), list(a)))
	}
	if b, a := d.Baseline.ServerVersion, d.Report.ServerVersion; b != a {
		d.VersionChange = fmt.Sprintf("Kubernetes %s -> %s", orUnknown(b), orUnknown(a))
	}
	d.compareClaims(base, cur)
	if b, a := base.Record.Catalogue, cur.Record.Catalogue; b != a {
		d.Notes = append(d.Notes, fmt.Sprintf("the baseline was recorded under claim catalogue %s, this run under %s: claims compare by ID", orUnknown(b), orUnknown(a)))
	}
	if n := len(d.OnlyInReport); n > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d claim(s) of this run's catalogue that the baseline's lacks are compared with nothing (failing now, they are newly failing): %s", n, strings.Join(d.OnlyInReport, ", ")))
	}
	if n := len(d.OnlyInBaseline); n > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d claim(s) of the baseline's catalogue that this run's lacks are not compared: %s", n, strings.Join(d.OnlyInBaseline, ", ")))
	}
	if n := len(d.NotRunNow); n > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d claim(s) this run did not select (not run) are not compared: %s", n, strings.Join(d.NotRunNow, ", ")))
	}
	switch {
	case base.Matrix != nil && cur.Matrix != nil:
		d.MatrixCompared = true
		d.compareCells(base, cur)
	case base.Matrix != nil:
		d.Notes = append(d.Notes, "the baseline probed the network matrix and this run did not: no cell is compared")
	case cur.Matrix != nil:
		d.Notes = append(d.Notes, "this run probed the network matrix and the baseline did not: no cell is compared")
	default:
		d.Notes = append(d.Notes, "neither run probed the network matrix: no cell is compared")
	}
	d.LedgerCompared = true
	d.compareLedger(base.Ledger, cur.Ledger)
	return d
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// shape lists how two clusters differ in shape: real nodes by OS, CNI.
func shape(b, a Side) []string {
	if !b.ClusterKnown || !a.ClusterKnown {
		var out []string
		if !b.ClusterKnown {
			out = append(out, "the baseline's cluster is unknown (its run did not reach it)")
		}
		if !a.ClusterKnown {
			out = append(out, "this run's cluster is unknown (the run did not reach it)")
		}
		return out
	}
	var out []string
	if b.LinuxNodes != a.LinuxNodes {
		out = append(out, fmt.Sprintf("Linux nodes %d -> %d", b.LinuxNodes, a.LinuxNodes))
	}
	if b.WindowsNodes != a.WindowsNodes {
		out = append(out, fmt.Sprintf("Windows nodes %d -> %d", b.WindowsNodes, a.WindowsNodes))
	}
	if b.CNI != a.CNI {
		out = append(out, fmt.Sprintf("CNI %s -> %s", orUnknown(b.CNI), orUnknown(a.CNI)))
	}
	return out
}

// compareClaims compares the claims both runs' catalogues have, by ID.
func (d *Diff) compareClaims(base, cur *rundir.Run) {
	before := map[string]reports.Claim{}
	for _, c := range base.Summary.Claims {
		before[c.ID] = c
	}
	for _, id := range base.Record.Claims {
		if !slices.Contains(cur.Record.Claims, id) {
			d.OnlyInBaseline = append(d.OnlyInBaseline, id)
		}
	}
	for _, c := range cur.Summary.Claims {
		b, ok := before[c.ID]
		if base.Recorded && !slices.Contains(base.Record.Claims, c.ID) {
			// A claim the baseline's catalogue lacks was no claim there:
			// failing now, it is newly failing.
			d.OnlyInReport = append(d.OnlyInReport, c.ID)
			if !Failing(c.Outcome) {
				continue
			}
			b, ok = reports.Claim{ID: c.ID, Outcome: "absent"}, true
		}
		if !ok {
			b = reports.Claim{ID: c.ID, Outcome: "absent"}
		}
		if c.Outcome == reports.NotRun && b.Outcome != reports.NotRun {
			d.NotRunNow = append(d.NotRunNow, c.ID)
			continue
		}
		gained, lost := levels(b.Evidence, c.Evidence)
		if b.Outcome == c.Outcome && len(gained) == 0 && len(lost) == 0 {
			continue
		}
		ch := ClaimChange{Claim: c.ID, Title: c.Title, Before: b.Outcome, After: c.Outcome, BeforeEvidence: nonzero(b.Evidence),
			AfterEvidence: nonzero(c.Evidence), Gained: gained, Lost: lost, Why: c.Why}
		ch.Change = Describe(b) + " before, " + Describe(c) + " now"
		d.Claims = append(d.Claims, ch)
		switch {
		case Failing(c.Outcome) && !Failing(b.Outcome):
			d.NewlyFailing = append(d.NewlyFailing, c.ID)
		case Failing(b.Outcome) && !Failing(c.Outcome) && !slices.Contains([]string{reports.Interrupted, reports.NotRun, reports.NotCovered}, c.Outcome):
			d.NewlyFixed = append(d.NewlyFixed, c.ID)
		}
		if b.Outcome == reports.Shown && c.Outcome != reports.Shown {
			d.LostShown = append(d.LostShown, c.ID)
		}
	}
}

func nonzero(m map[claims.Level]int) map[claims.Level]int {
	out := map[claims.Level]int{}
	for l, n := range m {
		if n > 0 {
			out[l] = n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// levels lists the levels with passing specs now and none before (gained),
// and the other way round (lost), in the catalogue's order of levels.
func levels(before, after map[claims.Level]int) (gained, lost []claims.Level) {
	for _, l := range claims.Levels {
		switch {
		case before[l] == 0 && after[l] > 0:
			gained = append(gained, l)
		case before[l] > 0 && after[l] == 0:
			lost = append(lost, l)
		}
	}
	return gained, lost
}

// Describe puts a claim's outcome and its evidence in a few words:
// "shown (windows-node 2)", "supported (linux twin)", "failed". A shown
// claim's evidence is that of the specs that show it.
func Describe(c reports.Claim) string {
	var ev []string
	for _, l := range claims.Levels {
		n := c.Evidence[l]
		if c.Outcome == reports.Shown && c.Shown != nil {
			n = 0
			for _, s := range c.Shown {
				if s.Level == l {
					n += s.Specs
				}
			}
		}
		if n > 0 {
			ev = append(ev, fmt.Sprintf("%s %d", l, n))
		}
	}
	switch {
	case c.Outcome == reports.Supported && len(c.SupportedBy) > 0:
		return "only supported (" + strings.Join(c.SupportedBy, ", ") + ")"
	case len(ev) > 0:
		return c.Outcome + " (" + strings.Join(ev, ", ") + ")"
	}
	return c.Outcome
}

func cellKey(source, target string) string { return source + " -> " + target }

func (d *Diff) compareCells(base, cur *rundir.Run) {
	before := map[string]CellState{}
	for _, c := range base.Matrix.Cells {
		before[cellKey(c.Source, c.Target)] = CellState{Observed: string(c.Observed), Verdict: string(c.Verdict)}
	}
	seen := map[string]bool{}
	for _, c := range cur.Matrix.Cells {
		k := cellKey(c.Source, c.Target)
		seen[k] = true
		now := &CellState{Observed: string(c.Observed), Verdict: string(c.Verdict)}
		var was *CellState
		if b, ok := before[k]; ok {
			if b == *now {
				continue
			}
			was = &b
		}
		d.Cells = append(d.Cells, CellChange{Source: c.Source, Target: c.Target, Claims: c.Claims, Before: was, After: now, Repro: c.Repro})
	}
	for _, c := range base.Matrix.Cells {
		if k := cellKey(c.Source, c.Target); !seen[k] {
			b := before[k]
			d.Cells = append(d.Cells, CellChange{Source: c.Source, Target: c.Target, Claims: c.Claims, Before: &b})
		}
	}
}

func ledgerKey(e reports.LedgerEntry) string { return e.Claim + "|" + e.Spec + "|" + e.Source }

func (d *Diff) compareLedger(base, cur []reports.LedgerEntry) {
	before := map[string]reports.LedgerEntry{}
	for _, e := range base {
		before[ledgerKey(e)] = e
	}
	seen := map[string]bool{}
	for _, e := range cur {
		k := ledgerKey(e)
		seen[k] = true
		ch := LedgerChange{Claim: e.Claim, Spec: e.Spec, Source: e.Source, Before: "absent", After: string(e.Verdict), ObservedAfter: string(e.Observed)}
		if b, ok := before[k]; ok {
			if b.Verdict == e.Verdict {
				continue
			}
			ch.Before, ch.ObservedBefore = string(b.Verdict), string(b.Observed)
		}
		d.Ledger = append(d.Ledger, ch)
	}
	for _, e := range base {
		if !seen[ledgerKey(e)] && !slices.Contains(d.NotRunNow, e.Claim) {
			d.Ledger = append(d.Ledger, LedgerChange{Claim: e.Claim, Spec: e.Spec, Source: e.Source, Before: string(e.Verdict),
				ObservedBefore: string(e.Observed), After: "absent"})
		}
	}
	sort.SliceStable(d.Ledger, func(i, j int) bool { return claims.Less(d.Ledger[i].Claim, d.Ledger[j].Claim) })
}

// Empty says whether nothing changed.
func (d Diff) Empty() bool {
	return len(d.Claims) == 0 && len(d.Cells) == 0 && len(d.Ledger) == 0 && len(d.ShapeChanges) == 0 &&
		len(d.BuildChanges) == 0 && d.VersionChange == ""
}

// Markdown renders the diff for people.
func (d Diff) Markdown() string {
	var b strings.Builder
	b.WriteString("# What changed since the baseline\n\n")
	fmt.Fprintf(&b, "| | baseline | this run |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| report | `%s` | `%s` |\n", d.Baseline.Dir, d.Report.Dir)
	fmt.Fprintf(&b, "| status | %s | %s |\n", cell(d.Baseline.Status), cell(d.Report.Status))
	fmt.Fprintf(&b, "| cluster | %s | %s |\n", cell(d.Baseline.Describe()), cell(d.Report.Describe()))
	fmt.Fprintf(&b, "| shown | %d (on Windows %d) | %d (on Windows %d) |\n\n", d.Baseline.Shown, d.Baseline.ShownOnWindows, d.Report.Shown, d.Report.ShownOnWindows)
	if len(d.ShapeChanges) > 0 {
		fmt.Fprintf(&b, "**The clusters differ in shape:** %s. Outcomes that changed may come from the cluster, not the build.\n\n", strings.Join(d.ShapeChanges, "; "))
	}
	for _, s := range append(append([]string{}, d.BuildChanges...), d.VersionChange) {
		if s != "" {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	if len(d.BuildChanges) > 0 || d.VersionChange != "" {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Newly failing: %s. Newly fixed: %s. No longer shown: %s.\n\n", ids(d.NewlyFailing), ids(d.NewlyFixed), ids(d.LostShown))
	b.WriteString("## Claims whose outcome or evidence changed\n\n")
	if len(d.Claims) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| claim | before | now | evidence gained | evidence lost | change |\n|---|---|---|---|---|---|\n")
		for _, c := range d.Claims {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Claim, c.Before, c.After, joinLevels(c.Gained), joinLevels(c.Lost), cell(c.Change))
		}
	}
	b.WriteString("\n## Network matrix cells that changed\n\n")
	switch {
	case !d.MatrixCompared:
		b.WriteString("Not compared (one side has no network matrix).\n")
	case len(d.Cells) == 0:
		b.WriteString("None.\n")
	default:
		b.WriteString("| source | target | claims | before | now | reproduce |\n|---|---|---|---|---|---|\n")
		for _, c := range d.Cells {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | `%s` |\n", cell(c.Source), cell(c.Target), strings.Join(c.Claims, ", "), c.Before, c.After, cell(c.Repro))
		}
	}
	b.WriteString("\n## Ledger verdicts that changed\n\n")
	switch {
	case !d.LedgerCompared:
		b.WriteString("Not compared (one side has no ledger).\n")
	case len(d.Ledger) == 0:
		b.WriteString("None.\n")
	default:
		b.WriteString("| claim | spec | before | now |\n|---|---|---|---|\n")
		for _, l := range d.Ledger {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", l.Claim, cell(l.Spec+src(l.Source)), withObs(l.Before, l.ObservedBefore), withObs(l.After, l.ObservedAfter))
		}
	}
	if len(d.Notes) > 0 {
		b.WriteString("\n## Not compared\n\n")
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func src(s string) string {
	if s == "" {
		return ""
	}
	return " [" + s + "]"
}

func withObs(verdict, observed string) string {
	if observed == "" {
		return verdict
	}
	return verdict + " (observed " + observed + ")"
}

func ids(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func joinLevels(ls []claims.Level) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return strings.Join(out, ", ")
}

func cell(s string) string { return reports.Cell(s, 300) }

// Write puts diff.json and diff.md into dir.
func (d Diff) Write(dir string) error {
	return reports.WriteFiles(dir, JSONFile, MarkdownFile, d, d.Markdown())
}

// Read reads dir/diff.json; ok is false when there is none.
func Read(dir string) (d Diff, ok bool, err error) {
	return reports.ReadJSON(dir, JSONFile, Format, "`winconform diff` or `winconform gate --baseline`", func(v Diff) string { return v.Format })
}

// Verify compares again the diff stored (diff.json as read) for run: it
// must be of this run's record (its digest), its baseline must load and
// hold the record it was compared with, and the comparison made again
// must be the stored one. It returns the comparison made again, the one
// to show.
func Verify(stored Diff, run *rundir.Run) (Diff, error) {
	switch {
	case stored.Report.RunID != run.Record.RunID:
		return Diff{}, fmt.Errorf("it compares run %s, not this run (%s)", orUnknown(stored.Report.RunID), orUnknown(run.Record.RunID))
	case stored.Report.Record != run.Digest:
		return Diff{}, fmt.Errorf("it was made of another record (%s) than this directory holds (%s)", orUnknown(stored.Report.Record), run.Digest)
	}
	base, err := rundir.Load(stored.Baseline.Dir)
	if err != nil {
		return Diff{}, fmt.Errorf("its baseline cannot be read again: %v", err)
	}
	if base.Digest != stored.Baseline.Record {
		return Diff{}, fmt.Errorf("its baseline %s holds another record (%s) than it was compared with (%s)", stored.Baseline.Dir, base.Digest, orUnknown(stored.Baseline.Record))
	}
	if err := rundir.CheckBaseline(base, run); err != nil {
		return Diff{}, err
	}
	again := Compare(base, run)
	key := func(d Diff) string {
		d.Stamp = version.Stamp{}
		data, _ := json.Marshal(d)
		return string(data)
	}
	if key(again) != key(stored) {
		return Diff{}, fmt.Errorf("comparing the two records again gives another diff: it does not follow from them")
	}
	return again, nil
}
