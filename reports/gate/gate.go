// Package gate decides whether a run lets a release ship under a policy
// (reports/policy): every claim the policy requires must be shown, on the
// evidence it asks for; failures elsewhere, drift, flakes, and what changed
// since a baseline run do what the policy says; accepted known issues waive
// an observed failure of what they name until they expire. Every decision
// is listed with its reason in gate.md and gate.json. Nothing here follows
// a link or fetches anything.
//
// The gate cannot be talked into SHIP by its inputs, by construction:
//   - it decides from the run's record alone (rundir: Ginkgo's report with
//     each spec's evidence, the run's entry, the cluster's facts; the
//     network matrix; run.json), recomputing the summary, never reading a
//     file derived from the record;
//   - the claims it requires are the catalogue's that the policy selects,
//     and a run recorded under another catalogue is refused;
//   - a policy that selects nothing, at the level it asks, is refused;
//   - a known issue waives one observed failure of what it names: never a
//     skip, a twin, a setup that blocked a spec, or a flake another claim
//     shares; and its expiry is read on the run's day or later;
//   - a run that never reached its end, was interrupted, or holds a record
//     its cluster cannot have made (a Windows node it did not have, of a
//     build it did not run) never ships (CheckRecord).
package gate

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/diff"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
)

// Format names the layout of gate.json.
const Format = "winconform.gate/v1"

// Files the gate writes.
const (
	JSONFile     = "gate.json"
	MarkdownFile = "gate.md"
)

// The gate's verdicts.
const (
	Ship    = "ship"
	Blocked = "blocked"
)

// Decision is what one finding does.
type Decision string

// Decisions.
const (
	Pass   Decision = "pass"   // a requirement met
	Block  Decision = "block"  // blocks the release
	Report Decision = "report" // listed; does not block
	Waived Decision = "waived" // would block; an accepted known issue waives it
)

// Kinds of findings.
const (
	KindRequired = "required" // a claim the policy requires
	KindFailure  = "failure"  // a failure outside the required claims
	KindDrift    = "drift"    // a documented limitation found lifted
	KindFlake    = "flake"    // a spec passed on a retry, a matrix cell's probes disagreed
	KindCluster  = "cluster"  // what the policy asks of the cluster
	KindBaseline = "baseline" // a change since the baseline
	KindIssue    = "known-issue"
	KindRun      = "run" // the run itself: interrupted
)

// Item is one decision.
type Item struct {
	Kind  string `json:"kind"`
	Claim string `json:"claim,omitempty"`
	// Spec is set for findings about one spec; Cell for a matrix cell.
	Spec     string   `json:"spec,omitempty"`
	Cell     string   `json:"cell,omitempty"`
	Required string   `json:"required,omitempty"` // what the policy asks
	Got      string   `json:"got"`                // what the run had
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason"`
	// Cause is the finding's root cause, said without its subject, so that
	// the findings of one cause group together ("no Windows node: ...").
	Cause string `json:"cause,omitempty"`
	// KnownIssue is the known issue applied (waiving, or expired).
	KnownIssue *config.KnownIssue `json:"knownIssue,omitempty"`
	// specs are the failing specs the item is about, for known issues by
	// spec; owners the claims whose failure it is (a matrix cell or a spec
	// may be several claims'), for known issues by claim.
	specs  []string
	owners []string
	// outcome is the claim's outcome, for ordering.
	outcome string
	// waivable marks an observed failure: a spec that ran and failed at a
	// level that shows what it is about, a flake, a drift. What was not
	// observed (a skip, a Linux twin, a level or build below the policy's,
	// a setup that blocked the spec, an unknown cluster) is no failure
	// anyone looked at, and no known issue waives it.
	waivable bool
}

// rank orders items for people: the cluster, then failures (claims and
// specs that failed, flakes, claims newly failing), then drift, then the rest.
func (it Item) rank() int {
	switch {
	case it.Kind == KindCluster || it.Kind == KindRun:
		return 0
	case it.Kind == KindFailure || it.Kind == KindFlake || it.outcome == reports.Failed || it.outcome == reports.Blocked,
		it.Kind == KindBaseline && strings.HasPrefix(it.Reason, "newly failing"):
		return 1
	case it.Kind == KindDrift:
		return 2
	}
	return 3
}

// Subject names what the item is about.
func (it Item) Subject() string {
	switch {
	case it.Claim != "" && it.Cell != "":
		return it.Claim + " " + it.Cell
	case it.Claim != "":
		return it.Claim
	case it.Spec != "":
		return "spec " + it.Spec
	case it.Cell != "":
		return "cell " + it.Cell
	}
	return it.Kind
}

// Result is the gate's decision on a run.
type Result struct {
	Format string `json:"format"`
	// Stamp is the gated run's ID (its summary's: report.html shows the
	// gate only beside that run's results) and the harness that gated.
	version.Stamp
	Decision   string `json:"decision"` // ship or blocked
	Policy     string `json:"policy"`
	PolicyFile string `json:"policyFile"`
	Report     string `json:"report"`
	Baseline   string `json:"baseline,omitempty"`
	// Now is the day known issues' expiry dates were read against: the day
	// asked for, or today, never before the run's start.
	Now      string `json:"now"`
	Status   string `json:"status"`   // the run's status line
	Headline string `json:"headline"` // the run's headline
	// PreRelease is the cluster's Kubernetes when it was a pre-release
	// (v1.38.0-beta.0), else empty.
	PreRelease string `json:"preRelease,omitempty"`
	// Reasons lists every blocking finding in one line each.
	Reasons []string `json:"reasons"`
	// Groups are the blocking findings by root cause, the causes in the
	// order of their first finding.
	Groups []Group `json:"groups"`
	// Required counts the claims the policy requires; Met those that pass.
	Required int    `json:"required"`
	Met      int    `json:"met"`
	Items    []Item `json:"items"`
	// Inputs are what the decision was made from, bound to the records it
	// read: whoever holds the run's directory (and the baseline's) decides
	// again from them (Verify), and report shows only a verdict that
	// follows.
	Inputs Inputs `json:"inputs"`
	// Diff is the comparison with the baseline, when one was given.
	Diff *diff.Diff `json:"-"`
	// baselineManifest is the baseline's manifest digest, for the
	// statement (Statement).
	baselineManifest string
	// run is the run decided on, and decidedAt when: Write writes the
	// statement of a decision made here (not of one read back).
	run       *rundir.Run
	decidedAt time.Time
}

