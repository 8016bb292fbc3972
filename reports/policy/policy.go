// Package policy reads a release gate's policy: which claims a run must
// show and on what evidence, what the other outcomes do, which known issues
// are accepted until when, how many flakes are tolerated, whether drift
// from the documents blocks, and what a baseline comparison may block on.
//
// A policy is YAML, decoded strictly (an unknown field is an error, with
// its line), given its defaults, then validated against the claim catalogue
// (framework/claims): every problem is reported at once, each with its
// field path and its fix.
package policy

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/internal/strictyaml"
)

// Action is what a finding does to the gate's decision.
type Action string

// Actions.
const (
	// Block: the finding blocks the release.
	Block Action = "block"
	// Report: the finding is listed, and does not block.
	Report Action = "report"
	// Refuse: the input is unusable (for a baseline of another cluster shape).
	Refuse Action = "refuse"
)

// DateLayout is how known issues' expiry dates are written.
const DateLayout = "2006-01-02"

// Policy is a release gate's policy.
type Policy struct {
	// Name says what the policy gates ("windows-node-build").
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Cluster is what the run's cluster must have been.
	Cluster Cluster `yaml:"cluster,omitempty" json:"cluster"`
	// Required lists the claims the run must show, and on what evidence.
	Required []Requirement `yaml:"required,omitempty" json:"required"`
	// Outcomes says what a required claim's outcomes other than shown,
	// supported and failed do (those: shown passes, the others block).
	Outcomes Outcomes `yaml:"outcomes,omitempty" json:"outcomes"`
	// OtherFailures is what a failed claim (or spec) the policy does not
	// require does: block (default) or report.
	OtherFailures Action `yaml:"otherFailures,omitempty" json:"otherFailures"`
	// Drift is what a documented limitation found lifted does: report
	// (default) or block.
	Drift Action `yaml:"drift,omitempty" json:"drift"`
	// Flakes bounds the flaky specs and matrix cells.
	Flakes Flakes `yaml:"flakes,omitempty" json:"flakes"`
	// Baseline is what a comparison with an earlier run may block on.
	Baseline Baseline `yaml:"baseline,omitempty" json:"baseline"`
	// KnownIssues are accepted until they expire.
	KnownIssues []KnownIssue `yaml:"knownIssues,omitempty" json:"knownIssues,omitempty"`
}

// Cluster is what the policy asks of the run's cluster.
type Cluster struct {
	// WindowsNodes is the least number of real Windows nodes.
	WindowsNodes int `yaml:"windowsNodes,omitempty" json:"windowsNodes,omitempty"`
	// WindowsBuilds must each be the build of a real Windows node.
	WindowsBuilds []string `yaml:"windowsBuilds,omitempty" json:"windowsBuilds,omitempty"`
}

// Requirement selects claims that must be shown. A claim is selected when
// it matches every field that is set: its ID is among Claims, its area
// among Areas, it carries every label of Labels (and none of those written
// with a leading !), and it is not among Except.
type Requirement struct {
	Claims []string `yaml:"claims,omitempty" json:"claims,omitempty"`
	Areas  []string `yaml:"areas,omitempty" json:"areas,omitempty"`
	Labels []string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Except []string `yaml:"except,omitempty" json:"except,omitempty"`
	// Level is the least evidence level that counts: a claim is met only
	// when it is shown and a passing spec ran at a level that shows both
	// the claim and Level. Empty: the claim's own level.
	Level claims.Level `yaml:"level,omitempty" json:"level,omitempty"`
	// Why is shown with the decisions.
	Why string `yaml:"why,omitempty" json:"why,omitempty"`
}

// Outcomes are the actions for a required claim's outcomes that say
// nothing was decided. Each is block (the default, and the only value
// accepted): a required claim is met only when it is shown, and a release
// never ships with one unmet unless a known issue naming it waives its
// failure. Drop a claim that cannot be shown from required: instead.
type Outcomes struct {
	Inconclusive Action `yaml:"inconclusive,omitempty" json:"inconclusive"`
	Blocked      Action `yaml:"blocked,omitempty" json:"blocked"`
	Interrupted  Action `yaml:"interrupted,omitempty" json:"interrupted"`
	NotRun       Action `yaml:"notRun,omitempty" json:"notRun"`
	Skipped      Action `yaml:"skipped,omitempty" json:"skipped"`
	NotCovered   Action `yaml:"notCovered,omitempty" json:"notCovered"`
}

