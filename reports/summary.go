// Package reports turns a Ginkgo run into what the harness's users read:
// per claim of the catalogue, what the run showed and on what evidence; skips
// counted by their reason; the spec list with labels; and checks that every
// spec is labelled as its claims' catalogue entries say. Ginkgo's own
// reporters write the JUnit and JSON; this package adds to them.
//
// The first rule: never report more than was seen. A claim is *shown* only
// by a passing spec at the claim's evidence level (framework/claims); a
// passing spec below it (a Linux twin, simulated nodes, the API alone)
// *supports* the claim, and every report says which.
package reports

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/internal/version"
)

// Format names the layout of summary.json, which the suite writes for
// people and other tools (the harness reads the run's record instead).
const Format = "winconform.summary/v5"

// Outcomes of a claim in a run, strongest first: a claim takes the first
// that applies.
const (
	Failed       = "failed"       // a spec of the claim failed
	Blocked      = "blocked"      // a setup node (BeforeAll, BeforeSuite, ...) failed before the claim's spec could run
	Interrupted  = "interrupted"  // the run was cut short during or before the claim's specs
	Drift        = "drift"        // a documented limitation no longer holds
	Shown        = "shown"        // a passing spec at the claim's evidence level
	Inconclusive = "inconclusive" // a spec ran but could not observe what it needed
	Supported    = "supported"    // passing specs only below the claim's level
	Skipped      = "skipped"      // every spec skipped, with its reason
	NotRun       = "not run"      // has specs, none selected in this run
	NotCovered   = "not covered"  // no spec carries the claim
)

// Outcomes lists the claim outcomes in the order a claim takes them.
var Outcomes = []string{Failed, Blocked, Interrupted, Drift, Shown, Inconclusive, Supported, Skipped, NotRun, NotCovered}

// Results of one spec.
const (
	SpecPassed       = "passed"
	SpecFailed       = "failed"
	SpecBlocked      = "blocked"
	SpecInterrupted  = "interrupted"
	SpecNeverRan     = "never ran" // selected, but the run was cut short before it
	SpecSkipped      = "skipped"
	SpecInconclusive = "inconclusive"
	// SpecFlaky counts, apart from SpecPassed, the specs that passed only
	// on a retry (a claim's Specs, the summary's count of specs); their
	// result is SpecPassed.
	SpecFlaky = "flaky"
)

// Spec is one spec of the run, as the reports use it.
type Spec struct {
	Name   string   `json:"name"`
	Labels []string `json:"labels"`
	// State is Ginkgo's; Result the harness's reading of it.
	State      string `json:"state"`
	Result     string `json:"result"`
	SkipReason string `json:"skipReason,omitempty"` // a skips.Reason key
	// Evidence is what the spec's result was obtained on.
	Evidence []evidence.Record `json:"evidence,omitempty"`
	// Drift lists the claims whose documented limitation the spec saw
	// lifted where the server version does not explain it (the ledger's
	// unexpected lifts).
	Drift []string `json:"drift,omitempty"`
	// Lifted lists the claims whose documented limitation the spec saw
	// lifted as the server version is expected to (shown, with a note).
	Lifted  []string `json:"lifted,omitempty"`
	Message string   `json:"message,omitempty"`
	// Location is the file and line of the failure, or of the spec.
	Location string `json:"location,omitempty"`
	// Artifacts is the directory, relative to the report, that keeps what
	// a failed spec left to debug it (pods, logs, events).
	Artifacts string  `json:"artifacts,omitempty"`
	Seconds   float64 `json:"seconds"`
	// Attempts is how many times the spec ran when Ginkgo retried it
	// (--flake-attempts); a spec that passed on a retry is also in the
	// summary's Flaky, with its first failure.
	Attempts int `json:"attempts,omitempty"`
}

// Failure is how and where an attempt of a spec failed.
type Failure struct {
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
}

// Flake is a spec that passed only on a retry (--flake-attempts): the
// attempt it passed on, and how its first attempt failed (nil when
// Ginkgo's report kept no failure of it). The summary's Flaky is the one
// list of a run's flakes that every view reads.
type Flake struct {
	Spec         string   `json:"spec"`
	Attempts     int      `json:"attempts"`
	FirstFailure *Failure `json:"firstFailure,omitempty"`
	// Artifacts is the bundle its failed attempt left (Ginkgo keeps the
	// attempt's report entries), relative to the report; "" when none.
	Artifacts string `json:"artifacts,omitempty"`
}

// Note says how the flake passed and how it first failed.
func (f Flake) Note() string {
	note := fmt.Sprintf("passed on attempt %d", f.Attempts)
	if f.FirstFailure == nil {
		return note + "; its first failure was not recorded"
	}
	return note + "; attempt 1 failed" + orEmpty(" at ", f.FirstFailure.Location) + ": " + text.FirstLine(f.FirstFailure.Message)
}

// Flake returns the flake of the spec named name: ok is false when it
// did not pass on a retry.
func (s Summary) Flake(name string) (Flake, bool) {
	i := slices.IndexFunc(s.Flaky, func(f Flake) bool { return f.Spec == name })
	if i < 0 {
		return Flake{}, false
	}
	return s.Flaky[i], true
}