// Inputs are a decision's inputs: the digest of the run's record
// (rundir.Run.Digest), the policy as decided on, the baseline's directory
// and record digest, and the builds asked for beside the policy's.
type Inputs struct {
	Record         string            `json:"record"`
	Policy         config.GatePolicy `json:"policy"`
	Baseline       string            `json:"baseline,omitempty"`
	BaselineRecord string            `json:"baselineRecord,omitempty"`
	WindowsBuilds  []string          `json:"windowsBuilds,omitempty"`
}

// Group is the blocking findings of one root cause.
type Group struct {
	Cause string `json:"cause"`
	// Subjects name what the cause blocks: claims, specs, cells, "cluster".
	Subjects []string `json:"subjects"`
}

// Line is the group in one line: its cause, and what it blocks.
func (g Group) Line() string {
	if len(g.Subjects) == 1 && strings.Contains(g.Cause, g.Subjects[0]) {
		return g.Cause
	}
	return fmt.Sprintf("%s (%d): %s", g.Cause, len(g.Subjects), strings.Join(g.Subjects, ", "))
}

// Blocked says whether the release is blocked.
func (r Result) Blocked() bool { return r.Decision == Blocked }

// Input is what the gate decides from.
type Input struct {
	Policy     *config.GatePolicy
	PolicyFile string
	Run        *rundir.Run
	// Baseline is nil without --baseline.
	Baseline *rundir.Run
	// Now is the day known issues expire against (UTC): on or after the
	// day the run started.
	Now time.Time
	// WindowsBuilds are builds the cluster must have had, beside the
	// policy's (the build a release gate is for).
	WindowsBuilds []string
}

// Root causes that many findings share.
const (
	CauseNoWindows      = "no Windows node: the cluster had no real Windows node, so nothing could be shown on Windows"
	CauseUnknownCluster = "the cluster is unknown: the run did not reach it"
	CausePreRelease     = "a pre-release of Kubernetes: the policy does not allow one (cluster.allowPreRelease)"
)

const causeDrift = "drift: a documented limitation no longer holds, and this server version does not explain it"

func causeBuild(b string) string {
	return "nothing shown on Windows build " + b + " (a release gate for a build counts only results obtained on that build)"
}

// ErrUnusable marks an input the gate cannot decide on (exit status 2).
var ErrUnusable = errors.New("unusable input")

// Decide decides. An error (ErrUnusable) means an input is unusable: a
// policy that selects nothing, a run whose record the gate cannot decide
// on (CheckRecord), a day before the run's start, a baseline of another
// cluster shape when the policy refuses one.
func Decide(in Input) (Result, error) {
	p := *in.Policy
	if err := config.Errors(policy.Validate(&p)); err != nil {
		return Result{}, fmt.Errorf("%w: policy %s: %v", ErrUnusable, in.PolicyFile, err)
	}
	in.Policy = &p
	if err := CheckRecord(in.Run); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrUnusable, err)
	}
	if start := day(in.Run.Started); day(in.Now).Before(start) {
		return Result{}, fmt.Errorf("%w: known issues cannot be read as of %s, before run %s started (%s): the decision's day is the run's or later (--now %s, or leave --now out)",
			ErrUnusable, in.Now.UTC().Format(config.DateLayout), in.Run.Summary.RunID, start.Format(config.DateLayout), start.Format(config.DateLayout))
	}
	s := in.Run.Summary
	res := Result{Format: Format, Stamp: version.For(s.RunID), Policy: p.Name, PolicyFile: in.PolicyFile, Report: in.Run.Dir, Now: in.Now.UTC().Format(config.DateLayout),
		Status: s.Status, Headline: s.Headline, Reasons: []string{}, Items: []Item{},
		Inputs: Inputs{Record: in.Run.Digest, Policy: *in.Policy, WindowsBuilds: in.WindowsBuilds},
		run:    in.Run, decidedAt: time.Now()}
	if in.Baseline != nil {
		res.Inputs.Baseline, res.Inputs.BaselineRecord = in.Baseline.Dir, in.Baseline.Digest
		res.baselineManifest = in.Baseline.ManifestDigest()
	}
	if c := s.Cluster; c.Known && c.PreRelease {
		res.PreRelease = c.ServerVersion
	}
	g := &gater{in: in, res: &res, cellsByClaim: cellsByClaim(in.Run.Matrix)}
	g.flakes = len(in.Run.Summary.Flaky)
	for _, c := range g.cellsByClaim[""] {
		if c.Verdict == netmatrix.Flaky {
			g.flakes++
		}
	}
	if in.Baseline != nil {
		// A baseline is another, earlier run whose record keeps its
		// contract: the report compared with itself (or a copy of it)
		// would say nothing changed, whatever changed.
		if err := rundir.CheckBaseline(in.Baseline, in.Run); err != nil {
			return Result{}, fmt.Errorf("%w: --baseline: %v", ErrUnusable, err)
		}
		d := diff.Compare(in.Baseline, in.Run)
		res.Diff, res.Baseline = &d, in.Baseline.Dir
		if len(d.ShapeChanges) > 0 && p.Baseline.OtherShape == config.Refuse {
			return res, fmt.Errorf("%w: baseline %s comes from a cluster of another shape (%s), and the policy %s refuses it (baseline.otherShape: refuse): pass a baseline from a cluster of this shape, or set baseline.otherShape: report",
				ErrUnusable, in.Baseline.Dir, strings.Join(d.ShapeChanges, "; "), in.PolicyFile)
		}
	}
	g.run()
	g.cluster()
	g.claims()
	g.specs()
	g.flakeItems()
	g.baseline()
	g.knownIssues()
	sort.SliceStable(res.Items, func(i, j int) bool { return res.Items[i].rank() < res.Items[j].rank() })
	res.Decision = Ship
	res.Groups = []Group{}
	group := map[string]int{}
	for _, it := range res.Items {
		if it.Decision == Block {
			res.Decision = Blocked
			reason := it.Reason
			if it.Claim == "" || !strings.Contains(reason, it.Claim) {
				reason = it.Subject() + ": " + reason
			}
			res.Reasons = append(res.Reasons, reason)
			cause := it.Cause
			if cause == "" {
				cause = reason
			}
			i, ok := group[cause]
			if !ok {
				i = len(res.Groups)
				group[cause] = i
				res.Groups = append(res.Groups, Group{Cause: cause})
			}
			res.Groups[i].Subjects = append(res.Groups[i].Subjects, it.Subject())
		}
	}
	return res, nil
}

