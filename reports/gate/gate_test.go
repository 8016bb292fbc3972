package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/reporttest"
	"github.com/winconform/winconform/reports/rundir"
)

var today = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func loadPolicy(t *testing.T, body string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse("test.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, d reporttest.Dir) *rundir.Run {
	t.Helper()
	r, err := rundir.Load(reporttest.Write(t, d))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func decide(t *testing.T, p *policy.Policy, run, base *rundir.Run) Result {
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

// linuxShown is what the default kind cluster shows.
func linuxShown() map[string]reporttest.Claim {
	m := map[string]reporttest.Claim{"WEB-01": reporttest.Twin(), "NET-22": reporttest.Twin()}
	for _, id := range []string{"INF-01", "LIM-07", "NET-07", "NET-08", "NET-15", "NET-16"} {
		m[id] = reporttest.Shown(claims.Linux)
	}
	for _, id := range []string{"LIM-01", "LIM-02", "SCH-11"} {
		m[id] = reporttest.Shown(claims.API)
	}
	for _, id := range []string{"LIM-08", "SCH-01", "SCH-03", "SCH-04", "SCH-06", "SCH-07", "SCH-08"} {
		m[id] = reporttest.Shown(claims.Scheduler)
	}
	m["SIG-01"] = reporttest.Claim{Outcome: reports.Skipped, Why: "feature-gate-off"}
	return m
}

func examplePolicy(t *testing.T, name string) *policy.Policy {
	t.Helper()
	p, err := policy.Load(filepath.Join("../../policies", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWindowsBuildPolicyBlocksWithoutWindowsNodes(t *testing.T) {
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, linuxShown())})
	res := decide(t, examplePolicy(t, "windows-node-build.yaml"), run, nil)
	if !res.Blocked() {
		t.Fatal("a run without Windows nodes ships under the Windows node build policy")
	}
	for _, want := range []string{"no Windows node: WEB-01 only supported (linux twin)", "cluster: no Windows node", "no Windows node: LIM-08 shown only at scheduler"} {
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
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, linuxShown())})
	res := decide(t, examplePolicy(t, "linux-only.yaml"), run, nil)
	if res.Blocked() {
		t.Fatalf("blocked: %v", res.Reasons)
	}
	if res.Required != 16 || res.Met != 16 {
		t.Errorf("met %d of %d, want 16 of 16", res.Met, res.Required)
	}
	// A required claim that fails blocks it.
	m := linuxShown()
	m["NET-08"] = reporttest.Claim{Outcome: reports.Failed, Why: "networking NET-08: linux-a -> svc/service-dns blocked"}
	res = decide(t, examplePolicy(t, "linux-only.yaml"), load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m)}), nil)
	if !res.Blocked() || !hasReason(res, "NET-08 failed: networking NET-08") {
		t.Errorf("a failed NET-08: %v", res.Reasons)
	}
}

func TestLevelAboveTheClaims(t *testing.T) {
	p := loadPolicy(t, "name: x\nrequired:\n- claims: [SCH-01]\n  level: windows-node\n")
	m := map[string]reporttest.Claim{"SCH-01": reporttest.Shown(claims.Scheduler)}
	res := decide(t, p, load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, m)}), nil)
	if it := item(t, res, KindRequired, "SCH-01"); it.Decision != Block || !strings.Contains(it.Reason, "shown only at scheduler") {
		t.Errorf("SCH-01 shown on simulated nodes, required on Windows: %+v", it)
	}
	m["SCH-01"] = reporttest.Claim{Outcome: reports.Shown, Evidence: map[claims.Level]int{claims.Scheduler: 1, claims.WindowsNode: 1}}
	res = decide(t, p, load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, m)}), nil)
	if res.Blocked() {
		t.Errorf("SCH-01 shown on a Windows node blocks: %v", res.Reasons)
	}
}

