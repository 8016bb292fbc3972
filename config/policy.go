package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// GatePolicy is a release gate's policy: which claims a run must show and
// on what evidence, what the other outcomes do, which known issues are
// accepted until when, how many flakes are tolerated, whether drift from
// the documents blocks, and what a baseline comparison may block on. The
// claims it names are checked against the catalogue by reports/policy.
type GatePolicy struct {
	// Name says what the policy gates ("windows-node-build").
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	// Cluster is what the run's cluster must have been.
	Cluster PolicyCluster `yaml:"cluster" json:"cluster"`
	// Required lists the claims the run must show, and on what evidence.
	Required []Requirement `yaml:"required" json:"required"`
	// Outcomes says what a required claim's outcomes other than shown,
	// supported and failed do: block, the only value accepted.
	Outcomes Outcomes `yaml:"outcomes" json:"outcomes"`
	// OtherFailures is what a failed claim (or spec) the policy does not
	// require does: block (default) or report.
	OtherFailures Action `yaml:"otherFailures" json:"otherFailures"`
	// Drift is what a documented limitation found lifted does: report
	// (default) or block.
	Drift Action `yaml:"drift" json:"drift"`
	// Flakes bounds the flaky specs and matrix cells.
	Flakes Flakes `yaml:"flakes" json:"flakes"`
	// Baseline is what a comparison with an earlier run may block on.
	Baseline Baseline `yaml:"baseline" json:"baseline"`
	// KnownIssues are accepted until they expire.
	KnownIssues []KnownIssue `yaml:"knownIssues" json:"knownIssues,omitempty"`
}

// PolicyCluster is what a policy asks of the run's cluster.
type PolicyCluster struct {
	// WindowsNodes is the least number of real Windows nodes (by default
	// what the required claims need).
	WindowsNodes int `yaml:"windowsNodes" json:"windowsNodes,omitempty"`
	// WindowsBuilds must each be the build of a real Windows node.
	WindowsBuilds []string `yaml:"windowsBuilds" json:"windowsBuilds,omitempty"`
	// AllowPreRelease lets a run on a pre-release of Kubernetes (such as
	// v1.38.0-beta.0, the line the harness has before it ships) pass the
	// gate; by default a pre-release blocks it, whatever the run shows.
	AllowPreRelease bool `yaml:"allowPreRelease" json:"allowPreRelease,omitempty"`
}

// Requirement selects claims that must be shown: a claim is selected when
// its ID is among Claims, its area among Areas, it carries every label of
// Labels (and none of those written with a leading !), and it is not among
// Except, each where set. Level is the least evidence level that counts
// (empty: the claim's own); Why is shown with the decisions.
type Requirement struct {
	Claims []string `yaml:"claims" json:"claims,omitempty"`
	Areas  []string `yaml:"areas" json:"areas,omitempty"`
	Labels []string `yaml:"labels" json:"labels,omitempty"`
	Except []string `yaml:"except" json:"except,omitempty"`
	Level  string   `yaml:"level" json:"level,omitempty"`
	Why    string   `yaml:"why" json:"why,omitempty"`
}

// Outcomes are the actions for a required claim's outcomes that say
// nothing was decided: each is block, the default and the only value
// accepted (drop a claim that cannot be shown from required: instead).
type Outcomes struct {
	Inconclusive Action `yaml:"inconclusive" json:"inconclusive"`
	Blocked      Action `yaml:"blocked" json:"blocked"`
	Interrupted  Action `yaml:"interrupted" json:"interrupted"`
	NotRun       Action `yaml:"notRun" json:"notRun"`
	Skipped      Action `yaml:"skipped" json:"skipped"`
	NotCovered   Action `yaml:"notCovered" json:"notCovered"`
}

// Flakes bounds flakiness: Tolerated flaky specs and cells, together, are
// reported without blocking (default 0).
type Flakes struct {
	Tolerated int `yaml:"tolerated" json:"tolerated"`
}

// Baseline is what the comparison with a baseline run does: a claim
// failing now that did not (NewlyFailing: block by default), one shown
// then and not now (LostShown: report), a baseline of a cluster of another
// shape (OtherShape: report or refuse).
type Baseline struct {
	NewlyFailing Action `yaml:"newlyFailing" json:"newlyFailing"`
	LostShown    Action `yaml:"lostShown" json:"lostShown"`
	OtherShape   Action `yaml:"otherShape" json:"otherShape"`
}

// KnownIssue accepts a claim's or a spec's failure until Expires, the last
// day (YYYY-MM-DD, UTC). Spec is a spec's full name as the report has it,
// or a prefix of it of at least MinSpecPrefix characters that names one.
type KnownIssue struct {
	Claim   string `yaml:"claim" json:"claim,omitempty"`
	Spec    string `yaml:"spec" json:"spec,omitempty"`
	Reason  string `yaml:"reason" json:"reason"`
	Link    string `yaml:"link" json:"link"`
	Expires string `yaml:"expires" json:"expires"`
}

// Action is what a finding does to the gate's decision.
type Action string

// Actions.
const (
	// Block: the finding blocks the release.
	Block Action = "block"
	// Report: the finding is listed, and does not block.
	Report Action = "report"
	// Refuse: the input is unusable (a baseline of another cluster shape).
	Refuse Action = "refuse"
)

// DateLayout is how known issues' expiry dates are written.
const DateLayout = "2006-01-02"

// MinSpecPrefix is the least length of a known issue's spec.
const MinSpecPrefix = 16

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

var buildPattern = regexp.MustCompile(`^10\.0\.[0-9]{5}$`)

// ValidBuild says whether b is a Windows build as the node label
// node.kubernetes.io/windows-build has it (10.0.20348).
func ValidBuild(b string) bool { return buildPattern.MatchString(b) }