type gater struct {
	in           Input
	res          *Result
	cellsByClaim map[string][]*netmatrix.Cell
	flakes       int
}

// cellsByClaim indexes a matrix's cells by claim; "" holds every cell.
func cellsByClaim(m *netmatrix.Report) map[string][]*netmatrix.Cell {
	out := map[string][]*netmatrix.Cell{}
	if m == nil {
		return out
	}
	for _, c := range m.Cells {
		out[""] = append(out[""], c)
		for _, id := range c.Claims {
			out[id] = append(out[id], c)
		}
	}
	return out
}

func (g *gater) add(it Item) { g.res.Items = append(g.res.Items, it) }

// day is t's day, UTC.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// run blocks a run that did not run to its end: an interrupt or the
// suite's time limit cut it short, so what it did not reach is unseen,
// whatever the claims it reached say.
func (g *gater) run() {
	if g.in.Run.Summary.Interrupted {
		g.add(Item{Kind: KindRun, Required: "a run that ran to its end", Got: "interrupted (a partial report)", Decision: Block,
			Cause:  "the run was interrupted: an incomplete run never ships",
			Reason: "the run was interrupted (by a signal or the suite's time limit) before its end: an incomplete run never ships; rerun the suites"})
	}
	// Every selected spec ran, or carries the reason it did not (a skip,
	// a setup that blocked it): else the run is incomplete, whatever the
	// claims it reached say (an aborted suite, --fail-fast).
	if inc := g.in.Run.Incomplete(); len(inc) > 0 {
		g.add(Item{Kind: KindRun, Required: "every selected spec ran, or carries the reason it did not", Got: fmt.Sprintf("%d spec(s) never ran to their end", len(inc)), Decision: Block,
			Cause:  "the run is incomplete: specs it selected never ran, and an incomplete run never ships",
			Reason: fmt.Sprintf("the run is incomplete: %d selected spec(s) never ran to their end (%s); rerun the suites", len(inc), short(strings.Join(inc, "; ")))})
	}
	// A spec labelled with a claim the catalogue lacks shows no claim it
	// names: a failure nobody can look up, and no policy waives it.
	for _, c := range g.in.Run.Summary.Claims {
		if c.Kind == reports.UnknownClaim {
			g.add(Item{Kind: KindFailure, Claim: c.ID, Got: "failed: not a claim of the catalogue", Decision: Block,
				Cause:  "specs labelled with a claim the catalogue lacks (a typo?): they show nothing",
				Reason: "specs labelled claim:" + c.ID + ", which the catalogue lacks (a typo? `winconform list` lists the claims), show no claim: " + short(c.Why)})
		}
	}
}

func (g *gater) noWindows() bool {
	c := g.in.Run.Summary.Cluster
	return c.Known && c.WindowsNodes == 0
}

// cluster checks what the policy asks of the cluster.
func (g *gater) cluster() {
	p, c := g.in.Policy, g.in.Run.Summary.Cluster
	got := fmt.Sprintf("%d Linux node(s), %d Windows node(s)", c.LinuxNodes, c.WindowsNodes)
	if c.SimulatedWindowsNodes > 0 {
		got += fmt.Sprintf(" (and %d simulated)", c.SimulatedWindowsNodes)
	}
	if len(c.WindowsBuilds) > 0 {
		got += ", builds " + strings.Join(c.WindowsBuilds, ", ")
	}
	if !c.Known {
		got = "unknown: the run did not reach the cluster"
	}
	windowsLevels := 0
	for _, r := range p.Required {
		if claims.Level(r.Level).OnWindows() {
			windowsLevels++
		}
	}
	if !c.Known {
		g.add(Item{Kind: KindCluster, Required: "a known cluster", Got: got, Decision: Block, Cause: CauseUnknownCluster,
			Reason: "the cluster is unknown: the run did not reach it (its summary has no facts of the cluster's nodes), so nothing it reports can be tied to a cluster; rerun the suites against the cluster"})
	}
	switch {
	case p.Cluster.WindowsNodes > 0 && c.WindowsNodes < p.Cluster.WindowsNodes:
		it := Item{Kind: KindCluster, Required: fmt.Sprintf("at least %d real Windows node(s)", p.Cluster.WindowsNodes), Got: got, Decision: Block}
		it.Reason = fmt.Sprintf("the cluster had %d real Windows node(s); the policy needs at least %d", c.WindowsNodes, p.Cluster.WindowsNodes)
		it.Cause = "too few Windows nodes: the cluster had fewer real Windows nodes than the policy's cluster.windowsNodes"
		if c.Known && c.WindowsNodes == 0 {
			it.Cause = CauseNoWindows
			it.Reason = "no Windows node: the cluster had no real Windows node, so nothing was shown on Windows; the policy needs " + fmt.Sprint(p.Cluster.WindowsNodes)
			if c.SimulatedWindowsNodes > 0 {
				it.Reason += fmt.Sprintf(" (the %d simulated ones show nothing on Windows)", c.SimulatedWindowsNodes)
			}
		}
		g.add(it)
	case windowsLevels > 0 && g.noWindows():
		g.add(Item{Kind: KindCluster, Required: "Windows nodes (the policy requires evidence on Windows)", Got: got, Decision: Block, Cause: CauseNoWindows,
			Reason: "no Windows node: the cluster had no real Windows node, so no claim the policy requires on Windows could be shown"})
	case p.Cluster.WindowsNodes > 0:
		g.add(Item{Kind: KindCluster, Required: fmt.Sprintf("at least %d real Windows node(s)", p.Cluster.WindowsNodes), Got: got, Decision: Pass, Reason: "the cluster had them"})
	}
	if c.Known && c.PreRelease {
		it := Item{Kind: KindCluster, Required: "a released Kubernetes (cluster.allowPreRelease: false)", Got: c.Kubernetes(), Decision: Block, Cause: CausePreRelease,
			Reason: "the cluster ran " + c.Kubernetes() + ": a run on a pre-release gates no release unless the policy says cluster.allowPreRelease: true"}
		if p.Cluster.AllowPreRelease {
			it.Required, it.Decision, it.Cause = "any Kubernetes, a pre-release too (cluster.allowPreRelease: true)", Pass, ""
			it.Reason = "the cluster ran " + c.Kubernetes() + ", which the policy allows"
		}
		g.add(it)
	}
	for _, b := range g.builds() {
		it := Item{Kind: KindCluster, Required: "Windows build " + b, Got: got, Decision: Pass,
			Reason: "a real Windows node of this build was in the cluster (each claim required on Windows must still be shown on it)"}
		if !slices.Contains(c.WindowsBuilds, b) {
			it.Decision, it.Reason, it.Cause = Block, fmt.Sprintf("no real Windows node of build %s ran (builds: %s)", b, orNone(c.WindowsBuilds)), causeBuild(b)
			if g.noWindows() {
				it.Cause = CauseNoWindows
			}
		}
		g.add(it)
	}
}

