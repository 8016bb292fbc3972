package gate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// The hostile suite (issue 28): inputs a hostile release manager could
// bring, for each rule of the gate's design, of our own making: policies,
// known issues, tampered and truncated report directories, clocks, and
// synthetic runs that showed nothing on Windows. Each goes through the
// whole gate, files in and decision out (Evaluate, what `winconform gate`
// runs), and must block for its reason or be refused with it. Before this
// design every case here said SHIP.
func TestHostileInputsNeverShip(t *testing.T) {
	winPolicy := filepath.Join("..", "..", "policies", "windows-node-build.yaml")
	issue := func(subject, expires string) string {
		return "knownIssues:\n- " + subject + "\n  reason: accepted\n  link: https://example.com/issues/1\n  expires: " + expires + "\n"
	}
	failed := func(id string) func() *reporttest.Run {
		return func() *reporttest.Run { r := reporttest.IdealHybrid(); r.Fail(id, id+" did not hold"); return r }
	}
	cases := []struct {
		rule, name string
		run        func() *reporttest.Run // the run; IdealHybrid when nil
		tamper     func(t *testing.T, dir string)
		policy     string // a policy's text; windows-node-build.yaml when empty
		now        string
		clock      time.Time
		block      string // a blocking reason, or
		refuse     string // what the refusal (exit 2) says
	}{
		// Rule 1: the gate decides from the record; a derived file edited changes nothing.
		{rule: "1", name: "summary.json edited: a failed WEB-01 reads shown", run: failed("WEB-01"),
			tamper: func(t *testing.T, d string) { editJSON(t, d, reports.SummaryFile, showEverything) }, block: "WEB-01 failed"},
		{rule: "1", name: "summary.json edited: a run without Windows nodes reads shown on two", run: reporttest.Linux,
			tamper: func(t *testing.T, d string) {
				editJSON(t, d, reports.SummaryFile, func(m map[string]any) {
					showEverything(m)
					m["cluster"].(map[string]any)["windowsNodes"] = 2
				})
			}, block: "no Windows node"},
		{rule: "1", name: "cluster.json edited: two real Windows nodes added to a Linux cluster", run: reporttest.Linux,
			tamper: func(t *testing.T, d string) {
				editJSON(t, d, reports.ClusterFile, func(m map[string]any) {
					m["nodes"] = append(m["nodes"].([]any), map[string]any{"name": "win-1", "os": "windows", "ready": true, "windowsBuild": reporttest.Build})
				})
			}, block: "no Windows node"},
		{rule: "1", name: "limitations.json and summary.json edited: a drift removed",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("LIM-10").Ledger[0].Observed = ledger.Works
				return r
			},
			tamper: func(t *testing.T, d string) {
				editJSON(t, d, reports.LimitationsFile, func(m map[string]any) { m["entries"] = []any{} })
				editJSON(t, d, reports.SummaryFile, showEverything)
			}, block: "LIM-10"},
		{rule: "1", name: "summary.json deleted: the record alone decides", run: failed("NET-03"),
			tamper: func(t *testing.T, d string) { must(t, os.Remove(filepath.Join(d, reports.SummaryFile))) }, block: "NET-03 failed"},

		// Rule 2: the required set is the catalogue's; another catalogue is refused.
		{rule: "2", name: "summary.json lists fewer claims: the failed WEB-01 left out", run: failed("WEB-01"),
			tamper: func(t *testing.T, d string) {
				editJSON(t, d, reports.SummaryFile, func(m map[string]any) {
					var keep []any
					for _, c := range m["claims"].([]any) {
						if c.(map[string]any)["id"] != "WEB-01" {
							keep = append(keep, c)
						}
					}
					m["claims"], m["specs"] = keep, []any{}
				})
			}, block: "WEB-01 failed"},
		{rule: "2", name: "the record has no spec of a required claim",
			run: func() *reporttest.Run { r := reporttest.IdealHybrid(); r.Set("VOL-03"); return r }, block: "VOL-03 not covered"},
		{rule: "2", name: "a narrow run that selected the Linux claims only",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.LabelFilter = "claim:NET-07 || claim:NET-16"
				return r
			}, block: "WEB-01 not run"},
		{rule: "2", name: "a run recorded under another catalogue",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Catalogue = "sha256:0123456789abcdef"
				return r
			}, refuse: "recorded under claim catalogue sha256:0123456789abcdef"},

		// Rule 3: a policy that requires nothing cannot gate.
		{rule: "3", name: "required: []", policy: "name: x\nrequired: []\n", refuse: "requires no claim"},
		{rule: "3", name: "no required at all", policy: "name: x\ndrift: block\n", refuse: "requires no claim"},
		{rule: "3", name: "labels that contradict each other", policy: "name: x\nrequired:\n- labels: [\"os:windows\", \"!os:windows\"]\n", refuse: "selects no claim"},
		{rule: "3", name: "except: removes every claim it selects", policy: "name: x\nrequired:\n- claims: [WEB-01, WEB-02]\n  except: [WEB-02, WEB-01]\n", refuse: "selects no claim"},
		{rule: "3", name: "claims: and areas: that do not meet", policy: "name: x\nrequired:\n- claims: [WEB-01]\n  areas: [NET]\n", refuse: "selects no claim"},
		{rule: "3", name: "one empty requirement beside a good one", policy: "name: x\nrequired:\n- claims: [NET-07]\n- labels: [\"level:domain\", \"kind:path\"]\n", refuse: "required[1]"},
		{rule: "3", name: "fewer Windows nodes than the required claims need", policy: "name: x\ncluster:\n  windowsNodes: 1\nrequired:\n- claims: [NET-01]\n", refuse: "NET-01 needs 2 real Windows nodes"},
		{rule: "3", name: "Windows claims required, no count set: the count they need, which one node does not give",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Facts.Nodes = r.Facts.Nodes[:3]
				for i := range r.Specs {
					for j := range r.Specs[i].Evidence {
						r.Specs[i].Evidence[j].Nodes = dropNode(r.Specs[i].Evidence[j].Nodes, "win-2")
					}
				}
				return r
			}, policy: "name: x\nrequired:\n- claims: [NET-01]\n", block: "the cluster had 1 real Windows node(s); the policy needs at least 2"},

		// Rule 4: a known issue waives one observed failure of what it names.
		{rule: "4", name: "a known issue on a blocked claim (its setup failed)",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Block("NET-03", "BeforeAll: no route")
				return r
			},
			policy: "name: x\nrequired:\n- claims: [NET-03]\n" + issue("claim: NET-03", "2026-12-31"), block: "not a claim left blocked"},
		{rule: "4", name: "a known issue on a skip",
			run:    func() *reporttest.Run { r := reporttest.IdealHybrid(); r.Skip("NET-03", "no-inventory"); return r },
			policy: "name: x\nrequired:\n- claims: [NET-03]\n" + issue("claim: NET-03", "2026-12-31"), block: "NET-03 skipped"},
		{rule: "4", name: "a known issue on a failure seen on the Linux twin only",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Set("WEB-01", reporttest.Spec{Name: "WEB-01 windows", State: types.SpecStateSkipped, Message: "no Windows node", SkipReason: "no-inventory"},
					reporttest.Spec{Name: "WEB-01 linux twin", State: types.SpecStateFailed, Message: "twin failed", Evidence: []reporttest.Ev{reporttest.OnLinux()}})
				return r
			}, policy: "name: x\nrequired:\n- claims: [WEB-01]\n" + issue("claim: WEB-01", "2026-12-31"), block: "WEB-01 failed"},
		{rule: "4", name: "a known issue on a failure before the spec recorded where it ran",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Set("WEB-02", reporttest.Spec{State: types.SpecStateFailed, Message: "no pod started"})
				return r
			}, policy: "name: x\nrequired:\n- claims: [WEB-02]\n" + issue("claim: WEB-02", "2026-12-31"), block: "WEB-02 failed"},
		{rule: "4", name: "a known issue naming NET-01 on a flaky cell NET-02 shares",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("windows-a", "windows-b/pod-ip", netmatrix.Flaky, netmatrix.Reachable, "NET-01", "NET-02")}}
				return r
			}, policy: "name: x\nrequired:\n- claims: [NET-02]\n" + issue("claim: NET-01", "2026-12-31"), block: "shared with NET-02"},
		{rule: "4", name: "a known issue naming one claim of a retried spec two claims share",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("NET-05").Attempts = 2
				r.One("NET-05").Labels = append(r.One("NET-05").Labels, "claim:NET-06")
				return r
			}, policy: "name: x\nrequired:\n- claims: [NET-07]\n" + issue("claim: NET-05", "2026-12-31"), block: "flaky"},
		{rule: "4", name: "--now before the run's start, to revive an expired known issue", run: failed("WEB-01"),
			policy: "name: x\nrequired:\n- claims: [WEB-01]\n" + issue("claim: WEB-01", "2026-02-28"), now: "2026-01-01", refuse: "never back"},
		{rule: "4", name: "--now after the run's start and before today, to revive a known issue expired since", run: failed("WEB-01"),
			policy: "name: x\nrequired:\n- claims: [WEB-01]\n" + issue("claim: WEB-01", "2026-03-02"), now: "2026-03-01", clock: time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC), refuse: "never back"},
		{rule: "4", name: "a clock set back before the run's start", run: failed("WEB-01"),
			policy: "name: x\nrequired:\n- claims: [WEB-01]\n" + issue("claim: WEB-01", "2026-02-28"), clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), block: "expired on 2026-02-28"},

		// Rule 5: an incomplete run never ships.
		{rule: "5", name: "no record: the Ginkgo report deleted, the summary left",
			tamper: func(t *testing.T, d string) { must(t, os.RemoveAll(filepath.Join(d, "ginkgo"))) }, refuse: "no ginkgo/report.json"},
		{rule: "5", name: "no run.json, and a record that never reached its end",
			run:    func() *reporttest.Run { r := reporttest.IdealHybrid(); r.NoRunFile = true; return r },
			tamper: func(t *testing.T, d string) { editRecord(t, d, func(g *types.Report) { g.EndTime = time.Time{} }) }, refuse: "never reached its end"},
		{rule: "5", name: "run.json of another run",
			tamper: func(t *testing.T, d string) {
				editJSON(t, d, rundir.RunFile, func(m map[string]any) { m["runID"] = "wc-20200101t000000-deadbeef" })
			}, refuse: "mixes two runs"},
		{rule: "5", name: "run.json that started and never ended",
			tamper: func(t *testing.T, d string) {
				editJSON(t, d, rundir.RunFile, func(m map[string]any) { delete(m, "ended"); m["host"] = "another-host" })
			}, refuse: "did not finish"},
		{rule: "5", name: "an interrupted run whose required claims had all passed",
			run: func() *reporttest.Run { r := reporttest.IdealHybrid(); r.Interrupted = true; return r }, block: "interrupted"},
		{rule: "5", name: "a dry run", tamper: func(t *testing.T, d string) { editRecord(t, d, func(g *types.Report) { g.SuiteConfig.DryRun = true }) }, refuse: "dry run"},
		{rule: "5", name: "a record that names no run",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Unrecorded = true
				r.NoRunFile = true
				return r
			}, refuse: "names no run"},
		{rule: "5", name: "a record cut short", tamper: func(t *testing.T, d string) { truncate(t, filepath.Join(d, reports.GinkgoFile)) }, refuse: "half written"},

		// Rule 6: every showing record is held against the run's own cluster.
		{rule: "6", name: "a windows-node record naming a node the cluster lacks",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("WEB-01").Evidence[0].Nodes = []string{"win-9"}
				return r
			}, refuse: "win-9, which the cluster did not have"},
		{rule: "6", name: "a windows-node record of a build its node does not run",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("WEB-01").Evidence[0].Build = "10.0.17763"
				return r
			}, refuse: "says build 10.0.17763 for node win-1"},
		{rule: "6", name: "a windows-node record naming a simulated node",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.Facts.Nodes[3] = facts.Node{Name: "win-2", OS: "windows", Ready: true, Simulated: true, WindowsBuild: reporttest.Build}
				r.One("WEB-01").Evidence[0].Nodes = []string{"win-2"}
				return r
			}, refuse: "win-2, which is simulated"},
		{rule: "6", name: "a windows-node record naming a Linux node (SCH-03's defect)",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("SCH-03").Evidence = []reporttest.Ev{{Level: claims.WindowsNode, Build: reporttest.Build, Nodes: []string{"lin-w"}}}
				return r
			}, refuse: "lin-w, a linux node"},
		{rule: "6", name: "a windows-node record naming no node",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("WEB-01").Evidence[0].Nodes = nil
				return r
			}, refuse: "names no node"},
		{rule: "6", name: "a Linux record naming a Windows node",
			run: func() *reporttest.Run {
				r := reporttest.IdealHybrid()
				r.One("NET-07").Evidence[0].Nodes = []string{"win-1"}
				return r
			}, refuse: "win-1, a windows node"},
		{rule: "6", name: "Windows records of a run that never reached its cluster",
			run: func() *reporttest.Run { r := reporttest.IdealHybrid(); r.Facts = nil; return r }, refuse: "on a cluster the run never reached"},
	}
	for _, c := range cases {
		t.Run("rule "+c.rule+": "+c.name, func(t *testing.T) {
			r := reporttest.IdealHybrid()
			if c.run != nil {
				r = c.run()
			}
			dir := r.Write(t)
			if c.tamper != nil {
				c.tamper(t, dir)
				// The tamperer writes the manifest again, as anyone can:
				// what it does not catch, the record's contract must.
				reporttest.Reseal(t, dir)
			}
			pol := winPolicy
			if c.policy != "" {
				pol = filepath.Join(t.TempDir(), "policy.yaml")
				must(t, os.WriteFile(pol, []byte(c.policy), 0o644))
			}
			clock := func() time.Time { return today }
			if !c.clock.IsZero() {
				clock = func() time.Time { return c.clock }
			}
			res, err := Evaluate(Options{Report: dir, Policy: pol, Now: c.now, Clock: clock})
			switch {
			case c.refuse != "":
				if err == nil || !strings.Contains(err.Error(), c.refuse) {
					t.Errorf("decided %s (%v), want it refused saying %q", res.Decision, err, c.refuse)
				}
			case err != nil:
				t.Fatalf("refused: %v; want BLOCKED saying %q", err, c.block)
			case !res.Blocked() || !hasReason(res, c.block):
				t.Errorf("decided %s, want BLOCKED saying %q:\n%s", res.Decision, c.block, strings.Join(res.Reasons, "\n"))
			}
		})
	}
}