// Flakes bounds flakiness: a spec that passed only on a retry, and a
// matrix cell whose two probes disagreed, are flaky.
type Flakes struct {
	// Tolerated is how many flaky specs and cells, together, are reported
	// without blocking (default 0).
	Tolerated int `yaml:"tolerated,omitempty" json:"tolerated"`
}

// Baseline is what the comparison with a baseline run does.
type Baseline struct {
	// NewlyFailing: a claim failing now that did not fail in the baseline
	// (default block).
	NewlyFailing Action `yaml:"newlyFailing,omitempty" json:"newlyFailing"`
	// LostShown: a claim shown in the baseline and not now (default report).
	LostShown Action `yaml:"lostShown,omitempty" json:"lostShown"`
	// OtherShape: a baseline from a cluster of another shape (node counts
	// by OS, CNI): report (default) or refuse.
	OtherShape Action `yaml:"otherShape,omitempty" json:"otherShape"`
}

// MinSpecPrefix is the least length of a known issue's spec: that is a
// prefix of a spec's full name rather than the whole of it.
const MinSpecPrefix = 16

// KnownIssue accepts a claim's or a spec's failure until Expires. Spec is
// a spec's full name as the report has it, or a prefix of it of at least
// MinSpecPrefix characters ending at a word's end, that names one spec.
type KnownIssue struct {
	Claim  string `yaml:"claim,omitempty" json:"claim,omitempty"`
	Spec   string `yaml:"spec,omitempty" json:"spec,omitempty"`
	Reason string `yaml:"reason" json:"reason"`
	Link   string `yaml:"link" json:"link"`
	// Expires is the last day (YYYY-MM-DD, UTC) the issue is accepted;
	// from the day after, it blocks again.
	Expires string `yaml:"expires" json:"expires"`
}

// ExpiresOn is Expires as a date (valid once the policy is loaded).
func (k KnownIssue) ExpiresOn() time.Time {
	t, _ := time.Parse(DateLayout, k.Expires)
	return t
}

// Expired says whether the issue no longer applies on day now (UTC).
func (k KnownIssue) Expired(now time.Time) bool {
	return now.UTC().Format(DateLayout) > k.Expires
}

// Subject names what the issue is about.
func (k KnownIssue) Subject() string {
	if k.Claim != "" {
		return k.Claim
	}
	return "spec " + k.Spec
}

// Load reads, defaults and validates the policy file at path. Every
// problem is in the one error, each naming the file, the field and the fix.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v: pass a policy file (policies/ has examples)", path, err)
	}
	return Parse(path, data)
}

// Parse is Load for data read from path. The policy is decoded by the
// harness's one YAML decoder (internal/strictyaml): an unknown field (with
// the nearest known one), a value of the wrong type, a key written twice,
// each with its line; then defaulted and validated. Every problem is in
// the one error, each line naming the file, the line and the field.
func Parse(path string, data []byte) (*Policy, error) {
	var p Policy
	var d strictyaml.Decoder
	if !d.Unmarshal(data, &p) && len(d.Problems) == 0 {
		return nil, fmt.Errorf("policy %s is empty: write at least its name: and what it requires (policies/ has examples; the README's \"Release gating\" section describes every field)", path)
	}
	if len(d.Problems) > 0 {
		lines := make([]string, len(d.Problems))
		for i, pr := range d.Problems {
			lines[i] = pr.Format(path)
		}
		return nil, usable(path, lines)
	}
	p.Default()
	if errs := p.Validate(); len(errs) > 0 {
		lines := make([]string, len(errs))
		for i, e := range errs {
			at := path
			if line := d.LineOf(e.Field); line > 0 {
				at = fmt.Sprintf("%s:%d", path, line)
			}
			lines[i] = at + ": " + e.Error()
		}
		return nil, usable(path, lines)
	}
	return &p, nil
}

// usable makes one error of a policy's problems, one a line.
func usable(path string, lines []string) error {
	noun := "problem"
	if len(lines) > 1 {
		noun = "problems"
	}
	return fmt.Errorf("policy %s is not usable (%d %s; the README's \"Release gating\" section describes every field):\n  %s",
		path, len(lines), noun, strings.Join(lines, "\n  "))
}