// builds are the Windows builds the policy and --windows-build ask for,
// each once.
func (g *gater) builds() []string {
	var out []string
	for _, b := range append(append([]string{}, g.in.Policy.Cluster.WindowsBuilds...), g.in.WindowsBuilds...) {
		if b = evidence.BuildOf(b); !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// requirements returns the levels the policy requires of claim c (a level
// of "" is the claim's own), and whether it requires c at all.
func (g *gater) requirements(c claims.Claim) ([]claims.Level, bool) {
	var out []claims.Level
	required := false
	for _, r := range g.in.Policy.Required {
		if policy.Selects(r, c) {
			required = true
			if l := claims.Level(r.Level); l != "" && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out, required
}

// meets says whether a result at level l shows claim cat at its own level
// and at level req (empty: the claim's own).
func meets(cat claims.Claim, req claims.Level) func(claims.Level) bool {
	return func(l claims.Level) bool { return cat.Level.Shows(l) && (req == "" || req.Shows(l)) }
}

// levelMet says whether claim c was shown, by specs that show it (never a
// partial or a below-level record), at its catalogue level and at every
// level of req: a requirement's level can raise the claim's, never lower it.
func levelMet(c reports.Claim, cat claims.Claim, req []claims.Level) bool {
	if !c.ShownAt(meets(cat, "")) {
		return false
	}
	for _, r := range req {
		if !c.ShownAt(meets(cat, r)) {
			return false
		}
	}
	return true
}

// onWindows says whether the policy requires claim cat on Windows: its own
// level, or a level the policy asks of it, is one on Windows.
func onWindows(cat claims.Claim, req []claims.Level) bool {
	return cat.Level.OnWindows() || slices.ContainsFunc(req, claims.Level.OnWindows)
}

// missingBuild returns the first build of builds that claim c was not shown
// on at the levels required, and where it was shown instead.
func missingBuild(c reports.Claim, cat claims.Claim, req []claims.Level, builds []string) (string, string) {
	ok := func(l claims.Level) bool {
		if !l.OnWindows() || !cat.Level.Shows(l) {
			return false
		}
		for _, r := range req {
			if !r.Shows(l) {
				return false
			}
		}
		return true
	}
	got := c.ShownOnBuilds(ok)
	for _, b := range builds {
		if !slices.Contains(got, b) {
			var known []string
			unrecorded := false
			for _, g := range got {
				if g == evidence.Unrecorded {
					unrecorded = true
				} else {
					known = append(known, g)
				}
			}
			where := strings.Join(known, ", ")
			if unrecorded {
				if where != "" {
					where += " and "
				}
				where += "a node of unrecorded build"
			}
			if where == "" {
				where = "no Windows build"
			}
			return b, where
		}
	}
	return "", ""
}

func levelsText(own claims.Level, req []claims.Level) string {
	var s []string
	for _, l := range req {
		if !slices.Contains(s, string(l)) && l != own {
			s = append(s, string(l))
		}
	}
	if len(s) == 0 {
		return "shown (at " + string(own) + ", its own level)"
	}
	return "shown at " + string(own) + " (its own level) and at " + strings.Join(s, " and ") + " or better"
}

// failingSpecs lists the specs of claim id that failed, were blocked or
// interrupted.
func (g *gater) failingSpecs(id string) []string {
	var out []string
	for _, sp := range g.in.Run.Summary.Specs {
		if slices.Contains(sp.Labels, "claim:"+id) && (sp.Result == reports.SpecFailed || sp.Result == reports.SpecBlocked || sp.Result == reports.SpecInterrupted) {
			out = append(out, sp.Name)
		}
	}
	return out
}

// flakyOnly says whether claim id's failure comes from flaky matrix cells
// alone: it has cells that are not as expected, and every one is flaky.
func (g *gater) flakyOnly(id string) []string {
	var flaky []string
	for _, c := range g.cellsByClaim[id] {
		switch c.Verdict {
		case netmatrix.OK, netmatrix.Skipped, netmatrix.Drift:
		case netmatrix.Flaky:
			flaky = append(flaky, c.Source+" -> "+c.Target)
		default:
			return nil
		}
	}
	return flaky
}

func decision(a config.Action) Decision {
	if a == config.Report {
		return Report
	}
	return Block
}

// claims decides every claim of the catalogue: the required set is the
// catalogue's claims that the policy selects, whatever the record lists.
func (g *gater) claims() {
	// Drift is an unexpected lift (one this server version does not
	// explain), seen at the claim's level (reports.Ledger makes a Linux
	// twin's observation inconclusive).
	drift := map[string]bool{}
	for _, e := range g.in.Run.Ledger {
		if e.Verdict == ledger.Lifted && e.Unexpected {
			drift[e.Claim] = true
		}
	}
	recorded := map[string]reports.Claim{}
	for _, c := range g.in.Run.Summary.Claims {
		recorded[c.ID] = c
	}
	for _, cat := range claims.All() {
		req, required := g.requirements(cat)
		c, ok := recorded[cat.ID]
		if !ok {
			// Summarize reads the whole catalogue, so this is a record of
			// another catalogue that CheckRecord let through: unmet.
			c = reports.Claim{ID: cat.ID, Outcome: reports.NotCovered, Why: "not in the run's record"}
		}
		got := diff.Describe(c)
		// A failure's gist goes in the reason; other outcomes say why here.
		if c.Why != "" && c.Outcome != reports.Supported && c.Outcome != reports.Shown && !diff.Failing(c.Outcome) {
			got += ": " + short(c.Why)
		}
		it := Item{Kind: KindRequired, Claim: c.ID, Required: levelsText(cat.Level, req), Got: got, specs: g.failingSpecs(c.ID), owners: []string{c.ID},
			outcome: c.Outcome, waivable: g.observedFailure(c, cat, req)}
		if !required {
			it.Kind, it.Required = KindFailure, ""
			switch {
			case c.Outcome == reports.Failed || c.Outcome == reports.Blocked:
				if flaky := g.flakyOnly(c.ID); c.Outcome == reports.Failed && len(flaky) > 0 {
					it.Kind, it.Decision, it.Reason = KindFlake, g.flakeDecision(), "failed on flaky matrix cells only: "+strings.Join(flaky, ", ")
					it.Cause = "failed on flaky matrix cells only (a flaky cell is no evidence)"
				} else {
					it.Decision, it.Reason = decision(g.in.Policy.OtherFailures), c.ID+" "+c.Outcome+": "+g.failure(c)+" (not required by the policy; otherFailures: "+string(g.in.Policy.OtherFailures)+")"
				}
				g.add(it)
			case c.Outcome == reports.Drift || drift[c.ID]:
				it.Kind, it.Decision, it.Reason, it.waivable = KindDrift, decision(g.in.Policy.Drift), "the documented limitation no longer holds, and this server version does not explain it (drift: "+string(g.in.Policy.Drift)+")", true
				it.Cause = causeDrift
				g.add(it)
			}
			continue
		}
		g.res.Required++
		noWin := ""
		if g.noWindows() && onWindows(cat, req) {
			noWin = "no Windows node: "
		}
		// A required claim passes only when it is met; anything else
		// blocks (a known issue naming the claim may waive an observed
		// failure).
		builds := g.builds()
		switch c.Outcome {
		case reports.Shown:
			switch b, where := missingBuild(c, cat, req, builds); {
			case !levelMet(c, cat, req):
				it.Decision, it.Reason = Block, noWin+c.ID+" shown only at "+shownLevels(c)+", below what the policy requires"
				it.Cause = "shown only below the evidence level the policy requires"
			case onWindows(cat, req) && b != "":
				it.Decision, it.Reason = Block, fmt.Sprintf("%s not shown on Windows build %s (shown on %s): a release gate for a build counts only results obtained on that build", c.ID, b, where)
				it.Cause = causeBuild(b)
			default:
				it.Decision, it.Reason = Pass, "shown"
				if len(builds) > 0 && onWindows(cat, req) {
					it.Reason += " on build " + strings.Join(builds, ", ")
				}
				if fl := g.flakyOf(c.ID); len(fl) > 0 {
					it.Reason += fmt.Sprintf("; %d of its specs passed only on a retry (%s): flakes.tolerated decides (its flake item)", len(fl), strings.Join(fl, "; "))
				}
			}
		case reports.Failed:
			it.Decision, it.Reason = Block, c.ID+" failed: "+g.failure(c)
			it.Cause = "failed: " + g.failure(c)
			if flaky := g.flakyOnly(c.ID); len(flaky) > 0 {
				it.Reason = c.ID + " not shown: failed on flaky matrix cells only: " + strings.Join(flaky, ", ") +
					" (a flaky cell is no evidence: flakes.tolerated lets flakes pass, it shows no claim)"
				it.Cause = "failed on flaky matrix cells only (a flaky cell is no evidence)"
			}
		case reports.Supported:
			it.Decision, it.Reason = Block, noWin+c.ID+" "+diff.Describe(c)+", not shown"
			it.Cause = diff.Describe(c) + ", not shown"
		case reports.Drift:
			it.Decision, it.Reason = Block, c.ID+" drifted, not shown: "+short(c.Why)+" (a required claim whose documented limitation no longer holds is not met, whatever drift: says)"
			it.Cause = "drifted: the documented limitation no longer holds (a required claim that drifted is not met)"
		default:
			it.Decision = Block
			it.Reason = noWin + c.ID + " " + c.Outcome
			it.Cause = c.Outcome
			if c.Why != "" {
				it.Reason += " (" + short(c.Why) + ")"
				it.Cause += " (" + short(c.Why) + ")"
			}
			if c.Outcome == reports.NotCovered {
				it.Reason += ": no spec exercises it yet"
				it.Cause += ": no spec exercises it yet"
			}
			it.Reason += ", not shown"
			it.Cause += ", not shown"
		}
		if noWin != "" && it.Decision == Block && c.Outcome != reports.Failed {
			it.Cause = CauseNoWindows
		}
		if it.Decision == Pass {
			g.res.Met++
		}
		g.add(it)
		if drift[c.ID] && c.Outcome != reports.Drift {
			g.add(Item{Kind: KindDrift, Claim: c.ID, Got: "the ledger has the limitation lifted, unexpectedly for this server version", Decision: decision(g.in.Policy.Drift), Cause: causeDrift,
				Reason: "the documented limitation no longer holds, and this server version does not explain it (drift: " + string(g.in.Policy.Drift) + ")", owners: []string{c.ID}, waivable: true})
		}
	}
}

// observedFailure says whether claim c's outcome is a failure someone
// observed where the claim is decided: it drifted (seen by specs that show
// it), or a spec of it ran and failed with a whole record at a level that
// shows the claim at every level of req. A failure seen only on a Linux
// twin of a Windows claim, or before the spec recorded where it ran, and a
// spec a failed setup kept from running, are not.
func (g *gater) observedFailure(c reports.Claim, cat claims.Claim, req []claims.Level) bool {
	switch c.Outcome {
	case reports.Drift:
		return true
	case reports.Failed:
	default:
		return false
	}
	for _, sp := range g.in.Run.Summary.Specs {
		if sp.Result == reports.SpecFailed && slices.Contains(sp.Labels, "claim:"+c.ID) && g.observedSpec(sp, cat, req) {
			return true
		}
	}
	return false
}

// observedSpec says whether failed spec sp is an observed failure of
// claim cat: it failed with a whole record at a level that shows the
// claim at every level of req.
func (g *gater) observedSpec(sp reports.Spec, cat claims.Claim, req []claims.Level) bool {
	ok := func(l claims.Level) bool {
		if !cat.Level.Shows(l) {
			return false
		}
		for _, r := range req {
			if !r.Shows(l) {
				return false
			}
		}
		return true
	}
	whole := len(sp.Evidence) > 0
	seen := false
	for _, r := range sp.Evidence {
		whole = whole && r.Partial == ""
		seen = seen || ok(r.Level)
	}
	return sp.Result == reports.SpecFailed && whole && seen
}

func shownLevels(c reports.Claim) string {
	var s []string
	for _, l := range claims.Levels {
		if c.ShownAt(func(x claims.Level) bool { return x == l }) {
			s = append(s, string(l))
		}
	}
	if len(s) == 0 {
		return "no recorded level"
	}
	return strings.Join(s, ", ")
}

func short(s string) string {
	s = text.FirstLine(s)
	if len(s) > 240 {
		s = s[:240] + "..."
	}
	return s
}

// failure says why claim c failed: the gist of its first failing spec's
// message, else the summary's reason.
func (g *gater) failure(c reports.Claim) string {
	var msgs []string
	for _, sp := range g.in.Run.Summary.Specs {
		if slices.Contains(sp.Labels, "claim:"+c.ID) && (sp.Result == reports.SpecFailed || sp.Result == reports.SpecBlocked) && strings.TrimSpace(sp.Message) != "" {
			msgs = append(msgs, sp.Message)
		}
	}
	if len(msgs) == 0 {
		return short(c.Why)
	}
	out := Gist(msgs[0])
	if len(msgs) > 1 {
		out += fmt.Sprintf(" (and %d more failing spec(s))", len(msgs)-1)
	}
	return out
}

// Gist is a failure message in one line: its first line, and when that
// announces a list ("...:"), the list's first entry without its reproducing
// command, and how many more there are.
func Gist(msg string) string {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	out := lines[0]
	if strings.HasSuffix(out, ":") && len(lines) > 1 {
		first, _, _ := strings.Cut(lines[1], "; reproduce:")
		out += " " + first
		if len(lines) > 2 {
			out += fmt.Sprintf("; and %d more", len(lines)-2)
		}
	}
	if len(out) > 320 {
		out = out[:320] + "..."
	}
	return out
}

// specs decides failed specs that carry no claim (the matrix's control cells).
func (g *gater) specs() {
	for _, sp := range g.in.Run.Summary.Specs {
		if len(reportsClaims(sp.Labels)) > 0 || (sp.Result != reports.SpecFailed && sp.Result != reports.SpecBlocked) {
			continue
		}
		g.add(Item{Kind: KindFailure, Spec: sp.Name, Got: sp.Result, Decision: decision(g.in.Policy.OtherFailures),
			Reason: "a spec of no claim " + sp.Result + ": " + Gist(sp.Message) + " (otherFailures: " + string(g.in.Policy.OtherFailures) + ")", specs: []string{sp.Name},
			waivable: sp.Result == reports.SpecFailed})
	}
	for _, name := range g.in.Run.Summary.Unrecorded {
		g.add(Item{Kind: KindFailure, Spec: name, Got: "passed, recorded no evidence", Decision: decision(g.in.Policy.OtherFailures), Cause: "passing specs that recorded no evidence (they show nothing)",
			Reason: "a passing spec that recorded no evidence shows nothing, and the run fails for it (otherFailures: " + string(g.in.Policy.OtherFailures) + ")"})
	}
}

func reportsClaims(labels []string) []string {
	var out []string
	for _, l := range labels {
		if id, ok := strings.CutPrefix(l, "claim:"); ok {
			out = append(out, id)
		}
	}
	return out
}

func (g *gater) flakeDecision() Decision {
	if g.flakes > g.in.Policy.Flakes.Tolerated {
		return Block
	}
	return Report
}

// flakeItems lists every flaky spec and cell, and the count against the tolerance.
func (g *gater) flakeItems() {
	if g.flakes == 0 {
		return
	}
	tol := g.in.Policy.Flakes.Tolerated
	verdict := fmt.Sprintf("%d flaky (spec passed on a retry, cell whose probes disagreed); the policy tolerates %d", g.flakes, tol)
	for _, f := range g.in.Run.Summary.Flaky {
		g.add(Item{Kind: KindFlake, Spec: f.Spec, Got: f.Note(), Decision: g.flakeDecision(), Reason: verdict, Cause: "flaky: " + verdict,
			specs: []string{f.Spec}, owners: g.claimsOf(f.Spec), waivable: true})
	}
	for _, c := range g.cellsByClaim[""] {
		if c.Verdict == netmatrix.Flaky {
			it := Item{Kind: KindFlake, Cell: c.Source + " -> " + c.Target, Got: "flaky: " + c.Describe(), Decision: g.flakeDecision(), Reason: verdict, Cause: "flaky: " + verdict,
				owners: c.Claims, waivable: true}
			if len(c.Claims) > 0 {
				it.Claim = strings.Join(c.Claims, ",")
			}
			g.add(it)
		}
	}
}

// baseline adds what changed since the baseline.
func (g *gater) baseline() {
	d := g.res.Diff
	if d == nil {
		return
	}
	p := g.in.Policy.Baseline
	if len(d.ShapeChanges) > 0 {
		g.add(Item{Kind: KindBaseline, Got: strings.Join(d.ShapeChanges, "; "), Decision: Report,
			Reason: "the baseline comes from a cluster of another shape (baseline.otherShape: report): changes may come from the cluster"})
	}
	for _, s := range append(append([]string{}, d.BuildChanges...), d.VersionChange) {
		if s != "" {
			g.add(Item{Kind: KindBaseline, Got: s, Decision: Report, Reason: "changed since the baseline"})
		}
	}
	change := map[string]diff.ClaimChange{}
	for _, c := range d.Claims {
		change[c.Claim] = c
	}
	outcome := map[string]reports.Claim{}
	for _, c := range g.in.Run.Summary.Claims {
		outcome[c.ID] = c
	}
	for _, id := range d.NewlyFailing {
		cat, _ := claims.Get(id)
		req, _ := g.requirements(cat)
		g.add(Item{Kind: KindBaseline, Claim: id, Got: change[id].Change, Decision: decision(p.NewlyFailing), Cause: "newly failing since the baseline",
			Reason: "newly failing since the baseline (baseline.newlyFailing: " + string(p.NewlyFailing) + ")", specs: g.failingSpecs(id), owners: []string{id},
			waivable: g.observedFailure(outcome[id], cat, req)})
	}
	for _, id := range d.LostShown {
		if slices.Contains(d.NewlyFailing, id) {
			continue // said once, as newly failing
		}
		g.add(Item{Kind: KindBaseline, Claim: id, Got: change[id].Change, Decision: decision(p.LostShown), Cause: "shown in the baseline, not now",
			Reason: "shown in the baseline, not now (baseline.lostShown: " + string(p.LostShown) + ")", specs: g.failingSpecs(id)})
	}
	for _, id := range d.NewlyFixed {
		g.add(Item{Kind: KindBaseline, Claim: id, Got: change[id].Change, Decision: Pass, Reason: "newly fixed since the baseline"})
	}
}

// knownIssues applies the policy's known issues to blocking findings, and
// lists those that waived nothing. A known issue waives an observed
// failure of the one thing it names (Item.waivable, applies), never a
// claim left unshown (a skip, a Linux twin, a level or build below the
// policy's, a setup that blocked its specs), nor a flake that another
// claim shares; a claim the policy requires only by a known issue that
// names the claim.
func (g *gater) knownIssues() {
	used := make([]bool, len(g.in.Policy.KnownIssues))
	for i := range g.res.Items {
		it := &g.res.Items[i]
		if it.Decision != Block {
			continue
		}
		for k, ki := range g.in.Policy.KnownIssues {
			if !g.names(ki, *it) {
				continue
			}
			if why := g.refuses(ki, *it); why != "" {
				it.Reason += fmt.Sprintf("; the known issue naming %s (%s) does not apply: %s", ki.Subject(), ki.Link, why)
				continue
			}
			used[k] = true
			ki := ki
			it.KnownIssue = &ki
			if ki.Expired(g.in.Now) {
				it.Reason += fmt.Sprintf("; the known issue (%s) expired on %s", ki.Link, ki.Expires)
				continue
			}
			it.Decision = Waived
			it.Reason += fmt.Sprintf("; waived by a known issue until %s: %s (%s)", ki.Expires, ki.Reason, ki.Link)
			break
		}
	}
	for k, ki := range g.in.Policy.KnownIssues {
		if used[k] {
			continue
		}
		it := Item{Kind: KindIssue, Claim: ki.Claim, Spec: ki.Spec, Got: "nothing it applies to", Decision: Report,
			Reason: "a known issue that waived nothing in this run: drop it once it is fixed", KnownIssue: &g.in.Policy.KnownIssues[k]}
		if ki.Spec != "" {
			if n := len(g.specsMatching(ki.Spec)); n > 1 {
				it.Reason = fmt.Sprintf("a known issue whose spec: matches %d specs, so it waives none: name one spec, by its full name (or a longer prefix)", n)
			}
		}
		if ki.Expired(g.in.Now) {
			it.Reason = "a known issue that expired on " + ki.Expires + " and waived nothing: drop it"
		}
		g.add(it)
	}
}

// names says whether known issue ki is about item it: by claim, an item
// that is (among others) that claim's; by spec, an item whose failing
// specs are the one spec ki names (specMatches).
func (g *gater) names(ki config.KnownIssue, it Item) bool {
	if ki.Claim != "" {
		return slices.Contains(it.owners, ki.Claim)
	}
	if len(it.specs) == 0 || len(g.specsMatching(ki.Spec)) != 1 {
		return false // names no spec, or several
	}
	for _, s := range it.specs {
		if !specMatches(ki.Spec, s) {
			return false
		}
	}
	return true
}

// refuses says why known issue ki, which names item it, cannot waive it
// ("" when it can): it waives one observed failure of the one thing it
// names.
func (g *gater) refuses(ki config.KnownIssue, it Item) string {
	switch {
	case !it.waivable:
		return "a known issue waives an observed failure, not a claim left " + notShownWord(it)
	case ki.Claim != "" && len(it.owners) > 1:
		return fmt.Sprintf("the finding is shared with %s, and a known issue waives the failure of the one claim it names",
			strings.Join(slices.DeleteFunc(slices.Clone(it.owners), func(id string) bool { return id == ki.Claim }), ", "))
	case ki.Claim != "":
		if un := g.unobserved(ki.Claim); len(un) > 0 {
			return fmt.Sprintf("a known issue naming a claim waives it only when every spec of the claim that did not pass is an observed failure, and %s", strings.Join(un, "; "))
		}
	case ki.Spec != "" && it.Kind == KindRequired:
		return "a claim the policy requires is waived only by a known issue naming the claim"
	case ki.Spec != "":
		for _, s := range it.specs {
			if ids := g.claimsOf(s); len(ids) > 1 {
				return fmt.Sprintf("its spec carries the claims %s, and a known issue by spec would waive them all: name the claim instead", strings.Join(ids, ", "))
			}
		}
	}
	return ""
}

// unobserved lists the specs of claim id that did not pass and are no
// observed failure: blocked by a setup, interrupted, never run, skipped,
// inconclusive, or failed without a whole record at a level that shows
// the claim.
func (g *gater) unobserved(id string) []string {
	cat, ok := claims.Get(id)
	if !ok {
		return []string{id + " is no claim of the catalogue"}
	}
	req, _ := g.requirements(cat)
	var out []string
	for _, sp := range g.in.Run.Summary.Specs {
		if !slices.Contains(sp.Labels, "claim:"+id) || sp.Result == reports.SpecPassed {
			continue
		}
		if sp.Result != reports.SpecFailed {
			out = append(out, fmt.Sprintf("%q %s", sp.Name, sp.Result))
		} else if !g.observedSpec(sp, cat, req) {
			out = append(out, fmt.Sprintf("%q failed where the policy does not look (a Linux twin, or before it recorded where it ran)", sp.Name))
		}
	}
	return out
}

func notShownWord(it Item) string {
	switch {
	case it.Kind == KindCluster:
		return "unshown because of the cluster"
	case it.outcome == reports.Blocked:
		return "blocked (a setup failed before its specs ran: nobody saw them fail)"
	case it.outcome == reports.Failed:
		return "failed where the policy does not look (a Linux twin, or before the spec recorded where it ran)"
	case it.outcome != "" && it.outcome != reports.Shown:
		return it.outcome
	}
	return "shown below what the policy requires"
}

// claimsOf lists the claims of the run's spec name.
// flakyOf lists the flaky specs (passed on a retry) of claim id, each
// with how it passed and first failed.
func (g *gater) flakyOf(id string) []string {
	var out []string
	for _, f := range g.in.Run.Summary.Flaky {
		if slices.Contains(g.claimsOf(f.Spec), id) {
			out = append(out, f.Spec+": "+f.Note())
		}
	}
	return out
}

func (g *gater) claimsOf(name string) []string {
	for _, sp := range g.in.Run.Summary.Specs {
		if sp.Name == name {
			return reportsClaims(sp.Labels)
		}
	}
	return nil
}

// specMatches says whether a known issue's spec: names spec name: the full
// name, or a prefix of at least config.MinSpecPrefix characters that ends
// where a word of the name does.
func specMatches(ki, name string) bool {
	ki = strings.TrimSpace(ki)
	if ki == name {
		return true
	}
	if len(ki) < config.MinSpecPrefix || !strings.HasPrefix(name, ki) {
		return false
	}
	next := name[len(ki)]
	return next == ' ' || strings.ContainsRune(" :-/,", rune(ki[len(ki)-1]))
}

// specsMatching lists the run's specs a known issue's spec: names.
func (g *gater) specsMatching(ki string) []string {
	var out []string
	for _, sp := range g.in.Run.Summary.Specs {
		if specMatches(ki, sp.Name) && !slices.Contains(out, sp.Name) {
			out = append(out, sp.Name)
		}
	}
	return out
}

// Flakes lists the flaky specs and cells, each with what the run got of
// it (a spec's first failure): every flake, blocking or not.
func (r Result) Flakes() []string {
	var out []string
	for _, it := range r.Items {
		if it.Kind == KindFlake {
			out = append(out, it.Subject()+": "+it.Got)
		}
	}
	return out
}

// Markdown renders the decisions for people: the verdict and the blocking
// reasons first, then every decision.
func (r Result) Markdown() string {
	var b strings.Builder
	verdict := "SHIP"
	if r.Blocked() {
		verdict = "BLOCKED"
	}
	fmt.Fprintf(&b, "# Release gate: %s\n\n", verdict)
	fmt.Fprintf(&b, "Policy **%s** (`%s`) on `%s`", r.Policy, r.PolicyFile, r.Report)
	if r.Baseline != "" {
		fmt.Fprintf(&b, ", against the baseline `%s`", r.Baseline)
	}
	fmt.Fprintf(&b, "; known issues read as of %s.\n\n", r.Now)
	fmt.Fprintf(&b, "Run `%s`: %s\n\n**%s**\n\n", orNone([]string{r.RunID}), r.Status, r.Headline)
	if r.PreRelease != "" {
		fmt.Fprintf(&b, "The cluster ran Kubernetes %s, a pre-release.\n\n", r.PreRelease)
	}
	fmt.Fprintf(&b, "Gated by winconform %s.\n\n", r.Harness)
	fmt.Fprintf(&b, "Required claims met: %d of %d.\n\n", r.Met, r.Required)
	if len(r.Reasons) > 0 {
		fmt.Fprintf(&b, "## Blocked by %d finding(s) of %d cause(s)\n\n", len(r.Reasons), len(r.Groups))
		for _, g := range r.Groups {
			fmt.Fprintf(&b, "- %s\n", g.Line())
		}
		b.WriteString("\n")
	}
	b.WriteString("## Every decision\n\n| subject | kind | required | got | decision | reason | known issue |\n|---|---|---|---|---|---|---|\n")
	for _, d := range []Decision{Block, Waived, Report, Pass} {
		for _, it := range r.Items {
			if it.Decision != d {
				continue
			}
			ki := ""
			if it.KnownIssue != nil {
				ki = fmt.Sprintf("%s, until %s (%s)", it.KnownIssue.Reason, it.KnownIssue.Expires, it.KnownIssue.Link)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** | %s | %s |\n", cell(it.Subject()), it.Kind, cell(it.Required), cell(it.Got), it.Decision, cell(it.Reason), cell(ki))
		}
	}
	return b.String()
}

func cell(s string) string { return reports.Cell(s, 400) }

// Write puts gate.json and gate.md into dir and, for a decision made
// here, its statement (WriteStatement).
func (r Result) Write(dir string) error {
	if err := reports.WriteFiles(dir, JSONFile, MarkdownFile, r, r.Markdown()); err != nil {
		return err
	}
	if r.run == nil {
		return nil
	}
	return r.WriteStatement(dir, r.run, r.decidedAt)
}

// Read reads dir/gate.json; ok is false when there is none.
func Read(dir string) (r Result, ok bool, err error) {
	return reports.ReadJSON(dir, JSONFile, Format, "`winconform gate`", func(v Result) string { return v.Format })
}
