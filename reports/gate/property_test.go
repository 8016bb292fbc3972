package gate

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// The gate's first rule as a property: for random policies drawn from the
// policy grammar and random runs made from the ideal hybrid run by taking
// evidence away (records dropped, lowered to a Linux twin, simulated nodes
// or the API, made partial, builds lost, specs failed, skipped, blocked,
// retried), the gate never ships while some claim the policy selects lacks
// a whole, passing record at its level and the requirement's, on every
// build asked for, unless a known issue naming the claim, not expired,
// waives a failure of it seen at that level. The checker below is written
// from the policy's documented grammar, independently of the gate: its
// own selection of claims, its own table of which level shows which.
func TestGateNeverShipsAnUnshownClaim(t *testing.T) {
	rnd := rand.New(rand.NewSource(2811))
	cat := claims.All()
	ships, refused, cases := 0, 0, 200
	for i := 0; i < cases; i++ {
		pol := randomPolicy(rnd, cat)
		run := randomRun(rnd)
		dir := run.Write(t)
		path := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(path, []byte(pol.text()), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Evaluate(Options{Report: dir, Policy: path, WindowsBuilds: pol.gateBuilds, Clock: func() time.Time { return today }})
		if err != nil {
			refused++
			if testing.Verbose() && refused < 8 {
				t.Logf("refused: %.300s", err)
			}
			continue
		}
		if res.Blocked() {
			continue
		}
		ships++
		if unmet := pol.unmet(run, cat); len(unmet) > 0 {
			t.Fatalf("case %d: SHIP while %s lack a showing record.\npolicy:\n%s\n--windows-build %v", i, strings.Join(unmet, ", "), pol.text(), pol.gateBuilds)
		}
	}
	t.Logf("%d ship, %d refused, %d blocked", ships, refused, cases-ships-refused)
	if ships == 0 {
		t.Error("no case shipped: the generator makes nothing the gate can pass, so the property was never tried")
	}
}

// accepts is which recorded levels show a claim or requirement of each
// level (claims.md: a stronger result on Windows shows what the scheduler
// decides; the API's decision is seen by every level; a machine and a
// domain show only themselves).
var accepts = map[claims.Level][]claims.Level{
	claims.Linux:          {claims.Linux},
	claims.API:            {claims.Linux, claims.API, claims.Scheduler, claims.WindowsNode, claims.WindowsMachine, claims.Domain},
	claims.Scheduler:      {claims.Scheduler, claims.WindowsNode, claims.WindowsMachine, claims.Domain},
	claims.WindowsNode:    {claims.WindowsNode, claims.WindowsMachine, claims.Domain},
	claims.WindowsMachine: {claims.WindowsMachine},
	claims.Domain:         {claims.Domain},
}

type genReq struct {
	ids, areas, labels, except []string
	level                      claims.Level
}

type genPolicy struct {
	reqs        []genReq
	nodes       int
	builds      []string // cluster.windowsBuilds
	gateBuilds  []string // --windows-build
	issues      []string // claims with a known issue
	expired     bool
	tolerated   int
	otherReport bool
}

func pick[T any](rnd *rand.Rand, from []T, most int) []T {
	var out []T
	for range 1 + rnd.Intn(most) {
		out = append(out, from[rnd.Intn(len(from))])
	}
	return out
}

func randomPolicy(rnd *rand.Rand, cat []claims.Claim) genPolicy {
	var ids, areas []string
	for _, c := range cat {
		ids = append(ids, c.ID)
		if a := strings.SplitN(c.ID, "-", 2)[0]; !slices.Contains(areas, a) {
			areas = append(areas, a)
		}
	}
	labels := []string{"os:linux", "os:windows", "kind:path", "kind:feature", "kind:limit"}
	for _, l := range claims.Levels {
		labels = append(labels, "level:"+string(l))
	}
	var p genPolicy
	for range 1 + rnd.Intn(3) {
		var r genReq
		switch k := rnd.Intn(10); {
		case k < 5:
			r.ids = pick(rnd, ids, 3)
		case k < 7:
			r.areas = pick(rnd, areas, 1)
		case k < 9:
			r.labels = pick(rnd, labels, 1)
		default:
			r.areas, r.labels = pick(rnd, areas, 2), pick(rnd, labels, 2)
		}
		for i := range r.labels {
			if rnd.Intn(4) == 0 {
				r.labels[i] = "!" + r.labels[i]
			}
		}
		if rnd.Intn(5) == 0 {
			r.except = pick(rnd, ids, 1)
		}
		if rnd.Intn(3) == 0 {
			r.level = claims.Levels[rnd.Intn(len(claims.Levels))]
		}
		p.reqs = append(p.reqs, r)
	}
	if rnd.Intn(3) == 0 {
		p.nodes = rnd.Intn(3)
	}
	builds := []string{reporttest.Build, reporttest.Build, "10.0.26100"}
	if rnd.Intn(5) == 0 {
		p.builds = pick(rnd, builds, 1)
	}
	if rnd.Intn(4) == 0 {
		p.gateBuilds = pick(rnd, builds, 1)
	}
	if rnd.Intn(2) == 0 {
		p.issues, p.expired = pick(rnd, ids, 3), rnd.Intn(3) == 0
	}
	p.tolerated, p.otherReport = rnd.Intn(3), rnd.Intn(2) == 0
	return p
}

func list(s []string) string { return "[" + strings.Join(s, ", ") + "]" }

func quoted(s []string) string {
	var q []string
	for _, x := range s {
		q = append(q, fmt.Sprintf("%q", x))
	}
	return list(q)
}

func (p genPolicy) text() string {
	var b strings.Builder
	b.WriteString("name: random\nrequired:\n")
	for _, r := range p.reqs {
		b.WriteString("- why: random\n")
		if len(r.ids) > 0 {
			fmt.Fprintf(&b, "  claims: %s\n", list(r.ids))
		}
		if len(r.areas) > 0 {
			fmt.Fprintf(&b, "  areas: %s\n", list(r.areas))
		}
		if len(r.labels) > 0 {
			fmt.Fprintf(&b, "  labels: %s\n", quoted(r.labels))
		}
		if len(r.except) > 0 {
			fmt.Fprintf(&b, "  except: %s\n", list(r.except))
		}
		if r.level != "" {
			fmt.Fprintf(&b, "  level: %s\n", r.level)
		}
	}
	fmt.Fprintf(&b, "cluster:\n  windowsNodes: %d\n", p.nodes)
	if len(p.builds) > 0 {
		fmt.Fprintf(&b, "  windowsBuilds: %s\n", quoted(p.builds))
	}
	fmt.Fprintf(&b, "flakes:\n  tolerated: %d\n", p.tolerated)
	if p.otherReport {
		b.WriteString("otherFailures: report\n")
	}
	if len(p.issues) > 0 {
		b.WriteString("knownIssues:\n")
		for _, id := range p.issues {
			expires := "2026-12-31"
			if p.expired {
				expires = "2026-02-01"
			}
			fmt.Fprintf(&b, "- claim: %s\n  reason: accepted\n  link: https://example.com/1\n  expires: %s\n", id, expires)
		}
	}
	return b.String()
}

// selects is the requirement's selection, from the grammar's words: every
// selector that is set must match, except: drops.
func (r genReq) selects(c claims.Claim) bool {
	if slices.Contains(r.except, c.ID) || len(r.ids) > 0 && !slices.Contains(r.ids, c.ID) {
		return false
	}
	if len(r.areas) > 0 && !slices.Contains(r.areas, strings.SplitN(c.ID, "-", 2)[0]) {
		return false
	}
	have := []string{"level:" + string(c.Level), "kind:" + string(c.Kind)}
	for _, os := range c.OSes {
		have = append(have, "os:"+string(os))
	}
	for _, l := range r.labels {
		if neg, ok := strings.CutPrefix(l, "!"); ok == slices.Contains(have, neg) {
			return false
		}
	}
	return true
}

// unmet lists the claims p selects that run did not show as p asks.
func (p genPolicy) unmet(run *reporttest.Run, cat []claims.Claim) []string {
	var out []string
	for _, c := range cat {
		var levels []claims.Level
		selected := false
		for _, r := range p.reqs {
			if r.selects(c) {
				selected = true
				if r.level != "" {
					levels = append(levels, r.level)
				}
			}
		}
		if !selected {
			continue
		}
		onWindows := c.Level.OnWindows() || slices.ContainsFunc(levels, claims.Level.OnWindows)
		builds := append(append([]string{}, p.builds...), p.gateBuilds...)
		ok := func(l claims.Level, build string) bool {
			if !slices.Contains(accepts[c.Level], l) {
				return false
			}
			for _, r := range levels {
				if !slices.Contains(accepts[r], l) {
					return false
				}
			}
			if onWindows {
				for _, b := range builds {
					if strings.Join(strings.Split(build, ".")[:min(3, len(strings.Split(build, ".")))], ".") != b {
						return false
					}
				}
			}
			return true
		}
		shown, waived := false, false
		for _, sp := range run.Of(c.ID) {
			whole, seen := len(sp.Evidence) > 0, false
			for _, e := range sp.Evidence {
				whole = whole && e.Partial == ""
				seen = seen || ok(e.Level, e.Build)
			}
			switch {
			case !whole || !seen:
			case sp.State == 0 || sp.State == types.SpecStatePassed:
				shown = true
			case sp.State == types.SpecStateFailed && sp.FailedIn == 0 && slices.Contains(p.issues, c.ID) && !p.expired:
				waived = true
			}
		}
		if !shown && !waived {
			out = append(out, c.ID)
		}
	}
	return out
}

// randomRun is the ideal hybrid run with evidence taken away at random.
func randomRun(rnd *rand.Rand) *reporttest.Run {
	r := reporttest.IdealHybrid()
	for i := range r.Specs {
		sp := &r.Specs[i]
		switch rnd.Intn(90) {
		case 0:
			sp.Evidence = nil // recorded nothing
		case 1:
			sp.Evidence = []reporttest.Ev{reporttest.OnLinux()}
		case 2:
			sp.Evidence = []reporttest.Ev{reporttest.Simulated()}
		case 3:
			sp.Evidence = []reporttest.Ev{reporttest.API()}
		case 4:
			for j := range sp.Evidence {
				sp.Evidence[j].Partial = "a part unseen"
			}
		case 5:
			sp.State, sp.Message = types.SpecStateFailed, "failed"
		case 6:
			sp.State, sp.Message, sp.SkipReason = types.SpecStateSkipped, "skipped", "no-inventory"
		case 7:
			sp.State, sp.Message, sp.FailedIn = types.SpecStateFailed, "setup failed", types.NodeTypeBeforeAll
		case 8:
			sp.Attempts = 2
		}
	}
	return r
}

// The record's contract as a property: random runs that keep it (made
// from the ideal hybrid run as above, with a network matrix or without,
// and a readiness at the end), each broken in one invariant at random (a
// way reporttest.Breaks knows that applies to the run), are never shipped:
// the gate refuses them naming the invariant broken.
func TestEveryBrokenInvariantIsRefusedByName(t *testing.T) {
	rnd := rand.New(rand.NewSource(3737))
	policies, _ := filepath.Glob("../../policies/*.yaml")
	tried, byInvariant := 0, map[string]int{}
	for i := 0; tried < 120 && i < 1000; i++ {
		run := randomRun(rnd)
		if rnd.Intn(2) == 0 {
			run.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("linux-a", "win-b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-01")}}
		}
		dir := run.Write(t)
		if before, err := rundir.Load(dir); err != nil || len(before.Summary.Violations) > 0 {
			continue // the generator's run breaks the contract already (a build dropped from a record): not a base
		}
		var applicable []reporttest.Break
		for _, b := range reporttest.Breaks {
			if b.Applies == nil || b.Applies(run) {
				applicable = append(applicable, b)
			}
		}
		b := applicable[rnd.Intn(len(applicable))]
		b.Apply(t, dir)
		tried++
		byInvariant[b.Invariant]++
		path := policies[rnd.Intn(len(policies))]
		res, err := Evaluate(Options{Report: dir, Policy: path, Clock: func() time.Time { return today }})
		switch {
		case err == nil:
			t.Fatalf("case %d (%s: %s): decided %s under %s, want it refused naming the invariant", i, b.Invariant, b.Name, res.Decision, path)
		case !strings.Contains(err.Error(), "invariant "+b.Invariant+":"):
			t.Fatalf("case %d (%s: %s): refused without naming it: %v", i, b.Invariant, b.Name, err)
		}
	}
	if tried < 100 {
		t.Fatalf("only %d consistent runs to break: the generator makes too few", tried)
	}
	for _, inv := range rundir.Invariants {
		if byInvariant[inv.Name] == 0 {
			t.Errorf("invariant %s was never broken in %d cases", inv.Name, tried)
		}
	}
	t.Logf("broken: %v", byInvariant)
}