// Default fills what the policy leaves out: block for the actions that
// block by default, report for the others, and cluster.windowsNodes, when
// unset, from the claims the policy requires on Windows (WindowsNodes).
func (p *Policy) Default() {
	if p.Cluster.WindowsNodes == 0 {
		p.Cluster.WindowsNodes, _ = p.WindowsNodes()
	}
	for _, a := range []*Action{&p.Outcomes.Inconclusive, &p.Outcomes.Blocked, &p.Outcomes.Interrupted,
		&p.Outcomes.NotRun, &p.Outcomes.Skipped, &p.Outcomes.NotCovered, &p.OtherFailures, &p.Baseline.NewlyFailing} {
		if *a == "" {
			*a = Block
		}
	}
	for _, a := range []*Action{&p.Drift, &p.Baseline.LostShown, &p.Baseline.OtherShape} {
		if *a == "" {
			*a = Report
		}
	}
}

var (
	buildPattern = regexp.MustCompile(`^10\.0\.[0-9]{5}$`)
	blockReport  = []string{string(Block), string(Report)}
)

// ValidBuild says whether b is a Windows build as the node label
// node.kubernetes.io/windows-build has it (10.0.20348).
func ValidBuild(b string) bool { return buildPattern.MatchString(b) }

// Validate lists every problem of a defaulted policy. A policy that
// requires nothing cannot gate: it must require at least one claim, and
// each requirement must select at least one claim of the catalogue.
func (p *Policy) Validate() field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(p.Name) == "" {
		errs = append(errs, field.Required(field.NewPath("name"), "name the policy, e.g. name: windows-node-build"))
	}
	if len(p.Required) == 0 {
		errs = append(errs, field.Required(field.NewPath("required"),
			"a policy that requires no claim cannot gate (it would ship a run that showed nothing): list what the run must show, e.g. - labels: [\"os:linux\"] (policies/ has examples)"))
	}
	cp := field.NewPath("cluster")
	if p.Cluster.WindowsNodes < 0 {
		errs = append(errs, field.Invalid(cp.Child("windowsNodes"), p.Cluster.WindowsNodes, "must be 0 or more"))
	} else if need, who := p.WindowsNodes(); p.Cluster.WindowsNodes < need {
		errs = append(errs, field.Invalid(cp.Child("windowsNodes"), p.Cluster.WindowsNodes,
			fmt.Sprintf("%s needs %d real Windows nodes to be shown on Windows: set at least %d, or leave the field out (it then takes what the required claims need), or drop %s from required: (except:)", who, need, need, who)))
	}
	for i, b := range p.Cluster.WindowsBuilds {
		if !buildPattern.MatchString(b) {
			errs = append(errs, field.Invalid(cp.Child("windowsBuilds").Index(i), b, "not a Windows build: write it as the node label node.kubernetes.io/windows-build has it, e.g. 10.0.20348"))
		}
	}
	for i, r := range p.Required {
		errs = append(errs, r.validate(field.NewPath("required").Index(i))...)
	}
	op := field.NewPath("outcomes")
	for name, a := range map[string]Action{"inconclusive": p.Outcomes.Inconclusive, "blocked": p.Outcomes.Blocked,
		"interrupted": p.Outcomes.Interrupted, "notRun": p.Outcomes.NotRun, "skipped": p.Outcomes.Skipped, "notCovered": p.Outcomes.NotCovered} {
		if a == Report {
			errs = append(errs, field.Invalid(op.Child(name), a, "a required claim that is "+name+" is not shown, and a release never ships with a required claim unmet: "+
				"remove the line (block is the only value), drop the claims that cannot be shown here from required: (except:), or accept a failure with a known issue naming its claim"))
			continue
		}
		errs = append(errs, checkAction(op.Child(name), a, []string{string(Block)})...)
	}
	errs = append(errs, checkAction(field.NewPath("otherFailures"), p.OtherFailures, blockReport)...)
	errs = append(errs, checkAction(field.NewPath("drift"), p.Drift, blockReport)...)
	if p.Flakes.Tolerated < 0 {
		errs = append(errs, field.Invalid(field.NewPath("flakes", "tolerated"), p.Flakes.Tolerated, "must be 0 or more: how many flaky specs and cells are reported without blocking"))
	}
	bp := field.NewPath("baseline")
	errs = append(errs, checkAction(bp.Child("newlyFailing"), p.Baseline.NewlyFailing, blockReport)...)
	errs = append(errs, checkAction(bp.Child("lostShown"), p.Baseline.LostShown, blockReport)...)
	errs = append(errs, checkAction(bp.Child("otherShape"), p.Baseline.OtherShape, []string{string(Report), string(Refuse)})...)
	for i, k := range p.KnownIssues {
		errs = append(errs, k.validate(field.NewPath("knownIssues").Index(i))...)
	}
	// The field paths of a map's problems come out in map order: sort them.
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