// A required claim is met only when shown: every other outcome blocks, and
// no policy can make it report instead (the policy is refused).
func TestOutcomes(t *testing.T) {
	for _, outcome := range []string{reports.Blocked, reports.Interrupted, reports.NotRun, reports.Inconclusive, reports.Skipped, reports.NotCovered} {
		m := map[string]reporttest.Claim{"NET-07": {Outcome: outcome, Why: "because"}}
		run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m)})
		res := decide(t, loadPolicy(t, "name: x\nrequired:\n- claims: [NET-07]\notherFailures: report\noutcomes:\n  skipped: block\n"), run, nil)
		if it := item(t, res, KindRequired, "NET-07"); !res.Blocked() || it.Decision != Block || !strings.Contains(it.Reason, "NET-07 "+outcome+" (because"+"") {
			t.Errorf("a required claim %s: %+v %v", outcome, it, res.Reasons)
		}
		field := map[string]string{reports.NotRun: "notRun", reports.NotCovered: "notCovered"}[outcome]
		if field == "" {
			field = outcome
		}
		_, err := policy.Parse("p.yaml", []byte("name: x\nrequired:\n- claims: [NET-07]\noutcomes:\n  "+field+": report\n"))
		if err == nil || !strings.Contains(err.Error(), "outcomes."+field) || !strings.Contains(err.Error(), "known issue naming its claim") {
			t.Errorf("outcomes.%s: report is not refused: %v", field, err)
		}
	}
}

func TestOtherFailuresAndUncataloguedSpecs(t *testing.T) {
	spec := reports.Spec{Name: "networking uncatalogued paths", Labels: []string{"suite:networking", "uncatalogued"}, Result: reports.SpecFailed, Message: "linux-a -> svc/cluster-ip blocked"}
	m := map[string]reporttest.Claim{"WEB-02": {Outcome: reports.Failed, Why: "logs empty"}}
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m, spec)})
	res := decide(t, loadPolicy(t, "name: x\n"), run, nil)
	if !hasReason(res, "WEB-02") || !hasReason(res, "spec networking uncatalogued paths") {
		t.Errorf("failures outside the policy do not block: %v", res.Reasons)
	}
	res = decide(t, loadPolicy(t, "name: x\notherFailures: report\n"), run, nil)
	if res.Blocked() {
		t.Errorf("otherFailures: report blocks: %v", res.Reasons)
	}
}

func TestKnownIssues(t *testing.T) {
	m := map[string]reporttest.Claim{"NET-21": {Outcome: reports.Failed, Why: "NET-21 spec: blocked"}}
	spec := reports.Spec{Name: "networking NET-21 a node's host reaches Service IPs", Labels: []string{"claim:NET-21"}, Result: reports.SpecFailed}
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, m, spec)})
	issue := func(subject, expires string) *policy.Policy {
		return loadPolicy(t, "name: x\nrequired:\n- claims: [NET-21]\nknownIssues:\n- "+subject+"\n  reason: flannel on this build\n  link: https://example.com/issues/7\n  expires: "+expires+"\n")
	}
	res := decide(t, issue("claim: NET-21", "2026-03-01"), run, nil)
	it := item(t, res, KindRequired, "NET-21")
	if res.Blocked() || it.Decision != Waived || it.KnownIssue == nil || !strings.Contains(it.Reason, "https://example.com/issues/7") {
		t.Errorf("a known issue on its last day does not waive: %+v %v", it, res.Reasons)
	}
	res = decide(t, issue("claim: NET-21", "2026-02-28"), run, nil)
	if !res.Blocked() || !hasReason(res, "expired on 2026-02-28") {
		t.Errorf("an expired known issue still waives: %v", res.Reasons)
	}
	// A known issue by spec never waives a claim the policy requires (only
	// one naming the claim does); it waives a failure outside the policy.
	byName := `spec: "networking NET-21 a node's host reaches Service IPs"`
	res = decide(t, issue(byName, "2026-12-31"), run, nil)
	if !res.Blocked() {
		t.Errorf("a known issue by spec waives a required claim: %v", res.Reasons)
	}
	notRequired := loadPolicy(t, "name: x\nknownIssues:\n- "+byName+"\n  reason: flannel on this build\n  link: https://example.com/issues/7\n  expires: 2026-12-31\n")
	if res = decide(t, notRequired, run, nil); res.Blocked() {
		t.Errorf("a known issue by the spec's full name does not waive its failure: %v", res.Reasons)
	}
	// A prefix must end where a word does and name one spec.
	for _, prefix := range []string{`"networking NET-21 a node's ho"`, `"networking NET-2"`} {
		p := loadPolicy(t, "name: x\nknownIssues:\n- spec: "+prefix+"\n  reason: r\n  link: https://example.com/issues/7\n  expires: 2026-12-31\n")
		if res = decide(t, p, run, nil); !res.Blocked() {
			t.Errorf("a known issue by spec %s waives: %v", prefix, res.Items)
		}
	}
	p := loadPolicy(t, "name: x\nknownIssues:\n- spec: \"networking NET-21 a node's\"\n  reason: r\n  link: https://example.com/issues/7\n  expires: 2026-12-31\n")
	if res = decide(t, p, run, nil); res.Blocked() {
		t.Errorf("a known issue by a prefix that names one spec does not waive: %v", res.Reasons)
	}
	res = decide(t, issue("claim: NET-27", "2026-12-31"), run, nil)
	if !res.Blocked() {
		t.Error("a known issue of another claim waives")
	}
	if it := item(t, res, KindIssue, "NET-27"); it.Decision != Report || !strings.Contains(it.Reason, "waived nothing") {
		t.Errorf("an unused known issue: %+v", it)
	}
}