// retryPrefix heads the failure of an attempt Ginkgo retried, as it keeps
// it in SpecReport.AdditionalFailures (v2.32.0, internal/group.go):
// "Failure recorded during attempt N:\n" and the failure's message.
const retryPrefix = "Failure recorded during attempt "

// wasRetried says whether Ginkgo ran sr more than once because it failed
// (--flake-attempts, the FlakeAttempts decorator), not because it must
// pass repeatedly (MustPassRepeatedly).
func wasRetried(sr types.SpecReport) bool {
	return sr.NumAttempts > 1 && sr.MaxMustPassRepeatedly == 0
}

// flake reads the It spec sr as a flake: ok is false unless it passed
// only on a retry.
func flake(sr types.SpecReport) (Flake, bool) {
	if sr.LeafNodeType != types.NodeTypeIt || sr.State != types.SpecStatePassed || !wasRetried(sr) {
		return Flake{}, false
	}
	return Flake{Spec: sr.FullText(), Attempts: sr.NumAttempts, FirstFailure: firstFailure(sr)}, true
}

// firstFailure is the failure of sr's first attempt, which Ginkgo keeps
// among sr's additional failures when it retried sr; nil when it kept none.
func firstFailure(sr types.SpecReport) *Failure {
	for _, af := range sr.AdditionalFailures {
		rest, ok := strings.CutPrefix(af.Failure.Message, retryPrefix)
		if !ok {
			continue
		}
		_, msg, _ := strings.Cut(rest, ":\n")
		f := &Failure{Message: msg}
		if af.Failure.Location.FileName != "" {
			f.Location = af.Failure.Location.String()
		}
		return f
	}
	return nil
}

// Shows returns the records by which the spec shows claim c: those at a
// level that shows c. A spec with a partial record shows nothing.
func (s Spec) Shows(c claims.Claim) []evidence.Record { return evidence.Showing(s.Evidence, c) }

// Level is the strongest evidence of the spec that shows claim c, else the
// best below it, and whether it shows c. A partial record shows nothing.
// A record that shows c wins over a stronger one that does not (NET-15's
// Linux cells show it; its Windows cells, on a hybrid cluster, do not).
func (s Spec) Level(c claims.Claim) (claims.Level, bool) {
	var best claims.Level
	for _, r := range s.Shows(c) {
		if best == "" || rank(r.Level) > rank(best) {
			best = r.Level
		}
	}
	if best != "" {
		return best, true
	}
	for _, r := range s.Evidence {
		if best == "" || rank(r.Level) > rank(best) {
			best = r.Level
		}
	}
	return best, false
}

// levelRank orders levels by how much of Windows they saw, for picking a
// spec's best.
var levelRank = map[claims.Level]int{claims.API: 1, claims.Scheduler: 2, claims.Linux: 3, claims.WindowsNode: 4, claims.WindowsMachine: 5, claims.Domain: 6}

func rank(l claims.Level) int { return levelRank[l] }

// Claim is one claim's result.
type Claim struct {
	ID      string       `json:"id"`
	Kind    string       `json:"kind"`
	Level   claims.Level `json:"level"` // what shows it
	Title   string       `json:"title"`
	Outcome string       `json:"outcome"`
	// Why explains the outcome: what it was supported by, skip reasons,
	// the failing or blocking spec, the drift seen.
	Why string `json:"why,omitempty"`
	// Evidence counts the claim's passing specs by the level they ran at
	// (the best of each: showing, partial, or below the claim's level).
	Evidence map[claims.Level]int `json:"evidence"`
	// Shown counts the specs that show the claim by the level, and on
	// Windows the build, they showed it at: only these count towards
	// "shown on Windows" and the gate's levels and builds.
	Shown []Showing `json:"shown,omitempty"`
	// Specs counts the claim's selected specs by result.
	Specs       map[string]int `json:"specs"`
	SkipReasons []string       `json:"skipReasons,omitempty"`
	// SupportedBy says what supported a claim below its level ("linux
	// twin", "simulated nodes", "API only", "partial: ...").
	SupportedBy []string `json:"supportedBy,omitempty"`
}

// Showing counts the specs that show a claim at one level and, for a level
// on Windows, on one build (evidence.Unrecorded when the spec did not say).
type Showing struct {
	Level claims.Level `json:"level"`
	Build string       `json:"build,omitempty"`
	Specs int          `json:"specs"`
}

// ShownAt says whether some spec showed the claim at a level that ok accepts.
func (c Claim) ShownAt(ok func(claims.Level) bool) bool {
	for _, s := range c.Shown {
		if s.Specs > 0 && ok(s.Level) {
			return true
		}
	}
	return false
}

// ShownBy says what the run observed that shows the claim: the levels of
// the specs that showed it, with the Windows builds they ran on ("windows-node
// on 10.0.20348"), or "not shown". The catalogue's level (Level) is what
// the claim needs; this is what it got.
func (c Claim) ShownBy() string {
	if c.Outcome != Shown {
		return "not shown"
	}
	var out []string
	for _, l := range claims.Levels {
		var builds []string
		seen := false
		for _, s := range c.Shown {
			if s.Level == l && s.Specs > 0 {
				seen = true
				if s.Build != "" && !slices.Contains(builds, s.Build) {
					builds = append(builds, s.Build)
				}
			}
		}
		switch {
		case !seen:
		case len(builds) > 0:
			out = append(out, string(l)+" on "+strings.Join(builds, ", "))
		default:
			out = append(out, string(l))
		}
	}
	if len(out) == 0 {
		return "not shown"
	}
	return strings.Join(out, "; ")
}