func checkAction(path *field.Path, a Action, allowed []string) field.ErrorList {
	if slices.Contains(allowed, string(a)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, a, allowed)}
}

func (r Requirement) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Claims) == 0 && len(r.Areas) == 0 && len(r.Labels) == 0 {
		errs = append(errs, field.Required(path, "select claims with claims: (IDs), areas: (e.g. [NET]) or labels: (e.g. [os:windows])"))
	}
	for i, id := range r.Claims {
		errs = append(errs, checkClaim(path.Child("claims").Index(i), id)...)
	}
	for i, id := range r.Except {
		errs = append(errs, checkClaim(path.Child("except").Index(i), id)...)
	}
	areas := Areas()
	for i, a := range r.Areas {
		if !slices.Contains(areas, a) {
			errs = append(errs, field.NotSupported(path.Child("areas").Index(i), a, areas))
		}
	}
	for i, l := range r.Labels {
		if err := checkLabel(l); err != "" {
			errs = append(errs, field.Invalid(path.Child("labels").Index(i), l, err))
		}
	}
	if r.Level != "" && !r.Level.Valid() {
		levels := make([]string, len(claims.Levels))
		for i, l := range claims.Levels {
			levels[i] = string(l)
		}
		errs = append(errs, field.NotSupported(path.Child("level"), r.Level, levels))
		return errs
	}
	if len(errs) > 0 {
		return errs
	}
	if len(r.selected()) == 0 {
		return field.ErrorList{field.Invalid(path, r.describe(),
			"selects no claim of the catalogue (its selectors contradict each other, or except: removes every claim they select): a requirement that requires nothing cannot gate; fix its selectors (`winconform list` shows the claims and their labels) or drop it")}
	}
	// A claim that no evidence could show at Level makes the requirement
	// impossible to meet: say which.
	if r.Level != "" {
		var never []string
		for _, c := range claims.All() {
			if r.Selects(c) && !Reachable(c.Level, r.Level) {
				never = append(never, c.ID)
			}
		}
		if len(never) > 0 {
			errs = append(errs, field.Invalid(path.Child("level"), r.Level,
				fmt.Sprintf("%s can never be shown at %s (no evidence level shows both: their own level and %s): list them under except:, or lower the level",
					strings.Join(never, ", "), r.Level, r.Level)))
		}
	}
	return errs
}

func checkClaim(path *field.Path, id string) field.ErrorList {
	if _, ok := claims.Get(id); ok {
		return nil
	}
	return field.ErrorList{field.Invalid(path, id, "not a claim of the catalogue: use an ID that `winconform list` shows (AREA-NN, e.g. NET-01)")}
}

// Reachable says whether some evidence level shows both a claim of level
// claim and the requirement req.
func Reachable(claim, req claims.Level) bool {
	for _, l := range claims.Levels {
		if claim.Shows(l) && req.Shows(l) {
			return true
		}
	}
	return false
}

// Areas lists the catalogue's areas.
func Areas() []string {
	var out []string
	for _, c := range claims.All() {
		if !slices.Contains(out, c.Area()) {
			out = append(out, c.Area())
		}
	}
	sort.Strings(out)
	return out
}

// Label prefixes a policy may select claims by.
var labelPrefixes = []string{"os:", "level:", "kind:", "needs:"}

// Labels are the labels of claim c, from its catalogue entry: os:<os> for
// each OS it is about, level:<its evidence level>, kind:<path|feature|limit>,
// needs:<what> for what a spec of it needs on any of its OSes.
func Labels(c claims.Claim) []string {
	var out []string
	for _, os := range c.OSes {
		out = append(out, "os:"+string(os))
	}
	out = append(out, "level:"+string(c.Level), "kind:"+string(c.Kind))
	for _, os := range c.OSes {
		for _, n := range c.Needs(os) {
			if !slices.Contains(out, "needs:"+n) {
				out = append(out, "needs:"+n)
			}
		}
	}
	return out
}

// checkLabel returns what is wrong with a label of a requirement, or "".
func checkLabel(l string) string {
	bare := strings.TrimPrefix(l, "!")
	prefix, value, ok := strings.Cut(bare, ":")
	fix := "write os:linux|windows, level:<evidence level>, kind:path|feature|limit or needs:<what> (a leading ! for \"not\")"
	if !ok || !slices.Contains(labelPrefixes, prefix+":") {
		return "unknown label: " + fix
	}
	var allowed []string
	switch prefix {
	case "os":
		allowed = []string{"linux", "windows"}
	case "level":
		for _, lv := range claims.Levels {
			allowed = append(allowed, string(lv))
		}
	case "kind":
		allowed = []string{string(claims.Path), string(claims.Feature), string(claims.Limit)}
	case "needs":
		allowed = claims.Needs
	}
	if !slices.Contains(allowed, value) {
		return fmt.Sprintf("unknown value %q for %s: one of %s", value, prefix+":", strings.Join(allowed, ", "))
	}
	return ""
}

