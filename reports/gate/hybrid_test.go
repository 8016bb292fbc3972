package gate

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// The synthetic hybrid runs: the ideal run (every claim shown as the
// catalogue asks, on a cluster of two Linux and two Windows nodes of build
// 10.0.20348) ships under the shipped Windows node build policy; each run
// broken in one way blocks, for that reason; no hostile policy makes a run
// ship while a claim it requires is unmet. Every run goes through the
// harness's own reports (reporttest.Run.Write: reports.Summarize,
// reports.Ledger), then rundir and the gate, as `winconform gate` does.

func gateHybrid(t *testing.T, r *reporttest.Run, p *config.GatePolicy, builds ...string) Result {
	t.Helper()
	run, err := rundir.Load(r.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Decide(Input{Policy: p, PolicyFile: "policy.yaml", Run: run, Now: today, WindowsBuilds: builds})
	if err != nil {
		t.Fatal(err)
	}
	assertNoShipUnmet(t, res)
	return res
}

// assertNoShipUnmet is the gate's first rule: it never says ship while a
// claim the policy requires is unmet, unless a known issue naming that
// claim waived its failure.
func assertNoShipUnmet(t *testing.T, res Result) {
	t.Helper()
	if res.Blocked() {
		return
	}
	waived := 0
	for _, it := range res.Items {
		if it.Kind == KindRequired && it.Decision == Waived && it.KnownIssue != nil && it.KnownIssue.Claim == it.Claim &&
			(it.outcome == reports.Failed || it.outcome == reports.Blocked || it.outcome == reports.Drift) {
			waived++
		}
	}
	if res.Met+waived < res.Required {
		t.Errorf("SHIP with required claims met %d of %d (%d waived by a known issue naming the claim):\n%s", res.Met, res.Required, waived, unmet(res))
	}
}

func unmet(res Result) string {
	var out []string
	for _, it := range res.Items {
		if it.Required != "" && it.Decision != Pass {
			out = append(out, it.Subject()+": "+string(it.Decision)+": "+it.Reason)
		}
	}
	return strings.Join(out, "\n")
}

func reasons(res Result) string { return strings.Join(res.Reasons, "\n") }

func TestIdealHybridRunShips(t *testing.T) {
	p := examplePolicy(t, "windows-node-build.yaml")
	res := gateHybrid(t, reporttest.IdealHybrid(), p)
	if res.Blocked() {
		t.Fatalf("the ideal hybrid run is blocked by the shipped windows-node-build policy:\n%s", reasons(res))
	}
	if res.Required != len(claims.All()) || res.Met != res.Required {
		t.Errorf("required claims met %d of %d, want every claim of the catalogue (%d) required and met", res.Met, res.Required, len(claims.All()))
	}
	// The release gate for the build the nodes run.
	if res := gateHybrid(t, reporttest.IdealHybrid(), p, reporttest.Build); res.Blocked() {
		t.Errorf("the ideal run blocks for its own build %s:\n%s", reporttest.Build, reasons(res))
	}
	// API-level claims are met at their own level; NET-15 by its Linux cells.
	for _, id := range []string{"LIM-01", "LIM-02", "SCH-11", "SIG-01", "NET-15", "LIM-08"} {
		if it := item(t, res, KindRequired, id); it.Decision != Pass {
			t.Errorf("%s: %+v", id, it)
		}
	}
	// An expected lift (the server version explains it) is shown, with a note.
	run, err := rundir.Load(reporttest.IdealHybrid().Write(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Summary.Claims {
		if c.ID == "CFG-03" && (c.Outcome != reports.Shown || !strings.Contains(c.Why, "lifted")) {
			t.Errorf("CFG-03, lifted as expected of %s: outcome %s why %q, want shown with a note", reporttest.Server, c.Outcome, c.Why)
		}
	}
}

// flakyMatrix is a matrix in which claim id has a cell as expected and a
// flaky one (blocked on the first probe, reachable on the second).
func flakyMatrix(id string) *netmatrix.Report {
	return &netmatrix.Report{ServerVersion: reporttest.Server, CNI: reporttest.CNI, Cells: []*netmatrix.Cell{
		reporttest.Cell("windows-a", "windows-b/pod-ip", netmatrix.OK, netmatrix.Reachable, id),
		reporttest.Cell("windows-a", "windows-b/pod-dns", netmatrix.Flaky, netmatrix.Reachable, id),
	}}
}

func TestHybridFaultsBlockForTheirReason(t *testing.T) {
	windows := func(id string) reporttest.Ev { return reporttest.OnWindows() }
	cases := []struct {
		name   string
		break_ func(r *reporttest.Run)
		policy string // extra policy lines, appended to windows-node-build.yaml's
		builds []string
		want   []string // each in some blocking reason
		item   string   // a claim whose required item must block
	}{
		{
			name: "shown on another build than the gate's (item 3): a NotReady node of that build ran nothing",
			break_: func(r *reporttest.Run) {
				r.Facts.Nodes[3].WindowsBuild, r.Facts.Nodes[3].Ready = "10.0.26100", false
			},
			builds: []string{"10.0.26100"},
			want:   []string{"WEB-01 not shown on Windows build 10.0.26100 (shown on 10.0.20348)"},
			item:   "WEB-01",
		},
		{
			name: "evidence on a node without a build label (item 3)",
			break_: func(r *reporttest.Run) {
				r.Facts.Nodes[2].WindowsBuild = ""
				for i := range r.Specs {
					for j := range r.Specs[i].Evidence {
						if slices.Contains(r.Specs[i].Evidence[j].Nodes, "win-1") {
							r.Specs[i].Evidence[j].Build = ""
						}
					}
				}
			},
			builds: []string{reporttest.Build},
			want:   []string{"WEB-01 not shown on Windows build 10.0.20348 (shown on a node of unrecorded build)"},
			item:   "WEB-01",
		},
		{
			name: "a claim that failed on a flaky cell, flakes tolerated (item 4)",
			break_: func(r *reporttest.Run) {
				r.Set("NET-02", reporttest.Spec{State: types.SpecStateFailed, Message: "1 of 2 cells of NET-02 failed:\nflaky: windows-a -> windows-b/pod-dns", Evidence: []reporttest.Ev{windows("NET-02")}})
				r.Matrix = flakyMatrix("NET-02")
			},
			policy: "flakes:\n  tolerated: 5\n",
			want:   []string{"NET-02 not shown: failed on flaky matrix cells only: windows-a -> windows-b/pod-dns"},
			item:   "NET-02",
		},
		{
			name: "a flaky cell let pass by --allow-flaky is partial evidence (item 4)",
			break_: func(r *reporttest.Run) {
				r.One("NET-02").Evidence = append(r.One("NET-02").Evidence, reporttest.Ev{Level: claims.WindowsNode, Partial: "no cell probed same node (its only cell was flaky)", Build: reporttest.Build, Nodes: []string{"win-1"}})
				r.Matrix = flakyMatrix("NET-02")
			},
			policy: "flakes:\n  tolerated: 5\n",
			want:   []string{"NET-02 only supported (partial: no cell probed same node (its only cell was flaky)), not shown"},
			item:   "NET-02",
		},
		{
			name: "limitation cells of a Windows host that reached nothing (item 6)",
			break_: func(r *reporttest.Run) {
				r.Set("NET-21", reporttest.Spec{State: types.SpecStateSkipped, Message: "no cell of this claim could be probed", SkipReason: "not-probed"})
				r.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("win-1", "svc-linux/cluster-ip", netmatrix.Unobserved, netmatrix.Blocked, "NET-21")}}
			},
			want: []string{"NET-21 skipped"},
			item: "NET-21",
		},
		{
			name: "a wrong answer, then a right one (item 7)",
			break_: func(r *reporttest.Run) {
				r.Set("NET-08", reporttest.Spec{State: types.SpecStateFailed, Message: "1 of 3 cells of NET-08 failed:\nwrong: linux-a -> svc-linux/service-dns: wrong-answer on the first probe (http-status: 404 Not Found), reachable on the second",
					Evidence: []reporttest.Ev{reporttest.OnLinux()}})
				r.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("linux-a", "svc-linux/service-dns", netmatrix.Wrong, netmatrix.WrongAnswer, "NET-08")}}
			},
			want: []string{"NET-08 failed: 1 of 3 cells of NET-08 failed: wrong: linux-a -> svc-linux/service-dns"},
			item: "NET-08",
		},
		{
			name: "a partial Windows record beside a showing scheduler spec (item 8)",
			break_: func(r *reporttest.Run) {
				r.Set("SCH-01",
					reporttest.Spec{Name: "SCH-01 on simulated nodes", Evidence: []reporttest.Ev{reporttest.Simulated()}},
					reporttest.Spec{Name: "SCH-01 on a Windows node", Evidence: []reporttest.Ev{{Level: claims.WindowsNode, Partial: "no pod started", Build: reporttest.Build, Nodes: []string{"win-1"}}}})
			},
			want: []string{"SCH-01 shown only at scheduler"},
			item: "SCH-01",
		},
		{
			name: "an unexpected lift on a Windows node (item 10)",
			break_: func(r *reporttest.Run) {
				r.One("LIM-10").Ledger[0].Observed = ledger.Works
			},
			want: []string{"LIM-10", "no longer holds"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := reporttest.IdealHybrid()
			c.break_(r)
			p := examplePolicy(t, "windows-node-build.yaml")
			if c.policy != "" {
				extra := loadPolicy(t, requires("NET-07")+c.policy)
				p.Flakes = extra.Flakes
			}
			res := gateHybrid(t, r, p, c.builds...)
			if !res.Blocked() {
				t.Fatalf("ships: %s", res.Decision)
			}
			for _, w := range c.want {
				if !hasReason(res, w) {
					t.Errorf("no blocking reason says %q:\n%s", w, reasons(res))
				}
			}
			if c.item != "" {
				if it := item(t, res, KindRequired, c.item); it.Decision != Block {
					t.Errorf("%s: %+v, want its required item blocking", c.item, it)
				}
			}
		})
	}
}