func TestFlakes(t *testing.T) {
	m := map[string]reporttest.Claim{"NET-07": {Outcome: reports.Failed, Why: "flaky cell"}, "NET-08": reporttest.Shown(claims.Linux)}
	matrix := &netmatrix.Report{Cells: []*netmatrix.Cell{
		reporttest.Cell("linux-a", "linux-b/pod-ip", netmatrix.Flaky, netmatrix.Reachable, "NET-07"),
		reporttest.Cell("linux-a", "linux-c/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-07"),
	}}
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m), Matrix: matrix, Retried: []string{"networking NET-08 by name"}})
	body := "name: x\nrequired:\n- claims: [NET-08]\n"
	res := decide(t, loadPolicy(t, body), run, nil)
	if !res.Blocked() || !hasReason(res, "2 flaky") || !hasReason(res, "tolerates 0") {
		t.Errorf("two flakes, none tolerated: %v", res.Reasons)
	}
	if it := item(t, res, KindFlake, "NET-07"); !strings.Contains(it.Reason, "flaky matrix cells only: linux-a -> linux-b/pod-ip") {
		t.Errorf("NET-07 failed on a flaky cell: %+v", it)
	}
	res = decide(t, loadPolicy(t, body+"flakes:\n  tolerated: 2\n"), run, nil)
	if res.Blocked() {
		t.Errorf("two flakes tolerated still block: %v", res.Reasons)
	}
	// A required claim that failed on a flaky cell is not shown: no
	// tolerance makes it met.
	res = decide(t, loadPolicy(t, "name: x\nrequired:\n- claims: [NET-07, NET-08]\nflakes:\n  tolerated: 2\n"), run, nil)
	if it := item(t, res, KindRequired, "NET-07"); it.Decision != Block || !strings.Contains(it.Reason, "NET-07 not shown: failed on flaky matrix cells only") {
		t.Errorf("a required claim failing on a tolerated flaky cell: %+v", it)
	}
	// A claim failing on a cell that is not flaky is a failure, whatever the tolerance.
	matrix.Cells[1].Verdict = netmatrix.Regression
	run = load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m), Matrix: matrix})
	res = decide(t, loadPolicy(t, body+"flakes:\n  tolerated: 5\n"), run, nil)
	if !hasReason(res, "NET-07 failed") {
		t.Errorf("a regression hides behind a flake: %v", res.Reasons)
	}
}

func TestDrift(t *testing.T) {
	m := map[string]reporttest.Claim{"SCH-02": {Outcome: reports.Drift, Evidence: map[claims.Level]int{claims.Linux: 1}, Why: "the limitation no longer holds"}}
	ledger := []reports.LedgerEntry{{Spec: "net", Entry: ledgerEntry("NET-27", "lifted")}}
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m), Ledger: ledger})
	res := decide(t, loadPolicy(t, "name: x\n"), run, nil)
	if res.Blocked() {
		t.Errorf("drift: report (the default) blocks: %v", res.Reasons)
	}
	item(t, res, KindDrift, "SCH-02")
	item(t, res, KindDrift, "NET-27")
	res = decide(t, loadPolicy(t, "name: x\ndrift: block\n"), run, nil)
	if !hasReason(res, "SCH-02") || !hasReason(res, "NET-27") {
		t.Errorf("drift: block does not block: %v", res.Reasons)
	}
}