func (*GatePolicy) kind() string { return "GatePolicy" }

// OneOf is the problem of v at p when it is not one of allowed, else nil.
func OneOf(p *field.Path, v string, allowed []string) *field.Error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return Invalid(p, Quote(v)+" is not one of "+joinOr(allowed), strings.TrimSpace(DidYouMean(v, allowed)+" write one of them"))
}

func (p *GatePolicy) check(l *loader) { l.addAll(p.Validate()) }

// Validate gives the policy its defaults (block for the actions that block
// by default, report for the others) and returns the problems of its
// structure and values; the claims it names are reports/policy's to check.
func (p *GatePolicy) Validate() field.ErrorList {
	var errs field.ErrorList
	bad := func(p *field.Path, msg, fix string) { errs = append(errs, Invalid(p, msg, fix)) }
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
	path := field.NewPath
	if strings.TrimSpace(p.Name) == "" {
		errs = append(errs, Missing(path("name"), "name the policy, such as name: windows-node-build"))
	}
	if len(p.Required) == 0 {
		errs = append(errs, Missing(path("required"), `list what the run must show, such as - labels: ["os:linux"] (policies/ has examples): a policy that requires no claim cannot gate`))
	}
	if p.Cluster.WindowsNodes < 0 {
		bad(path("cluster", "windowsNodes"), fmt.Sprintf("%d is fewer than none", p.Cluster.WindowsNodes), "write 0 or more")
	}
	for i, b := range p.Cluster.WindowsBuilds {
		if !ValidBuild(b) {
			bad(path("cluster", "windowsBuilds").Index(i), Quote(b)+" is not a Windows build",
				"write it as the node label node.kubernetes.io/windows-build has it, such as 10.0.20348")
		}
	}
	for i, r := range p.Required {
		if len(r.Claims)+len(r.Areas)+len(r.Labels) == 0 {
			bad(path("required").Index(i), "selects no claim", "select claims with claims: (IDs), areas: (such as [NET]) or labels: (such as [os:windows])")
		}
	}
	block, blockReport := []string{string(Block)}, []string{string(Block), string(Report)}
	op := path("outcomes")
	o := p.Outcomes
	for i, a := range []Action{o.Inconclusive, o.Blocked, o.Interrupted, o.NotRun, o.Skipped, o.NotCovered} {
		name := keys(o)[i]
		if a == Report {
			bad(op.Child(name), "a required claim that is "+name+" is not shown, and a release never ships with a required claim unmet",
				"remove the line (block is the only value), drop the claims that cannot be shown here from required: (except:), or accept a failure with a known issue naming its claim")
		} else if e := OneOf(op.Child(name), string(a), block); e != nil {
			errs = append(errs, e)
		}
	}
	for _, c := range []struct {
		p       *field.Path
		a       Action
		allowed []string
	}{{path("otherFailures"), p.OtherFailures, blockReport}, {path("drift"), p.Drift, blockReport},
		{path("baseline", "newlyFailing"), p.Baseline.NewlyFailing, blockReport}, {path("baseline", "lostShown"), p.Baseline.LostShown, blockReport},
		{path("baseline", "otherShape"), p.Baseline.OtherShape, []string{string(Report), string(Refuse)}}} {
		if e := OneOf(c.p, string(c.a), c.allowed); e != nil {
			errs = append(errs, e)
		}
	}
	if p.Flakes.Tolerated < 0 {
		bad(path("flakes", "tolerated"), fmt.Sprintf("%d is fewer than none", p.Flakes.Tolerated), "write 0 or more: how many flaky specs and cells are reported without blocking")
	}
	for i, k := range p.KnownIssues {
		errs = append(errs, k.validate(path("knownIssues").Index(i))...)
	}
	return errs
}

func (k KnownIssue) validate(p *field.Path) (errs field.ErrorList) {
	switch {
	case k.Claim == "" && k.Spec == "":
		errs = append(errs, Missing(p.Child("claim"), "name the claim (claim: NET-21) or the spec (spec: <its full name, as the report has it>) the issue is about"))
	case k.Claim != "" && k.Spec != "":
		errs = append(errs, Invalid(p.Child("spec"), "is set with claim", "name the claim or the spec, not both: one known issue each"))
	case k.Claim != "":
	case len(strings.TrimSpace(k.Spec)) < MinSpecPrefix:
		errs = append(errs, Invalid(p.Child("spec"), Quote(k.Spec)+" is too short to name one spec",
			fmt.Sprintf("write the spec's full name, as the report has it (or a prefix of at least %d characters that names one spec), or name its claim: instead", MinSpecPrefix)))
	case strings.TrimSpace(k.Spec) != k.Spec:
		errs = append(errs, Invalid(p.Child("spec"), Quote(k.Spec)+" has leading or trailing spaces", "write the spec's name as the report has it"))
	}
	if strings.TrimSpace(k.Reason) == "" {
		errs = append(errs, Missing(p.Child("reason"), "say why the failure is accepted"))
	}
	if u, err := url.Parse(k.Link); k.Link == "" {
		errs = append(errs, Missing(p.Child("link"), "link the issue that tracks it (https://...)"))
	} else if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, Invalid(p.Child("link"), Quote(k.Link)+" is not an http(s) URL", "link the issue that tracks it (https://...)"))
	}
	if _, err := time.Parse(DateLayout, k.Expires); k.Expires == "" {
		errs = append(errs, Missing(p.Child("expires"), "a known issue must expire: add expires: YYYY-MM-DD, the last day it is accepted (from the day after, it blocks again)"))
	} else if err != nil {
		errs = append(errs, Invalid(p.Child("expires"), Quote(k.Expires)+" is not a date YYYY-MM-DD", "write the last day the issue is accepted, such as 2026-03-31"))
	}
	return errs
}