// Drift is decided from evidence at the claim's level: a Linux twin that
// sees a Windows limitation lifted says nothing of Windows.
func TestHybridDriftOnlyFromTheClaimsLevel(t *testing.T) {
	r := reporttest.IdealHybrid()
	e := ledger.New("LIM-10", ledger.Cluster{Server: reporttest.Server, CNI: reporttest.CNI})
	e.Observed = ledger.Works
	r.Specs = append(r.Specs, reporttest.Spec{Name: "LIM-10 Linux twin", Labels: []string{"claim:LIM-10", "twin"},
		Evidence: []reporttest.Ev{reporttest.OnLinux()}, Ledger: []ledger.Entry{e}})
	res := gateHybrid(t, r, examplePolicy(t, "windows-node-build.yaml"))
	if res.Blocked() {
		t.Errorf("a Linux twin's lift of a Windows limitation blocks:\n%s", reasons(res))
	}
}

func TestHostilePoliciesNeverShipUnmetClaims(t *testing.T) {
	broken := func() *reporttest.Run {
		r := reporttest.IdealHybrid()
		r.Set("WEB-01", reporttest.Spec{Name: "WEB-01 Linux twin", Labels: []string{"twin"}, Evidence: []reporttest.Ev{reporttest.OnLinux()}})
		r.Set("NET-03", reporttest.Spec{State: types.SpecStateSkipped, Message: "no Windows node", SkipReason: "no-inventory"})
		return r
	}
	issue := func(subject string) string {
		return "knownIssues:\n- " + subject + "\n  reason: accepted\n  link: https://example.com/issues/1\n  expires: 2026-12-31\n"
	}
	cases := []struct {
		name, policy string
		run          func() *reporttest.Run
		want         string // a blocking reason; "" when the policy must be refused
		refused      string // the field the refusal names
	}{
		{name: "a requirement that lowers the level below the claim's",
			policy: "name: x\nrequired:\n- claims: [WEB-01, NET-03]\n  level: api\n", run: broken, want: "WEB-01 only supported (linux twin), not shown"},
		{name: "a requirement that lowers the level to the scheduler's",
			policy: "name: x\nrequired:\n- labels: [\"os:windows\"]\n  level: scheduler\n", run: broken, want: "WEB-01 only supported (linux twin), not shown"},
		{name: "a known issue with a blank spec",
			policy: "name: x\nrequired:\n- claims: [NET-07]\n" + issue(`spec: " "`), run: broken, refused: "knownIssues[0].spec"},
		{name: "a known issue with a one-letter spec",
			policy: "name: x\nrequired:\n- claims: [NET-07]\n" + issue(`spec: "W"`), run: broken, refused: "knownIssues[0].spec"},
		{name: "a known issue that tries to waive a skip",
			policy: "name: x\nrequired:\n- claims: [NET-03]\n" + issue("claim: NET-03"), run: broken, want: "NET-03 skipped"},
		{name: "a known issue that tries to waive a twin-only support",
			policy: "name: x\nrequired:\n- claims: [WEB-01]\n" + issue("claim: WEB-01"), run: broken, want: "WEB-01 only supported (linux twin)"},
		{name: "a known issue by spec on a required claim",
			policy: "name: x\nrequired:\n- claims: [NET-03]\n" + issue(`spec: "[synthetic] NET-03 on the cluster"`), run: broken, want: "NET-03 skipped"},
		{name: "an unknown cluster",
			policy: "name: x\nrequired:\n- claims: [NET-07]\n",
			run: func() *reporttest.Run {
				r := reporttest.Linux()
				r.Facts = nil
				for i := range r.Specs {
					r.Specs[i] = reporttest.Spec{Name: r.Specs[i].Name, Labels: r.Specs[i].Labels, State: types.SpecStateSkipped, Message: "Spec skipped because a BeforeAll node failed"}
				}
				return r
			}, want: "the cluster is unknown"},
		{name: "outcomes that report a required claim's skip",
			policy: "name: x\nrequired:\n- claims: [NET-03]\noutcomes:\n  skipped: report\n", run: broken, refused: "outcomes.skipped"},
		{name: "a flake tolerance over a required claim that failed on flaky cells",
			policy: "name: x\nrequired:\n- claims: [NET-02]\nflakes:\n  tolerated: 99\n",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Set("NET-02", reporttest.Spec{State: types.SpecStateFailed, Message: "1 of 2 cells of NET-02 failed"})
				r.Matrix = flakyMatrix("NET-02")
				return r
			}, want: "NET-02 not shown"},
		{name: "drift reported on a required claim that drifted",
			policy: "name: x\nrequired:\n- claims: [LIM-10]\ndrift: report\n",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("LIM-10").Ledger[0].Observed = ledger.Works
				return r
			}, want: "LIM-10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := policy.Parse("hostile.yaml", []byte(c.policy))
			if c.refused != "" {
				if err == nil || !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("the policy is not refused naming %s: %v", c.refused, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := gateHybrid(t, c.run(), p)
			if !res.Blocked() || !hasReason(res, c.want) {
				t.Errorf("decision %s, want blocked with %q:\n%s", res.Decision, c.want, reasons(res))
			}
		})
	}
}