// The positive control of the hostile suite: the ideal hybrid run ships,
// through the same path, under the shipped Windows node build policy.
func TestIdealHybridShipsThroughEvaluate(t *testing.T) {
	res, err := Evaluate(Options{Report: reporttest.IdealHybrid().Write(t), Policy: "../../policies/windows-node-build.yaml", WindowsBuilds: []string{reporttest.Build},
		Clock: func() time.Time { return today }})
	if err != nil || res.Blocked() {
		t.Fatalf("the ideal hybrid run: %v %s\n%s", err, res.Decision, strings.Join(res.Reasons, "\n"))
	}
}

// A baseline recorded under an older catalogue stays usable: the diff
// compares by claim ID and says what either side lacks.
func TestBaselineOfAnotherCatalogue(t *testing.T) {
	b := reporttest.IdealHybrid().AsBaseline()
	b.Catalogue = "sha256:00000000000000aa"
	dir := b.Write(t)
	editRecord(t, dir, func(g *types.Report) {
		for i, sr := range g.SpecReports {
			for j, e := range sr.ReportEntries {
				if e.Name == "winconform.run" {
					var m map[string]any
					must(t, json.Unmarshal([]byte(e.StringRepresentation()), &m))
					m["claims"] = append(m["claims"].([]any)[1:], "OLD-01")
					data, _ := json.Marshal(m)
					g.SpecReports[i].ReportEntries[j].Value = types.WrapEntryValue(string(data))
				}
			}
		}
	})
	res, err := Evaluate(Options{Report: reporttest.IdealHybrid().Write(t), Baseline: dir, Policy: "../../policies/windows-node-build.yaml", Clock: func() time.Time { return today }})
	if err != nil {
		t.Fatalf("a baseline of an older catalogue is refused: %v", err)
	}
	first := claims.All()[0].ID
	d := res.Diff
	if d == nil || len(d.OnlyInReport) != 1 || d.OnlyInReport[0] != first || len(d.OnlyInBaseline) != 1 || d.OnlyInBaseline[0] != "OLD-01" {
		t.Fatalf("diff %+v, want %s only in the report's catalogue and OLD-01 only in the baseline's", d, first)
	}
	if md := d.Markdown(); !strings.Contains(md, "recorded under claim catalogue sha256:00000000000000aa") {
		t.Errorf("diff.md does not say the catalogues differ:\n%s", md)
	}
}