// ShownOnBuilds lists the Windows builds some spec showed the claim on at a
// level that ok accepts.
func (c Claim) ShownOnBuilds(ok func(claims.Level) bool) []string {
	var out []string
	for _, s := range c.Shown {
		if s.Specs > 0 && s.Build != "" && ok(s.Level) && !slices.Contains(out, s.Build) {
			out = append(out, s.Build)
		}
	}
	sort.Strings(out)
	return out
}

// ClusterView is what the summary needs of the cluster.
type ClusterView struct {
	Known         bool   `json:"known"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// PreRelease says the server was a pre-release of Kubernetes
	// (v1.38.0-beta.0): the summary says so, and the gate blocks the run
	// unless its policy allows pre-releases.
	PreRelease   bool   `json:"preRelease,omitempty"`
	CNI          string `json:"cni,omitempty"`
	LinuxNodes   int    `json:"linuxNodes"`
	WindowsNodes int    `json:"windowsNodes"` // real ones
	// SimulatedWindowsNodes counts kwok nodes the cluster had at the start.
	SimulatedWindowsNodes int      `json:"simulatedWindowsNodes,omitempty"`
	WindowsBuilds         []string `json:"windowsBuilds,omitempty"`
	// Uncounted lists the real nodes that do not count, with why: a node
	// counts only when it was Ready at the run's start and at its end.
	Uncounted []string `json:"uncounted,omitempty"`
	// Cgroup is what the Linux kubelets run on, as facts.Facts.Cgroup says:
	// "cgroup v1, failCgroupV1 off", "cgroup v2"; empty when unknown.
	Cgroup string `json:"cgroup,omitempty"`
}

// Kubernetes is the cluster's Kubernetes as the reports name it:
// "Kubernetes v1.37.2", "Kubernetes v1.38.0-beta.0 (a pre-release)".
func (c ClusterView) Kubernetes() string {
	if c.PreRelease {
		return "Kubernetes " + c.ServerVersion + " (a pre-release)"
	}
	return "Kubernetes " + c.ServerVersion
}

// Summary is the harness's view of a run.
type Summary struct {
	Format      string `json:"format"`
	Suite       string `json:"suite"`
	Succeeded   bool   `json:"succeeded"`
	Interrupted bool   `json:"interrupted,omitempty"` // cut short by an interrupt or the suite timeout: a partial report
	// Status is the run's one-line status, saying when the cluster had no
	// Windows node.
	Status  string      `json:"status"`
	Cluster ClusterView `json:"cluster"`
	// Headline is the line a release manager reads first.
	Headline string `json:"headline"`
	// Total is the number of claims in the catalogue; Shown of them were
	// shown, ShownOnWindows by a result on real Windows.
	Total          int            `json:"total"`
	Shown          int            `json:"shown"`
	ShownOnWindows int            `json:"shownOnWindows"`
	Outcomes       map[string]int `json:"outcomes"`
	// SupportedBy counts the supported claims by what supported them best.
	SupportedBy map[string]int `json:"supportedBy"`
	SkipReasons map[string]int `json:"skipReasons"`
	// Violations are the invariants of the record's contract that the
	// record breaks (rundir checks them as it reads the record): a record
	// that breaks one decides nothing, and every view says so first.
	Violations []Violation `json:"violations,omitempty"`
	// NeverRan lists the specs the run selected but never reached.
	NeverRan []string `json:"neverRan,omitempty"`
	// Unrecorded lists passing specs that recorded no evidence: they show
	// nothing, and the suite fails for them.
	Unrecorded []string `json:"unrecordedEvidence,omitempty"`
	// Flaky lists the specs that passed only on a retry (--flake-attempts),
	// each with its first failure: passed, and counted apart (a claim's
	// Specs counts them as SpecFlaky). Every view of a flake reads it here.
	Flaky []Flake `json:"flaky,omitempty"`
	// Rerun names the report this run reran the failures of.
	Rerun string `json:"rerunOf,omitempty"`
	// Properties are the run's JUnit properties (--junit-property).
	Properties [][2]string `json:"properties,omitempty"`
	// Stamp is the run's ID (which labels its objects in the cluster:
	// e2e-run, winconform.io/run) and the harness that ran it, and
	// Catalogue the version of the claim catalogue it was recorded under,
	// as the run's record says (framework/record).
	version.Stamp
	Catalogue string  `json:"catalogue,omitempty"`
	Specs     []Spec  `json:"specs"`
	Claims    []Claim `json:"claims"`
}

// Violation is one invariant of the record's contract that a record
// breaks: the invariant's name (docs/record.md lists them) and what broke it.
type Violation struct {
	Invariant string `json:"invariant"`
	Detail    string `json:"detail"`
}

func (v Violation) String() string { return v.Invariant + ": " + v.Detail }

// Break records the violations vs of the record's contract: the status
// line and the headline say so first.
func (s *Summary) Break(vs []Violation) {
	s.Violations = vs
	s.Status = s.status()
	s.Headline = s.headline()
}

// ArtifactsEntry is the report entry that names a failed spec's artifacts
// directory (framework/e2e.ArtifactsEntry).
const ArtifactsEntry = "winconform.artifacts"

// Summarize reads a Ginkgo report. Specs that the run did not select are
// left out of Specs but still count a claim as having specs (NotRun).
func Summarize(r types.Report) Summary {
	s := Summary{Format: Format, Suite: r.SuiteDescription, Succeeded: r.SuiteSucceeded, SkipReasons: map[string]int{},
		Outcomes: map[string]int{}, SupportedBy: map[string]int{}}
	for _, reason := range r.SpecialSuiteFailureReasons {
		if r := strings.ToLower(reason); strings.Contains(r, "interrupt") || strings.Contains(r, "timeout") {
			s.Interrupted = true
		}
	}
	catalogue := claims.IDs()
	if rec, err := record.Read(r); err == nil {
		if rec.Recorded {
			run := rec.Run
			s.Stamp, s.Catalogue, s.Rerun, s.Properties = run.Stamp, run.Catalogue, run.RerunOf, run.Properties
			catalogue = run.Claims
		}
		if rec.Cluster != nil {
			s.Cluster = clusterView(rec.Cluster, rec.End)
		}
	}
	selected := Selector(r)
	setupFailed := ""
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType.Is(types.NodeTypeBeforeSuite|types.NodeTypeSynchronizedBeforeSuite) && sr.State.Is(types.SpecStateFailureStates) {
			setupFailed = fmt.Sprintf("%s failed: %s", sr.LeafNodeType, text.FirstLine(sr.Failure.Message))
		}
	}
	byClaim := map[string][]Spec{}
	flakes := map[string]Flake{}
	hasSpecs := map[string]bool{}
	unknown := map[string][]string{}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		spec, ok := readSpec(sr, s.Interrupted, setupFailed, selected(sr))
		for _, id := range labels.Claims(spec.Labels) {
			hasSpecs[id] = true
		}
		if !ok {
			continue // not selected by this run
		}
		if bad := slices.DeleteFunc(labels.Claims(spec.Labels), func(id string) bool { return slices.Contains(catalogue, id) }); len(bad) > 0 {
			// A claim label the run's catalogue lacks (a typo: WEB-2O):
			// whatever the spec did, it showed no claim it names, and it
			// fails as a claim nobody can look up.
			spec.Result = SpecFailed
			spec.Message = fmt.Sprintf("labelled %s, which the run's claim catalogue lacks (a typo? `winconform list` lists the claims): its result shows no claim", labelList(bad)) +
				orEmpty("; its own result: ", text.FirstLine(spec.Message))
			for _, id := range bad {
				unknown[id] = append(unknown[id], spec.Name)
			}
		}
		// A flake passed (a spec the summary fails, mislabelled, is none).
		if f, ok := flake(sr); ok && spec.Result == SpecPassed {
			f.Artifacts = spec.Artifacts
			s.Flaky, flakes[f.Spec] = append(s.Flaky, f), f
		}
		for _, id := range labels.Claims(spec.Labels) {
			byClaim[id] = append(byClaim[id], spec)
		}
		switch spec.Result {
		case SpecSkipped, SpecInconclusive:
			key := spec.SkipReason
			if key == "" {
				key = "unrecorded"
			}
			s.SkipReasons[key]++
		case SpecNeverRan:
			s.NeverRan = append(s.NeverRan, spec.Name)
		case SpecPassed:
			if len(spec.Evidence) == 0 {
				s.Unrecorded = append(s.Unrecorded, spec.Name)
			}
		}
		s.Specs = append(s.Specs, spec)
	}
	for _, c := range claims.All() {
		cr := decide(c, byClaim[c.ID], hasSpecs[c.ID], flakes)
		s.Claims = append(s.Claims, cr)
		s.Outcomes[cr.Outcome]++
		if cr.Outcome == Shown {
			s.Shown++
			if cr.shownOnWindows() {
				s.ShownOnWindows++
			}
		}
		if cr.Outcome == Supported && len(cr.SupportedBy) > 0 {
			s.SupportedBy[cr.SupportedBy[0]]++
		}
	}
	for _, id := range sortedKeys(unknown) {
		s.Claims = append(s.Claims, Claim{ID: id, Kind: UnknownClaim, Title: "not a claim of the run's catalogue", Outcome: Failed,
			Why: "specs labelled claim:" + id + ", which the run's catalogue lacks: " + strings.Join(unknown[id], "; "), Evidence: map[claims.Level]int{}, Specs: map[string]int{SpecFailed: len(unknown[id])}})
		s.Outcomes[Failed]++
	}
	s.Total = len(s.Claims)
	s.Status = s.status()
	s.Headline = s.headline()
	return s
}

// UnknownClaim is the kind of a claim a spec's label names that the run's
// catalogue lacks: it is listed, failed, so that a mislabelled spec is seen.
const UnknownClaim = "unknown"

func labelList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "claim:" + id
	}
	return strings.Join(out, ", ")
}

func orEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// clusterView counts the cluster's nodes: a node counts only when it was
// Ready at the run's start (its facts) and at its end (the record's end
// entry); the others are listed in Uncounted with why.
func clusterView(f *facts.Facts, end *facts.Readiness) ClusterView {
	// A record made before the facts carried the mark is read by the
	// version alone.
	pre := f.PreRelease || kubelines.IsPreRelease(f.ServerVersion)
	v := ClusterView{Known: true, ServerVersion: f.ServerVersion, PreRelease: pre, CNI: f.CNI, Cgroup: f.Cgroup()}
	for _, n := range f.Nodes {
		if !n.Simulated {
			why := ""
			switch {
			case !n.Ready:
				why = "NotReady at the run's start"
			case end == nil:
				why = "its readiness at the run's end was not recorded"
			case end.Error != "":
				why = "the nodes could not be read at the run's end"
			case !end.Ready(n.Name):
				why = "NotReady (or gone) at the run's end"
			}
			if why != "" {
				v.Uncounted = append(v.Uncounted, n.OS+" node "+n.Name+": "+why)
				continue
			}
		}
		switch {
		case n.OS == labels.Linux && !n.Simulated:
			v.LinuxNodes++
		case n.OS == labels.Windows && n.Simulated:
			v.SimulatedWindowsNodes++
		case n.OS == labels.Windows:
			v.WindowsNodes++
			if n.WindowsBuild != "" && !slices.Contains(v.WindowsBuilds, n.WindowsBuild) {
				v.WindowsBuilds = append(v.WindowsBuilds, n.WindowsBuild)
			}
		}
	}
	sort.Strings(v.WindowsBuilds)
	return v
}

// Ginkgo's messages for specs it skipped because a setup node failed.
var blockedMessages = []string{
	"Spec skipped because a BeforeAll node failed",
	"Spec skipped because an earlier spec in an ordered container failed",
}

// readSpec reads one It spec; ok is false when the run did not select it.
func readSpec(sr types.SpecReport, interrupted bool, setupFailed string, selected bool) (Spec, bool) {
	spec := Spec{Name: sr.FullText(), Labels: sr.Labels(), State: sr.State.String(), Seconds: sr.RunTime.Seconds(),
		Location: sr.LeafNodeLocation.String()}
	for _, e := range sr.ReportEntries {
		switch e.Name {
		case skips.EntryName:
			spec.SkipReason = e.StringRepresentation()
		case evidence.EntryName:
			if rec, err := evidence.Parse(e.StringRepresentation()); err == nil {
				spec.Evidence = append(spec.Evidence, rec)
			}
		case ArtifactsEntry:
			spec.Artifacts = e.StringRepresentation()
		case ledger.EntryName:
			le, err := ledger.Parse(e.StringRepresentation())
			switch {
			case err != nil || le.Verdict != ledger.Lifted:
			case le.Unexpected && !slices.Contains(spec.Drift, le.Claim):
				spec.Drift = append(spec.Drift, le.Claim)
			case !le.Unexpected && !slices.Contains(spec.Lifted, le.Claim):
				spec.Lifted = append(spec.Lifted, le.Claim)
			}
		}
	}
	if sr.State.Is(types.SpecStateFailureStates) || sr.State == types.SpecStateSkipped {
		spec.Message = sr.Failure.Message
		if sr.Failure.Location.FileName != "" {
			spec.Location = sr.Failure.Location.String()
		}
	}
	if wasRetried(sr) {
		spec.Attempts = sr.NumAttempts
	}
	switch {
	case sr.State == types.SpecStatePending:
		return spec, false
	case sr.State == types.SpecStatePassed:
		spec.Result = SpecPassed
	case sr.State.Is(types.SpecStateInterrupted | types.SpecStateAborted):
		spec.Result = SpecInterrupted
	case sr.State.Is(types.SpecStateFailureStates):
		spec.Result = SpecFailed
		if sr.Failure.FailureNodeType.Is(types.NodeTypeBeforeAll | types.NodeTypeBeforeEach | types.NodeTypeJustBeforeEach) {
			spec.Result = SpecBlocked
		}
	case slices.Contains(blockedMessages, sr.Failure.Message):
		spec.Result = SpecBlocked
	case spec.SkipReason == skips.Inconclusive.Key:
		spec.Result = SpecInconclusive
	case sr.Failure.Message != "" || spec.SkipReason != "":
		spec.Result = SpecSkipped
	case !selected:
		return spec, false
	case setupFailed != "":
		spec.Result, spec.Message = SpecBlocked, setupFailed
	case interrupted:
		spec.Result = SpecNeverRan
	default:
		// Skipped by Ginkgo without a word (a run that was cut short in a
		// way the report does not name): it did not run.
		spec.Result = SpecNeverRan
	}
	return spec, true
}

// Selector says whether the run's configuration selected a spec, as
// Ginkgo's own focus does (internal/focus.go, v2.32.0): not pending, the
// label filter over the suite's and the spec's labels, focus and skip
// files, focus and skip strings. It tells a spec left out from one that
// never got to run, and the record's specs from PreRunStats.
func Selector(r types.Report) func(types.SpecReport) bool {
	suite, cfg := r.SuiteDescription, r.SuiteConfig
	match := func([]string) bool { return true }
	if cfg.LabelFilter != "" {
		if f, err := types.ParseLabelFilter(cfg.LabelFilter); err == nil {
			match = f
		}
	}
	var focusFiles, skipFiles types.FileFilters
	if len(cfg.FocusFiles) > 0 {
		focusFiles, _ = types.ParseFileFilters(cfg.FocusFiles)
	}
	if len(cfg.SkipFiles) > 0 {
		skipFiles, _ = types.ParseFileFilters(cfg.SkipFiles)
	}
	var focus, skip []*regexp.Regexp
	for _, f := range cfg.FocusStrings {
		if re, err := regexp.Compile(f); err == nil {
			focus = append(focus, re)
		}
	}
	for _, f := range cfg.SkipStrings {
		if re, err := regexp.Compile(f); err == nil {
			skip = append(skip, re)
		}
	}
	return func(sr types.SpecReport) bool {
		if sr.State == types.SpecStatePending || !match(slices.Concat(r.SuiteLabels, sr.Labels())) {
			return false
		}
		locations := append(slices.Clone(sr.ContainerHierarchyLocations), sr.LeafNodeLocation)
		if len(focusFiles) > 0 && !focusFiles.Matches(locations) {
			return false
		}
		if len(skipFiles) > 0 && skipFiles.Matches(locations) {
			return false
		}
		text := suite + " " + sr.FullText() // what Ginkgo matches a focus against
		if len(focus) > 0 && !slices.ContainsFunc(focus, func(re *regexp.Regexp) bool { return re.MatchString(text) }) {
			return false
		}
		return !slices.ContainsFunc(skip, func(re *regexp.Regexp) bool { return re.MatchString(text) })
	}
}

// decide finds claim c's outcome from its selected specs; flakes are the
// run's specs that passed only on a retry, counted apart and named in Why
// with their first failure.
func decide(c claims.Claim, specs []Spec, hasSpecs bool, flakes map[string]Flake) Claim {
	out := Claim{ID: c.ID, Kind: string(c.Kind), Level: c.Level, Title: c.Title, Evidence: map[claims.Level]int{}, Specs: map[string]int{}}
	var failed, blocked, interrupted, drift, lifted, inconclusive, flaky []string
	shown := false
	showing := map[Showing]int{}
	for _, sp := range specs {
		if f, ok := flakes[sp.Name]; ok {
			out.Specs[SpecFlaky]++
			flaky = append(flaky, sp.Name+" ("+f.Note()+")")
		} else {
			out.Specs[sp.Result]++
		}
		switch sp.Result {
		case SpecFailed:
			failed = append(failed, sp.Name+": "+text.FirstLine(sp.Message))
		case SpecBlocked:
			blocked = append(blocked, sp.Name+": "+text.FirstLine(sp.Message))
		case SpecInterrupted, SpecNeverRan:
			interrupted = append(interrupted, sp.Name+" ("+sp.Result+")")
		case SpecInconclusive:
			inconclusive = append(inconclusive, text.FirstLine(strings.TrimPrefix(sp.Message, skips.Inconclusive.Text+": ")))
		case SpecSkipped:
			reason := sp.SkipReason
			if reason == "" {
				reason = "unrecorded"
			}
			if !slices.Contains(out.SkipReasons, reason) {
				out.SkipReasons = append(out.SkipReasons, reason)
			}
		case SpecPassed:
			level, shows := sp.Level(c)
			if level == "" {
				continue // recorded no evidence: shows nothing
			}
			out.Evidence[level]++
			if shows {
				shown = true
				// Drift is decided from evidence at the claim's level: a
				// Linux twin or a partial look says nothing of it.
				if slices.Contains(sp.Drift, c.ID) {
					drift = append(drift, sp.Name)
				}
				if slices.Contains(sp.Lifted, c.ID) {
					lifted = append(lifted, sp.Name)
				}
				seen := map[Showing]bool{}
				for _, r := range sp.Shows(c) {
					k := Showing{Level: r.Level, Build: r.OnWindowsBuild()}
					if !seen[k] {
						seen[k] = true
						showing[k]++
					}
				}
				continue
			}
			support := c.Level.Below(level)
			if level == claims.Linux && c.About("linux") {
				support = "Linux side only" // a claim about both OSes, seen on Linux
			}
			for _, r := range sp.Evidence {
				if r.Partial != "" {
					support = "partial: " + r.Partial
				}
			}
			// A Linux twin of a documented Windows limitation checks the
			// machinery; it says nothing of the limitation.
			if c.Kind == claims.Limit && level == claims.Linux && !c.About("linux") {
				continue
			}
			if !slices.Contains(out.SupportedBy, support) {
				out.SupportedBy = append(out.SupportedBy, support)
			}
		}
	}
	sort.SliceStable(out.SupportedBy, func(i, j int) bool { return supportRank(out.SupportedBy[i]) < supportRank(out.SupportedBy[j]) })
	for k, n := range showing {
		k.Specs = n
		out.Shown = append(out.Shown, k)
	}
	sort.Slice(out.Shown, func(i, j int) bool {
		a, b := out.Shown[i], out.Shown[j]
		if a.Level != b.Level {
			return slices.Index(claims.Levels, a.Level) < slices.Index(claims.Levels, b.Level)
		}
		return a.Build < b.Build
	})
	switch {
	case len(failed) > 0:
		out.Outcome, out.Why = Failed, strings.Join(failed, "; ")
	case len(blocked) > 0:
		out.Outcome, out.Why = Blocked, strings.Join(blocked, "; ")
	case len(interrupted) > 0:
		out.Outcome, out.Why = Interrupted, strings.Join(interrupted, "; ")
	case len(drift) > 0:
		out.Outcome, out.Why = Drift, "the documented limitation no longer holds, and this server version does not explain it: "+strings.Join(drift, "; ")
	case shown:
		out.Outcome = Shown
		if len(lifted) > 0 {
			out.Why = "the documented limitation is lifted, as expected of this server version (see the ledger): " + strings.Join(lifted, "; ")
		}
	case len(inconclusive) > 0:
		out.Outcome, out.Why = Inconclusive, strings.Join(inconclusive, "; ")
	case len(out.SupportedBy) > 0:
		out.Outcome, out.Why = Supported, strings.Join(out.SupportedBy, ", ")
		if len(out.SkipReasons) > 0 {
			out.Why += "; skipped: " + strings.Join(out.SkipReasons, ", ")
		}
	case len(specs) > 0:
		out.Outcome, out.Why = Skipped, strings.Join(out.SkipReasons, ", ")
		if out.Why == "" {
			out.Why = "only machinery checks ran (a Linux twin of a Windows limitation)"
		}
	case hasSpecs:
		out.Outcome = NotRun
	default:
		out.Outcome = NotCovered
	}
	if len(flaky) > 0 {
		note := "passed only on a retry: " + strings.Join(flaky, "; ")
		if out.Why != "" {
			note = out.Why + "; " + note
		}
		out.Why = note
	}
	return out
}

// supportRank orders what supported a claim, the closest to Windows first.
func supportRank(s string) int {
	switch {
	case s == "simulated nodes":
		return 0
	case s == "linux twin", s == "Linux side only":
		return 1
	case s == "API only":
		return 2
	case strings.HasPrefix(s, "partial"):
		return 3
	}
	return 4
}

func (c Claim) shownOnWindows() bool { return c.ShownAt(claims.Level.OnWindows) }

func (s Summary) status() string {
	status := "succeeded"
	if !s.Succeeded {
		status = "failed"
	}
	if s.Interrupted {
		status = "was interrupted (partial report)"
	}
	if n := len(s.Violations); n > 0 {
		names := make([]string, 0, n)
		for _, v := range s.Violations {
			if !slices.Contains(names, v.Invariant) {
				names = append(names, v.Invariant)
			}
		}
		status = fmt.Sprintf("has a record that breaks its contract (%d violation(s): %s), so it decides nothing; the run %s", n, strings.Join(names, ", "), status)
	}
	if n := len(s.NeverRan); n > 0 {
		status += fmt.Sprintf("; incomplete: %d selected spec(s) never ran", n)
	}
	switch {
	case !s.Cluster.Known:
		status += "; the cluster's nodes are unknown (the run did not reach them)"
	case s.Cluster.WindowsNodes == 0 && s.Cluster.SimulatedWindowsNodes > 0:
		status += fmt.Sprintf("; the cluster had no real Windows node (%d simulated): nothing was shown on Windows", s.Cluster.SimulatedWindowsNodes)
	case s.Cluster.WindowsNodes == 0:
		status += "; the cluster had no Windows node: nothing was shown on Windows"
	default:
		status += fmt.Sprintf("; %d Windows node(s), builds %s", s.Cluster.WindowsNodes, strings.Join(s.Cluster.WindowsBuilds, ", "))
	}
	if n := len(s.Cluster.Uncounted); n > 0 {
		status += fmt.Sprintf("; %d node(s) not counted (not Ready at the run's start and end)", n)
	}
	return status
}

func (s Summary) headline() string {
	var sup []string
	for _, k := range sortedKeys(s.SupportedBy) {
		sup = append(sup, fmt.Sprintf("%s %d", k, s.SupportedBy[k]))
	}
	supported := fmt.Sprint(s.Outcomes[Supported])
	if len(sup) > 0 {
		supported += " (" + strings.Join(sup, ", ") + ")"
	}
	prefix := ""
	if len(s.Violations) > 0 {
		prefix = "NO VERDICT: the record breaks its contract. "
	}
	return prefix + fmt.Sprintf("Shown: %d of %d (on Windows: %d). Failed: %d. Supported only: %s. Skipped: %d. Inconclusive: %d. Drift: %d. Blocked: %d. Interrupted: %d. Not run: %d. Not covered: %d.",
		s.Shown, s.Total, s.ShownOnWindows, s.Outcomes[Failed], supported, s.Outcomes[Skipped], s.Outcomes[Inconclusive],
		s.Outcomes[Drift], s.Outcomes[Blocked], s.Outcomes[Interrupted], s.Outcomes[NotRun], s.Outcomes[NotCovered])
}

// Counts returns how many claims have each outcome.
func (s Summary) Counts() map[string]int {
	out := map[string]int{}
	for _, c := range s.Claims {
		out[c.Outcome]++
	}
	return out
}

// Markdown renders the summary for people: the status line, then the
// headline a release manager reads.
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# winconform run: %s\n\n", s.Status)
	fmt.Fprintf(&b, "**%s**\n\n", s.Headline)
	if line := s.specCounts(); line != "" {
		b.WriteString(line + "\n\n")
	}
	fmt.Fprintf(&b, "Run `%s`, by winconform %s.\n\n", orUnknown(s.RunID), s.Harness)
	if c := s.Cluster; c.Known && (c.Cgroup != "" || c.PreRelease) {
		fmt.Fprintf(&b, "Cluster: %s", c.Kubernetes())
		if c.Cgroup != "" {
			fmt.Fprintf(&b, "; Linux kubelets on %s", c.Cgroup)
		}
		b.WriteString(".\n\n")
	}
	b.WriteString("A claim is *shown* only by a passing spec at its evidence level (the catalogue's `evidence`); " +
		"a passing spec below it (a Linux twin, simulated nodes, the API alone) only *supports* it.\n\n")
	if s.Rerun != "" {
		fmt.Fprintf(&b, "This run reran the failed and interrupted specs of %s.\n\n", s.Rerun)
	}
	if len(s.Violations) > 0 {
		b.WriteString("## The record breaks its contract (docs/record.md): it decides nothing\n\n")
		for _, v := range s.Violations {
			fmt.Fprintf(&b, "- **%s**: %s\n", v.Invariant, v.Detail)
		}
		b.WriteString("\n")
	}
	if n := len(s.Cluster.Uncounted); n > 0 {
		b.WriteString("## Nodes that do not count (a node counts when Ready at the run's start and end)\n\n")
		for _, u := range s.Cluster.Uncounted {
			fmt.Fprintf(&b, "- %s\n", u)
		}
		b.WriteString("\n")
	}
	if len(s.Unrecorded) > 0 {
		b.WriteString("## Passing specs that recorded no evidence (they show nothing; the run fails for them)\n\n")
		for _, n := range s.Unrecorded {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	if len(s.Flaky) > 0 {
		b.WriteString("## Flaky specs (passed only on a retry, --flake-attempts; the gate's flakes.tolerated decides)\n\n")
		for _, f := range s.Flaky {
			fmt.Fprintf(&b, "- **%s**: %s", f.Spec, f.Note())
			if f.Artifacts != "" {
				fmt.Fprintf(&b, " (artifacts: `%s`)", f.Artifacts)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(s.NeverRan) > 0 {
		b.WriteString("## Specs the run selected but never reached\n\n")
		for _, n := range s.NeverRan {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	if len(s.SkipReasons) > 0 {
		b.WriteString("## Skipped specs by reason\n\n| reason | specs |\n|---|---|\n")
		for _, k := range sortedKeys(s.SkipReasons) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, s.SkipReasons[k])
		}
		b.WriteString("\n")
	}
	b.WriteString("## Claims\n\n\"needs\" is the level the catalogue asks of the claim; \"shown by\" what the run observed that shows it.\n\n" +
		"| claim | kind | needs | shown by | outcome | why | passing specs by evidence | specs |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range s.Claims {
		var ev []string
		for _, l := range claims.Levels {
			if n := c.Evidence[l]; n > 0 {
				ev = append(ev, fmt.Sprintf("%s %d", l, n))
			}
		}
		var sp []string
		for _, k := range sortedKeys(c.Specs) {
			sp = append(sp, fmt.Sprintf("%s %d", k, c.Specs[k]))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.ID, c.Kind, c.Level, c.ShownBy(), c.Outcome, cell(c.Why), strings.Join(ev, ", "), strings.Join(sp, ", "))
	}
	var failed []Spec
	for _, sp := range s.Specs {
		if sp.Result == SpecFailed || sp.Result == SpecBlocked || sp.Result == SpecInterrupted {
			failed = append(failed, sp)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed, blocked and interrupted specs\n\n")
		for _, sp := range failed {
			fmt.Fprintf(&b, "- **%s** (%s, %s): %s", sp.Name, sp.Result, sp.Location, text.FirstLine(sp.Message))
			if sp.Attempts > 1 {
				fmt.Fprintf(&b, " (each of its %d attempts failed)", sp.Attempts)
			}
			if sp.Artifacts != "" {
				fmt.Fprintf(&b, " (artifacts: `%s`)", sp.Artifacts)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func cell(s string) string { return Cell(s, 300) }

// specCounts says how many specs had each result, a pass on a retry
// counted apart from the passes: "Specs: 11 passed, 1 flaky (passed on a
// retry), 2 failed."
func (s Summary) specCounts() string {
	n := map[string]int{}
	for _, sp := range s.Specs {
		n[sp.Result]++
	}
	n[SpecPassed] -= len(s.Flaky)
	n[SpecFlaky] = len(s.Flaky)
	var parts []string
	for _, r := range []string{SpecPassed, SpecFlaky, SpecFailed, SpecBlocked, SpecInterrupted, SpecNeverRan, SpecSkipped, SpecInconclusive} {
		if n[r] == 0 {
			continue
		}
		part := fmt.Sprintf("%d %s", n[r], r)
		if r == SpecFlaky {
			part += " (passed on a retry)"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Specs: " + strings.Join(parts, ", ") + "."
}

func orUnknown(s string) string {
	if s == "" {
		return "(no run ID)"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Write puts summary.json and summary.md into dir.
func (s Summary) Write(dir string) error {
	return WriteFiles(dir, "summary.json", "summary.md", s, s.Markdown())
}