// selected lists the catalogue's claims the requirement selects.
func (r Requirement) selected() []claims.Claim {
	var out []claims.Claim
	for _, c := range claims.All() {
		if r.Selects(c) {
			out = append(out, c)
		}
	}
	return out
}

// describe is the requirement's selectors in a line, for its problems.
func (r Requirement) describe() string {
	var parts []string
	for _, f := range []struct {
		name string
		v    []string
	}{{"claims", r.Claims}, {"areas", r.Areas}, {"labels", r.Labels}, {"except", r.Except}} {
		if len(f.v) > 0 {
			parts = append(parts, f.name+": ["+strings.Join(f.v, ", ")+"]")
		}
	}
	return strings.Join(parts, ", ")
}

// WindowsNodes is how many real Windows nodes the policy's required claims
// need to be shown on Windows (a claim required on Windows needs one, a
// path between Windows pods on two nodes two: claims.Claim.WindowsNodes),
// and the first claim that needs that many ("" when none needs any).
func (p *Policy) WindowsNodes() (int, string) {
	need, who := 0, ""
	for _, c := range claims.All() {
		onWindows := c.Level.OnWindows()
		for _, r := range p.Required {
			if r.Selects(c) && (onWindows || r.Level.OnWindows()) {
				if n := c.WindowsNodes(); n > need {
					need, who = n, c.ID
				}
			}
		}
	}
	return need, who
}

// Selects says whether the requirement selects claim c.
func (r Requirement) Selects(c claims.Claim) bool {
	if slices.Contains(r.Except, c.ID) {
		return false
	}
	if len(r.Claims) > 0 && !slices.Contains(r.Claims, c.ID) {
		return false
	}
	if len(r.Areas) > 0 && !slices.Contains(r.Areas, c.Area()) {
		return false
	}
	have := Labels(c)
	for _, l := range r.Labels {
		if neg, ok := strings.CutPrefix(l, "!"); ok {
			if slices.Contains(have, neg) {
				return false
			}
		} else if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}

func (k KnownIssue) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case k.Claim == "" && k.Spec == "":
		errs = append(errs, field.Required(path.Child("claim"), "name the claim (claim: NET-21) or the spec (spec: <its full name, as the report has it>) the issue is about"))
	case k.Claim != "" && k.Spec != "":
		errs = append(errs, field.Invalid(path.Child("spec"), k.Spec, "name the claim or the spec, not both: one known issue each"))
	case k.Claim != "":
		errs = append(errs, checkClaim(path.Child("claim"), k.Claim)...)
	case len(strings.TrimSpace(k.Spec)) < MinSpecPrefix:
		errs = append(errs, field.Invalid(path.Child("spec"), k.Spec, fmt.Sprintf("too short to name one spec: write the spec's full name, as the report has it (or a prefix of at least %d characters that names one spec), or name its claim: instead", MinSpecPrefix)))
	case strings.TrimSpace(k.Spec) != k.Spec:
		errs = append(errs, field.Invalid(path.Child("spec"), k.Spec, "leading or trailing spaces: write the spec's name as the report has it"))
	}
	if strings.TrimSpace(k.Reason) == "" {
		errs = append(errs, field.Required(path.Child("reason"), "say why the failure is accepted"))
	}
	if k.Link == "" {
		errs = append(errs, field.Required(path.Child("link"), "link the issue that tracks it (https://...)"))
	} else if u, err := url.Parse(k.Link); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("link"), k.Link, "not an http(s) URL: link the issue that tracks it (https://...)"))
	}
	if k.Expires == "" {
		errs = append(errs, field.Required(path.Child("expires"), "a known issue must expire: add expires: YYYY-MM-DD, the last day it is accepted (from the day after, it blocks again)"))
	} else if _, err := time.Parse(DateLayout, k.Expires); err != nil {
		errs = append(errs, field.Invalid(path.Child("expires"), k.Expires, "not a date YYYY-MM-DD: write the last day the issue is accepted, e.g. 2026-03-31"))
	}
	return errs
}