// A policy that slipped past validation (built in Go, or by an older
// winconform) is validated again by the gate: it cannot waive with a blank
// or one-letter spec, it is refused; a spec known issue names one spec, by
// its full name or a clear prefix.
func TestKnownIssueBySpecNamesOneSpec(t *testing.T) {
	r := reporttest.IdealHybrid()
	r.Specs = append(r.Specs, reporttest.Spec{Name: "uncatalogued paths", Labels: []string{"uncatalogued"}, State: types.SpecStateFailed, Message: "blocked"})
	run, err := rundir.Load(r.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"", " ", "W", "u", "[synthetic] unc"} {
		p := loadPolicy(t, "name: x\nrequired:\n- claims: [NET-07]\n")
		p.KnownIssues = []config.KnownIssue{{Spec: spec, Reason: "r", Link: "https://example.com/1", Expires: "2026-12-31"}}
		res, err := Decide(Input{Policy: p, PolicyFile: "policy.yaml", Run: run, Now: today})
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "knownIssues[0]") {
			t.Errorf("spec %q: %v (decision %s), want the policy refused naming knownIssues[0]", spec, err, res.Decision)
		}
	}
	p := loadPolicy(t, "name: x\nrequired:\n- claims: [NET-07]\nknownIssues:\n- spec: \"[synthetic] uncatalogued paths\"\n  reason: r\n  link: https://example.com/1\n  expires: 2026-12-31\n")
	if res := gateHybrid(t, r, p); res.Blocked() {
		t.Errorf("a known issue naming the spec does not waive it:\n%s", reasons(res))
	}
}
