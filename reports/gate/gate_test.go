package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// today is the day the synthetic runs started (reporttest.Started).
var today = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func loadPolicy(t *testing.T, body string) *config.GatePolicy {
	t.Helper()
	p, err := policy.Parse("test.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, r *reporttest.Run) *rundir.Run {
	t.Helper()
	run, err := rundir.Load(r.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func decide(t *testing.T, p *config.GatePolicy, run, base *rundir.Run) Result {
	t.Helper()
	res, err := Decide(Input{Policy: p, PolicyFile: "test.yaml", Run: run, Baseline: base, Now: today})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func item(t *testing.T, r Result, kind, subject string) Item {
	t.Helper()
	for _, it := range r.Items {
		if it.Kind == kind && it.Subject() == subject {
			return it
		}
	}
	t.Fatalf("no %s item for %s in %+v", kind, subject, r.Items)
	return Item{}
}

func hasReason(r Result, s string) bool {
	for _, x := range r.Reasons {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func examplePolicy(t *testing.T, name string) *config.GatePolicy {
	t.Helper()
	p, err := policy.Load(filepath.Join("../../policies", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requires is a policy that requires ids, and nothing more.
func requires(ids ...string) string {
	return "name: x\nrequired:\n- claims: [" + strings.Join(ids, ", ") + "]\n"
}

func TestWindowsBuildPolicyBlocksWithoutWindowsNodes(t *testing.T) {
	res := decide(t, examplePolicy(t, "windows-node-build.yaml"), load(t, reporttest.Linux()), nil)
	if !res.Blocked() {
		t.Fatal("a run without Windows nodes ships under the Windows node build policy")
	}
	for _, want := range []string{"no Windows node: WEB-01 only supported (linux twin)", "cluster: no Windows node", "no Windows node: SCH-01 shown only at scheduler"} {
		if !hasReason(res, want) {
			t.Errorf("reasons lack %q:\n%s", want, strings.Join(res.Reasons, "\n"))
		}
	}
	if it := item(t, res, KindRequired, "NET-07"); it.Decision != Pass {
		t.Errorf("NET-07 shown on Linux: %+v", it)
	}
	if it := item(t, res, KindRequired, "NET-01"); it.Decision != Block || !strings.Contains(it.Reason, "skipped") {
		t.Errorf("NET-01 skipped: %+v", it)
	}
}

func TestLinuxOnlyPolicyShipsTheDefaultRun(t *testing.T) {
	res := decide(t, examplePolicy(t, "linux-only.yaml"), load(t, reporttest.Linux()), nil)
	if res.Blocked() {
		t.Fatalf("blocked: %v", res.Reasons)
	}
	if res.Required < 15 || res.Met != res.Required {
		t.Errorf("met %d of %d, want every one of the 15 or more claims it requires", res.Met, res.Required)
	}
	// A required claim that fails blocks it.
	r := reporttest.Linux()
	r.Fail("NET-08", "networking NET-08: linux-a -> svc/service-dns blocked")
	res = decide(t, examplePolicy(t, "linux-only.yaml"), load(t, r), nil)
	if !res.Blocked() || !hasReason(res, "NET-08 failed: networking NET-08") {
		t.Errorf("a failed NET-08: %v", res.Reasons)
	}
}

func TestLevelAboveTheClaims(t *testing.T) {
	p := loadPolicy(t, "name: x\nrequired:\n- claims: [SCH-01]\n  level: windows-node\n")
	r := reporttest.IdealHybrid()
	r.One("SCH-01").Evidence = []reporttest.Ev{reporttest.Simulated()}
	res := decide(t, p, load(t, r), nil)
	if it := item(t, res, KindRequired, "SCH-01"); it.Decision != Block || !strings.Contains(it.Reason, "shown only at scheduler") {
		t.Errorf("SCH-01 shown on simulated nodes, required on Windows: %+v", it)
	}
	r.One("SCH-01").Evidence = []reporttest.Ev{reporttest.Simulated(), reporttest.OnWindows()}
	if res = decide(t, p, load(t, r), nil); res.Blocked() {
		t.Errorf("SCH-01 shown on a Windows node blocks: %v", res.Reasons)
	}
}

// A required claim is met only when shown: every other outcome blocks, and
// no policy can make it report instead (the policy is refused).
func TestOutcomes(t *testing.T) {
	for outcome, make := range map[string]func(r *reporttest.Run){
		"blocked":     func(r *reporttest.Run) { r.Block("NET-07", "BeforeAll failed: no route") },
		"interrupted": func(r *reporttest.Run) { r.One("NET-07").State = types.SpecStateInterrupted },
		"not run":     func(r *reporttest.Run) { r.LabelFilter = "!claim:NET-07" },
		"inconclusive": func(r *reporttest.Run) {
			r.Set("NET-07", reporttest.Spec{State: types.SpecStateSkipped, Message: "saw nothing", SkipReason: skips.Inconclusive.Key})
		},
		"skipped":     func(r *reporttest.Run) { r.Skip("NET-07", "no-windows-node") },
		"not covered": func(r *reporttest.Run) { r.Set("NET-07") },
	} {
		r := reporttest.Linux()
		make(r)
		res := decide(t, loadPolicy(t, requires("NET-07")+"otherFailures: report\noutcomes:\n  skipped: block\n"), load(t, r), nil)
		if it := item(t, res, KindRequired, "NET-07"); !res.Blocked() || it.Decision != Block || !strings.Contains(it.Reason, "NET-07 "+outcome) {
			t.Errorf("a required claim %s: %+v %v", outcome, it, res.Reasons)
		}
		field := map[string]string{"not run": "notRun", "not covered": "notCovered"}[outcome]
		if field == "" {
			field = outcome
		}
		_, err := policy.Parse("p.yaml", []byte(requires("NET-07")+"outcomes:\n  "+field+": report\n"))
		if err == nil || !strings.Contains(err.Error(), "outcomes."+field) || !strings.Contains(err.Error(), "known issue naming its claim") {
			t.Errorf("outcomes.%s: report is not refused: %v", field, err)
		}
	}
}

func TestOtherFailuresAndUncataloguedSpecs(t *testing.T) {
	r := reporttest.Linux()
	r.Set("WEB-02", reporttest.Spec{State: types.SpecStateFailed, Message: "logs empty", Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	r.Specs = append(r.Specs, reporttest.Spec{Name: "networking uncatalogued paths", Labels: []string{"suite:networking", "uncatalogued"}, State: types.SpecStateFailed, Message: "linux-a -> svc/cluster-ip blocked"})
	run := load(t, r)
	res := decide(t, loadPolicy(t, requires("NET-07")), run, nil)
	if !hasReason(res, "WEB-02") || !hasReason(res, "spec [synthetic] networking uncatalogued paths") {
		t.Errorf("failures outside the policy do not block: %v", res.Reasons)
	}
	if res = decide(t, loadPolicy(t, requires("NET-07")+"otherFailures: report\n"), run, nil); res.Blocked() {
		t.Errorf("otherFailures: report blocks: %v", res.Reasons)
	}
}

func TestKnownIssues(t *testing.T) {
	r := reporttest.IdealHybrid()
	r.Set("NET-21", reporttest.Spec{Name: "networking NET-21 a node's host reaches Service IPs", State: types.SpecStateFailed, Message: "NET-21 spec: blocked",
		Evidence: []reporttest.Ev{reporttest.OnWindows()}})
	run := load(t, r)
	issue := func(subject, expires string) string {
		return "knownIssues:\n- " + subject + "\n  reason: flannel on this build\n  link: https://example.com/issues/7\n  expires: " + expires + "\n"
	}
	res := decide(t, loadPolicy(t, requires("NET-21")+issue("claim: NET-21", "2026-03-01")), run, nil)
	it := item(t, res, KindRequired, "NET-21")
	if res.Blocked() || it.Decision != Waived || it.KnownIssue == nil || !strings.Contains(it.Reason, "https://example.com/issues/7") {
		t.Errorf("a known issue on its last day does not waive: %+v %v", it, res.Reasons)
	}
	res = decide(t, loadPolicy(t, requires("NET-21")+issue("claim: NET-21", "2026-02-28")), run, nil)
	if !res.Blocked() || !hasReason(res, "expired on 2026-02-28") {
		t.Errorf("an expired known issue still waives: %v", res.Reasons)
	}
	// A known issue by spec never waives a claim the policy requires (only
	// one naming the claim does); it waives a failure outside the policy.
	byName := `spec: "[synthetic] networking NET-21 a node's host reaches Service IPs"`
	if res = decide(t, loadPolicy(t, requires("NET-21")+issue(byName, "2026-12-31")), run, nil); !res.Blocked() {
		t.Errorf("a known issue by spec waives a required claim: %v", res.Reasons)
	}
	if res = decide(t, loadPolicy(t, requires("NET-07")+issue(byName, "2026-12-31")), run, nil); res.Blocked() {
		t.Errorf("a known issue by the spec's full name does not waive its failure: %v", res.Reasons)
	}
	// A prefix must end where a word does and name one spec.
	for _, prefix := range []string{`"[synthetic] networking NET-21 a node's ho"`, `"[synthetic] networking NET-2"`} {
		if res = decide(t, loadPolicy(t, requires("NET-07")+issue("spec: "+prefix, "2026-12-31")), run, nil); !res.Blocked() {
			t.Errorf("a known issue by spec %s waives: %v", prefix, res.Items)
		}
	}
	if res = decide(t, loadPolicy(t, requires("NET-07")+issue(`spec: "[synthetic] networking NET-21 a node's"`, "2026-12-31")), run, nil); res.Blocked() {
		t.Errorf("a known issue by a prefix that names one spec does not waive: %v", res.Reasons)
	}
	res = decide(t, loadPolicy(t, requires("NET-21")+issue("claim: NET-27", "2026-12-31")), run, nil)
	if !res.Blocked() {
		t.Error("a known issue of another claim waives")
	}
	if it := item(t, res, KindIssue, "NET-27"); it.Decision != Report || !strings.Contains(it.Reason, "waived nothing") {
		t.Errorf("an unused known issue: %+v", it)
	}
	// A blocked claim (a setup failed before its specs ran) is no failure
	// anyone looked at: no known issue waives it.
	r = reporttest.IdealHybrid()
	r.Block("NET-21", "BeforeAll: the Windows nodes were not Ready")
	res = decide(t, loadPolicy(t, requires("NET-21")+issue("claim: NET-21", "2026-12-31")), load(t, r), nil)
	if it := item(t, res, KindRequired, "NET-21"); !res.Blocked() || it.Decision != Block || !strings.Contains(it.Reason, "does not apply: a known issue waives an observed failure, not a claim left blocked") {
		t.Errorf("a known issue waives a blocked claim: %+v", it)
	}
}

func TestFlakes(t *testing.T) {
	r := reporttest.Linux()
	r.Fail("NET-07", "1 of 2 cells of NET-07 failed:\nflaky: linux-a -> linux-b/pod-ip")
	r.Set("NET-08", reporttest.Spec{Name: "networking NET-08 by name", Evidence: []reporttest.Ev{reporttest.OnLinux()}, Attempts: 2})
	r.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{
		reporttest.Cell("linux-a", "linux-b/pod-ip", netmatrix.Flaky, netmatrix.Reachable, "NET-07"),
		reporttest.Cell("linux-a", "linux-c/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-07"),
	}}
	run := load(t, r)
	body := requires("NET-08")
	res := decide(t, loadPolicy(t, body), run, nil)
	if !res.Blocked() || !hasReason(res, "2 flaky") || !hasReason(res, "tolerates 0") {
		t.Errorf("two flakes, none tolerated: %v", res.Reasons)
	}
	if it := item(t, res, KindFlake, "NET-07"); !strings.Contains(it.Reason, "flaky matrix cells only: linux-a -> linux-b/pod-ip") {
		t.Errorf("NET-07 failed on a flaky cell: %+v", it)
	}
	if res = decide(t, loadPolicy(t, body+"flakes:\n  tolerated: 2\n"), run, nil); res.Blocked() {
		t.Errorf("two flakes tolerated still block: %v", res.Reasons)
	}
	// A required claim that failed on a flaky cell is not shown: no
	// tolerance makes it met.
	res = decide(t, loadPolicy(t, requires("NET-07", "NET-08")+"flakes:\n  tolerated: 2\n"), run, nil)
	if it := item(t, res, KindRequired, "NET-07"); it.Decision != Block || !strings.Contains(it.Reason, "NET-07 not shown: failed on flaky matrix cells only") {
		t.Errorf("a required claim failing on a tolerated flaky cell: %+v", it)
	}
	// A claim failing on a cell that is not flaky is a failure, whatever the tolerance.
	r.Matrix.Cells[1].Verdict = netmatrix.Regression
	if res = decide(t, loadPolicy(t, body+"flakes:\n  tolerated: 5\n"), load(t, r), nil); !hasReason(res, "NET-07 failed") {
		t.Errorf("a regression hides behind a flake: %v", res.Reasons)
	}
}

func TestDrift(t *testing.T) {
	r := reporttest.IdealHybrid()
	r.One("LIM-10").Ledger[0].Observed = ledger.Works
	run := load(t, r)
	res := decide(t, loadPolicy(t, requires("NET-07")), run, nil)
	if res.Blocked() {
		t.Errorf("drift: report (the default) blocks: %v", res.Reasons)
	}
	item(t, res, KindDrift, "LIM-10")
	if res = decide(t, loadPolicy(t, requires("NET-07")+"drift: block\n"), run, nil); !hasReason(res, "LIM-10") {
		t.Errorf("drift: block does not block: %v", res.Reasons)
	}
}

func TestClusterRequirements(t *testing.T) {
	p := loadPolicy(t, requires("NET-07")+"cluster:\n  windowsNodes: 1\n  windowsBuilds: [\"10.0.26100\"]\n")
	res := decide(t, p, load(t, reporttest.IdealHybrid()), nil)
	if !hasReason(res, "no real Windows node of build 10.0.26100 ran (builds: 10.0.20348)") {
		t.Errorf("a missing build: %v", res.Reasons)
	}
	res, err := Decide(Input{Policy: loadPolicy(t, requires("NET-07")), Run: load(t, reporttest.IdealHybrid()), Now: today, WindowsBuilds: []string{"10.0.20348"}})
	if err != nil || res.Blocked() {
		t.Errorf("the build ran: %v %v", err, res.Reasons)
	}
	if res = decide(t, p, load(t, reporttest.Linux()), nil); !hasReason(res, "no Windows node: the cluster had no real Windows node") {
		t.Errorf("no Windows node: %v", res.Reasons)
	}
}

// A run on a pre-release of Kubernetes gates no release unless the policy
// allows pre-releases; the report says the cluster ran one either way.
func TestPreReleaseBlocksUnlessAllowed(t *testing.T) {
	pre := func() *rundir.Run {
		r := reporttest.Linux()
		r.Facts.ServerVersion = "v1.38.0-beta.0"
		r.Facts.PreRelease = true
		return load(t, r)
	}
	res := decide(t, examplePolicy(t, "linux-only.yaml"), pre(), nil)
	if !res.Blocked() || !hasReason(res, "the cluster ran Kubernetes v1.38.0-beta.0 (a pre-release)") {
		t.Errorf("a pre-release under a policy that does not allow it: %v", res.Reasons)
	}
	if len(res.Groups) != 1 || res.Groups[0].Cause != CausePreRelease {
		t.Errorf("groups %+v, want the pre-release alone", res.Groups)
	}
	if res.PreRelease != "v1.38.0-beta.0" || !strings.Contains(res.Markdown(), "The cluster ran Kubernetes v1.38.0-beta.0, a pre-release.") {
		t.Errorf("the gate's report does not say the cluster ran a pre-release: %q\n%s", res.PreRelease, res.Markdown())
	}
	p := examplePolicy(t, "linux-only.yaml")
	p.Cluster.AllowPreRelease = true
	res = decide(t, p, pre(), nil)
	if res.Blocked() {
		t.Errorf("a pre-release under a policy that allows it: %v", res.Reasons)
	}
	if it := item(t, res, KindCluster, "cluster"); it.Decision != Pass || !strings.Contains(it.Got, "(a pre-release)") {
		t.Errorf("allowed pre-release: %+v", it)
	}
	if !strings.Contains(res.Markdown(), "a pre-release") {
		t.Error("the gate's report does not say the cluster ran a pre-release when it is allowed")
	}
	// A release is no pre-release.
	if res = decide(t, examplePolicy(t, "linux-only.yaml"), load(t, reporttest.Linux()), nil); res.Blocked() || res.PreRelease != "" {
		t.Errorf("a release: %v %q", res.Reasons, res.PreRelease)
	}
}

func TestBaseline(t *testing.T) {
	b := reporttest.IdealHybrid().AsBaseline()
	b.Fail("NET-07", "it failed")
	r := reporttest.IdealHybrid()
	r.Fail("NET-08", "dns")
	r.Set("WEB-01", reporttest.Spec{Name: reporttest.TwinName("WEB-01"), Labels: []string{"os:linux"}, Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	base, run := load(t, b), load(t, r)
	res := decide(t, loadPolicy(t, requires("NET-16")+"otherFailures: report\n"), run, base)
	if it := item(t, res, KindBaseline, "NET-08"); it.Decision != Block || !strings.Contains(it.Reason, "newly failing") {
		t.Errorf("newly failing NET-08: %+v", it)
	}
	lost := Item{}
	for _, it := range res.Items {
		if it.Kind == KindBaseline && it.Claim == "WEB-01" {
			lost = it
		}
	}
	if lost.Decision != Report || !strings.Contains(lost.Got, "shown (windows-node 1) before, only supported (linux twin) now") {
		t.Errorf("WEB-01 lost its evidence: %+v", lost)
	}
	if it := item(t, res, KindBaseline, "NET-07"); it.Decision != Pass || !strings.Contains(it.Reason, "newly fixed") {
		t.Errorf("newly fixed NET-07: %+v", it)
	}
	res = decide(t, loadPolicy(t, requires("NET-16")+"otherFailures: report\nbaseline:\n  newlyFailing: report\n  lostShown: block\n"), run, base)
	if hasReason(res, "newly failing") || !hasReason(res, "WEB-01") {
		t.Errorf("newlyFailing: report, lostShown: block: %v", res.Reasons)
	}
}

func TestBaselineOfAnotherShape(t *testing.T) {
	base, run := load(t, reporttest.Linux().AsBaseline()), load(t, reporttest.IdealHybrid())
	res := decide(t, loadPolicy(t, requires("NET-07")), run, base)
	if it := item(t, res, KindBaseline, KindBaseline); it.Decision != Report || !strings.Contains(it.Got, "Windows nodes 0 -> 2") {
		t.Errorf("another shape, reported: %+v", it)
	}
	_, err := Decide(Input{Policy: loadPolicy(t, requires("NET-07")+"baseline:\n  otherShape: refuse\n"), PolicyFile: "p.yaml", Run: run, Baseline: base, Now: today})
	if !errors.Is(err, ErrUnusable) {
		t.Fatalf("another shape refused: %v", err)
	}
	for _, w := range []string{base.Dir, "Windows nodes 0 -> 2", "p.yaml", "baseline.otherShape", "a baseline from a cluster of this shape"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

func TestWriteAndRead(t *testing.T) {
	dir := t.TempDir()
	run := load(t, reporttest.Linux())
	res := decide(t, examplePolicy(t, "windows-node-build.yaml"), run, nil)
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, ok, err := Read(dir)
	if err != nil || !ok || back.Decision != Blocked || len(back.Items) != len(res.Items) {
		t.Fatalf("read back: %v %v %+v", ok, err, back.Decision)
	}
	// gate.json names the run it gated, and the harness that gated it.
	if back.RunID == "" || back.RunID != run.Summary.RunID || back.Harness.Version == "" {
		t.Errorf("gate.json carries run %q, harness %+v; want the gated run's ID %q and a version", back.RunID, back.Harness, run.Summary.RunID)
	}
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	for _, w := range []string{"# Release gate: BLOCKED", "## Blocked by", "| WEB-01 | required | shown (at windows-node, its own level) | only supported (linux twin) | **block** |"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("gate.md lacks %q", w)
		}
	}
	os.WriteFile(filepath.Join(dir, JSONFile), []byte(`{"format":"winconform.gate/v1","items":[`), 0o644)
	if _, _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "half written") {
		t.Errorf("a truncated gate.json: %v", err)
	}
}

func TestGist(t *testing.T) {
	msg := "6 of 6 cells of NET-08 failed:\nregression: a -> b/pod-dns: expected reachable, blocked (timeout), also on the second probe; reproduce: kubectl exec a -- /probe connect http://b\nregression: a -> c/pod-dns: ...\nregression: b -> c/pod-dns: ...\n"
	if got := Gist(msg); got != "6 of 6 cells of NET-08 failed: regression: a -> b/pod-dns: expected reachable, blocked (timeout), also on the second probe; and 2 more" {
		t.Errorf("gist %q", got)
	}
	if got := Gist("\n  expected 1, got 2\nat line 3"); got != "expected 1, got 2" {
		t.Errorf("gist %q", got)
	}
}

// A requirement without level: asks for the claim's own level; beside one
// that raises it, both apply; none lowers it.
func TestRequirementLevels(t *testing.T) {
	r := reporttest.IdealHybrid()
	r.One("SCH-01").Evidence = []reporttest.Ev{reporttest.Simulated()}
	r.One("NET-01").Evidence = []reporttest.Ev{reporttest.Simulated()}
	run := load(t, r)
	if res := decide(t, loadPolicy(t, requires("SCH-01")), run, nil); res.Blocked() {
		t.Errorf("SCH-01 shown at its own level, required without a level: %v", res.Reasons)
	}
	res := decide(t, loadPolicy(t, requires("SCH-01")+"- areas: [SCH]\n  level: windows-node\n  except: [SCH-02, SCH-03, SCH-04, SCH-05, SCH-06, SCH-07, SCH-08, SCH-09, SCH-10, SCH-11]\n"), run, nil)
	if it := item(t, res, KindRequired, "SCH-01"); it.Decision != Block || !strings.Contains(it.Required, "windows-node") {
		t.Errorf("SCH-01 required at its own level and at windows-node, shown on simulated nodes: %+v", it)
	}
	res = decide(t, loadPolicy(t, "name: x\nrequired:\n- claims: [NET-01]\n  level: scheduler\n"), run, nil)
	if it := item(t, res, KindRequired, "NET-01"); it.Decision != Block || !strings.Contains(it.Required, "windows-node (its own level)") {
		t.Errorf("NET-01 required at scheduler, seen on simulated nodes: %+v", it)
	}
}

// A run without Windows nodes, gated by the Windows node build policy,
// blocks on dozens of claims for one root cause: the findings come grouped
// by cause, one group per cause with the claims it blocks, so that the
// reader sees "no Windows node" once, not once per claim.
func TestFindingsGroupedByRootCause(t *testing.T) {
	r := reporttest.Linux()
	r.Fail("NET-08", "lookup svc: no such host")
	res := decide(t, examplePolicy(t, "windows-node-build.yaml"), load(t, r), nil)
	if len(res.Reasons) < 40 {
		t.Fatalf("%d blocking findings: the test wants a run blocked on many claims", len(res.Reasons))
	}
	var noWindows *Group
	blocked := 0
	for i, g := range res.Groups {
		blocked += len(g.Subjects)
		if strings.HasPrefix(g.Cause, "no Windows node") {
			if noWindows != nil {
				t.Errorf("two groups for no Windows node: %q and %q", noWindows.Cause, g.Cause)
			}
			noWindows = &res.Groups[i]
		}
	}
	if blocked != len(res.Reasons) {
		t.Errorf("the groups hold %d findings, the gate blocked on %d", blocked, len(res.Reasons))
	}
	if noWindows == nil {
		t.Fatalf("no group for the missing Windows nodes: %+v", res.Groups)
	}
	if len(noWindows.Subjects) < len(res.Reasons)-5 || !slices.Contains(noWindows.Subjects, "WEB-01") || !slices.Contains(noWindows.Subjects, "NET-01") {
		t.Errorf("the no-Windows-node group holds %d of %d findings: %v", len(noWindows.Subjects), len(res.Reasons), noWindows.Subjects)
	}
	if len(res.Groups) > 6 {
		t.Errorf("%d groups for a run with two root causes (no Windows node, NET-08's failure):\n%+v", len(res.Groups), res.Groups)
	}
	// NET-08's own failure is a cause of its own, not hidden in the Windows group.
	if slices.Contains(noWindows.Subjects, "NET-08") {
		t.Error("NET-08's failure is put down to the missing Windows nodes")
	}
	// gate.md's "Blocked by" says each cause once, with what it blocks.
	_, blockedBy, _ := strings.Cut(res.Markdown(), "## Blocked by")
	blockedBy, _, _ = strings.Cut(blockedBy, "## Every decision")
	if n := strings.Count(blockedBy, "no Windows node"); n != 1 {
		t.Errorf("gate.md's blocking section says no Windows node %d times, want once:\n%s", n, blockedBy)
	}
}

var _ = claims.Linux