func TestClusterRequirements(t *testing.T) {
	p := loadPolicy(t, "name: x\ncluster:\n  windowsNodes: 1\n  windowsBuilds: [\"10.0.26100\"]\n")
	res := decide(t, p, load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, nil)}), nil)
	if !hasReason(res, "no real Windows node of build 10.0.26100 ran (builds: 10.0.20348)") {
		t.Errorf("a missing build: %v", res.Reasons)
	}
	res, _ = Decide(Input{Policy: loadPolicy(t, "name: x\n"), Run: load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, nil)}), Now: today, WindowsBuilds: []string{"10.0.20348"}})
	if res.Blocked() {
		t.Errorf("the build ran: %v", res.Reasons)
	}
	res = decide(t, p, load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, nil)}), nil)
	if !hasReason(res, "no Windows node: the cluster had no real Windows node") {
		t.Errorf("no Windows node: %v", res.Reasons)
	}
}

func TestBaseline(t *testing.T) {
	base := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, map[string]reporttest.Claim{
		"NET-08": reporttest.Shown(claims.Linux), "WEB-01": reporttest.Shown(claims.WindowsNode), "NET-07": {Outcome: reports.Failed}})})
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, map[string]reporttest.Claim{
		"NET-08": {Outcome: reports.Failed, Why: "dns"}, "WEB-01": reporttest.Twin(), "NET-07": reporttest.Shown(claims.Linux)})})
	res := decide(t, loadPolicy(t, "name: x\notherFailures: report\n"), run, base)
	if it := item(t, res, KindBaseline, "NET-08"); it.Decision != Block || !strings.Contains(it.Reason, "newly failing") {
		t.Errorf("newly failing NET-08: %+v", it)
	}
	lost := res.Items[0]
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
	res = decide(t, loadPolicy(t, "name: x\notherFailures: report\nbaseline:\n  newlyFailing: report\n  lostShown: block\n"), run, base)
	if hasReason(res, "newly failing") || !hasReason(res, "WEB-01") {
		t.Errorf("newlyFailing: report, lostShown: block: %v", res.Reasons)
	}
}

func TestBaselineOfAnotherShape(t *testing.T) {
	base := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, nil)})
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, nil)})
	res := decide(t, loadPolicy(t, "name: x\n"), run, base)
	if it := item(t, res, KindBaseline, KindBaseline); it.Decision != Report || !strings.Contains(it.Got, "Windows nodes 0 -> 2") {
		t.Errorf("another shape, reported: %+v", it)
	}
	_, err := Decide(Input{Policy: loadPolicy(t, "name: x\nbaseline:\n  otherShape: refuse\n"), PolicyFile: "p.yaml", Run: run, Baseline: base, Now: today})
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
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, linuxShown())})
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
	m := map[string]reporttest.Claim{"SCH-01": reporttest.Shown(claims.Scheduler), "NET-01": reporttest.Claim{Outcome: reports.Supported,
		Evidence: map[claims.Level]int{claims.Scheduler: 1}, SupportedBy: []string{"simulated nodes"}, Why: "simulated nodes"}}
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.HybridCluster, m)})
	if res := decide(t, loadPolicy(t, "name: x\nrequired:\n- claims: [SCH-01]\n"), run, nil); res.Blocked() {
		t.Errorf("SCH-01 shown at its own level, required without a level: %v", res.Reasons)
	}
	res := decide(t, loadPolicy(t, "name: x\nrequired:\n- claims: [SCH-01]\n- areas: [SCH]\n  level: windows-node\n  except: [SCH-02, SCH-03, SCH-04, SCH-05, SCH-06, SCH-07, SCH-08, SCH-09, SCH-10, SCH-11]\n"), run, nil)
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
	m := linuxShown()
	m["NET-08"] = reporttest.Claim{Outcome: reports.Failed, Why: "networking NET-08: dns"}
	run := load(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, m,
		reports.Spec{Name: "networking NET-08 dns", Labels: []string{"claim:NET-08"}, Result: reports.SpecFailed, Message: "lookup svc: no such host"})})
	res := decide(t, examplePolicy(t, "windows-node-build.yaml"), run, nil)
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
	md := res.Markdown()
	blockedBy, _, _ := strings.Cut(md, "## Every decision")
	if n := strings.Count(blockedBy, "no Windows node"); n != 1 {
		t.Errorf("gate.md's blocking section says no Windows node %d times, want once:\n%s", n, blockedBy)
	}
}