// showEverything marks every claim of a summary.json shown on Windows.
func showEverything(m map[string]any) {
	for _, c := range m["claims"].([]any) {
		c := c.(map[string]any)
		c["outcome"], c["why"] = "shown", ""
		c["shown"] = []any{map[string]any{"level": "windows-node", "build": reporttest.Build, "specs": 1}}
		if l := c["level"]; l == "linux" || l == "api" {
			c["shown"] = []any{map[string]any{"level": l, "specs": 1}}
		}
	}
	m["succeeded"] = true
}

func editJSON(t *testing.T, dir, name string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(data, &m))
	edit(m)
	data, err = json.Marshal(m)
	must(t, err)
	must(t, os.WriteFile(path, data, 0o644))
}

func editRecord(t *testing.T, dir string, edit func(*types.Report)) {
	t.Helper()
	path := filepath.Join(dir, reports.GinkgoFile)
	data, err := os.ReadFile(path)
	must(t, err)
	var rs []types.Report
	must(t, json.Unmarshal(data, &rs))
	edit(&rs[0])
	data, err = json.Marshal(rs)
	must(t, err)
	must(t, os.WriteFile(path, data, 0o644))
	reporttest.Reseal(t, dir)
}

func truncate(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, data[:len(data)/2], 0o644))
}

func dropNode(nodes []string, name string) []string {
	var out []string
	for _, n := range nodes {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// A baseline is another run: the report as its own baseline (or a copy of
// it) would say nothing changed whatever changed (issue 31 item 6).
func TestBaselineIsAnotherRun(t *testing.T) {
	r := reporttest.IdealHybrid()
	dir, copied := r.Write(t), r.Write(t)
	for _, base := range []string{dir, copied} {
		_, err := Evaluate(Options{Report: dir, Baseline: base, Policy: "../../policies/windows-node-build.yaml", Clock: func() time.Time { return today }})
		if err == nil || !strings.Contains(err.Error(), "give an earlier run's report directory") {
			t.Errorf("baseline %s of the same run: %v", base, err)
		}
	}
}
