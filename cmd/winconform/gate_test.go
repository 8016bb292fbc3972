package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/testing/reporttest"
)

// defaultRun is what the default kind cluster shows.
func defaultRun(t *testing.T) string { return reporttest.Linux().Write(t) }

// baselineRun is what the default kind cluster showed the day before.
func baselineRun(t *testing.T) string { return reporttest.Linux().AsBaseline().Write(t) }

// status runs the command with args and returns its exit status and output.
func status(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var cmd = gateCmd()
	switch args[0] {
	case "diff":
		cmd = diffCmd()
	case "report":
		cmd = reportCmd()
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args[1:])
	err := cmd.Execute()
	if err == nil {
		return 0, out.String()
	}
	var code exitCode
	if !errors.As(err, &code) {
		return 1, out.String() + err.Error()
	}
	return int(code), out.String() + err.Error()
}

func TestGateExitStatus(t *testing.T) {
	run := defaultRun(t)
	code, out := status(t, "gate", "--report", run, "--policy", "../../policies/linux-only.yaml")
	if code != exitShip || !strings.Contains(out, "winconform gate: SHIP") {
		t.Errorf("linux-only on the default run: exit %d\n%s", code, out)
	}
	code, out = status(t, "gate", "--report", run, "--policy", "../../policies/windows-node-build.yaml")
	// The findings come grouped by cause: no Windows node, once, with the claims it blocks.
	if code != exitBlocked || !regexp.MustCompile(`(?m)^  - no Windows node: the cluster had no real Windows node.*\(\d+\): cluster, .*WEB-01`).MatchString(out) ||
		strings.Count(out, "  - no Windows node") != 1 {
		t.Errorf("windows-node-build on the default run: exit %d\n%s", code, out)
	}
	if code != exitBlocked {
		t.Errorf("windows-node-build on the default run: exit %d\n%s", code, out)
	}
	for _, f := range []string{"gate.md", "gate.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("gate wrote no %s", f)
		}
	}
	out2 := t.TempDir()
	code, _ = status(t, "gate", "--report", run, "--policy", "../../policies/windows-node-build.yaml", "--out", out2, "--baseline", baselineRun(t))
	if code != exitBlocked {
		t.Errorf("exit %d", code)
	}
	for _, f := range []string{"gate.md", "gate.json", "diff.md", "diff.json"} {
		if _, err := os.Stat(filepath.Join(out2, f)); err != nil {
			t.Errorf("gate --out wrote no %s", f)
		}
	}
}

func TestGateUnusableInputs(t *testing.T) {
	run := defaultRun(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	bad := write("bad.yaml", "name: x\nrequired:\n- claims: [NET-99]\n")
	noExpiry := write("noexpiry.yaml", "name: x\nrequired:\n- claims: [NET-07]\nknownIssues:\n- claim: NET-21\n  reason: r\n  link: https://example.com/1\n")
	refuse := write("refuse.yaml", "name: x\nrequired:\n- claims: [NET-07]\nbaseline:\n  otherShape: refuse\n")
	half := defaultRun(t)
	os.WriteFile(filepath.Join(half, reports.GinkgoFile), []byte(`[{"SuiteDescription": "winconform", "SpecReports": [`), 0o644)
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "summary.json"), []byte(`{"suite": "winconform", "claims": []}`), 0o644)
	hybrid := reporttest.IdealHybrid().AsBaseline().Write(t)
	empty := write("empty.yaml", "name: x\nrequired: []\n")
	none := write("none.yaml", "name: x\nrequired:\n- labels: [\"os:windows\", \"!os:windows\"]\n")
	cases := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"unknown claim", []string{"--report", run, "--policy", bad}, []string{bad, "required[0].claims[0]", "NET-99", "winconform list"}},
		{"known issue without expiry", []string{"--report", run, "--policy", noExpiry}, []string{noExpiry, "knownIssues[0].expires", "YYYY-MM-DD"}},
		{"empty report directory", []string{"--report", t.TempDir(), "--policy", "../../policies/linux-only.yaml"}, []string{reports.GinkgoFile, "make e2e"}},
		{"half-written record", []string{"--report", half, "--policy", "../../policies/linux-only.yaml"}, []string{filepath.Join(half, reports.GinkgoFile), "half written", "rerun"}},
		{"baseline of an older winconform", []string{"--report", run, "--policy", "../../policies/linux-only.yaml", "--baseline", old}, []string{"--baseline", reports.GinkgoFile, "rerun the suites"}},
		{"a policy that requires nothing", []string{"--report", run, "--policy", empty}, []string{empty, "requires no claim"}},
		{"--check of a policy that requires nothing", []string{"--check", "--policy", empty}, []string{empty, "requires no claim"}},
		{"--check of a policy whose selection is empty", []string{"--check", "--policy", none}, []string{none, "required[0]", "selects no claim"}},
		{"--now before the run", []string{"--report", run, "--policy", "../../policies/linux-only.yaml", "--now", "2020-01-01"}, []string{"--now 2020-01-01 is before today", "never back"}},
		{"baseline that started after the run", []string{"--report", run, "--policy", "../../policies/linux-only.yaml", "--baseline", defaultRun(t)}, []string{"--baseline", "not before the run it is the baseline of"}},
		{"baseline of another shape", []string{"--report", run, "--policy", refuse, "--baseline", hybrid}, []string{hybrid, "Windows nodes 2 -> 0", "baseline.otherShape"}},
		{"bad --now", []string{"--report", run, "--policy", bad, "--now", "tomorrow"}, []string{"--now", "YYYY-MM-DD"}},
		{"bad --windows-build", []string{"--report", run, "--policy", "../../policies/linux-only.yaml", "--windows-build", "2022"}, []string{"--windows-build", "10.0.20348"}},
		{"no policy", []string{"--report", run}, []string{"--policy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := status(t, append([]string{"gate"}, c.args...)...)
			if code != exitUnusable {
				t.Errorf("exit %d, want 2:\n%s", code, out)
			}
			for _, w := range c.wants {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestDiffAndReportCommands(t *testing.T) {
	run, base := defaultRun(t), baselineRun(t)
	code, out := status(t, "diff", "--report", run, "--baseline", base)
	if code != 0 || !strings.Contains(out, "Newly failing: none") {
		t.Errorf("diff: exit %d\n%s", code, out)
	}
	for _, f := range []string{"diff.md", "diff.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("diff wrote no %s", f)
		}
	}
	if code, out := status(t, "diff", "--report", run, "--baseline", t.TempDir()); code != exitUnusable || !strings.Contains(out, "--baseline") {
		t.Errorf("diff with an empty baseline: exit %d\n%s", code, out)
	}
	if code, out := status(t, "report", "--report", run); code != 0 || !strings.Contains(out, "report.html") {
		t.Errorf("report: exit %d\n%s", code, out)
	}
	if code, _ := status(t, "report", "--report", t.TempDir()); code != exitUnusable {
		t.Errorf("report of an empty directory: exit %d", code)
	}
}

// The release gate for a Windows node build, end to end: the ideal hybrid
// run ships for its build, and blocks for a build whose only node was
// NotReady (it showed nothing), saying which claim was not shown on it.
func TestGateWindowsNodeBuildOnAHybridRun(t *testing.T) {
	ideal := reporttest.IdealHybrid().Write(t)
	code, out := status(t, "gate", "--report", ideal, "--policy", "../../policies/windows-node-build.yaml", "--windows-build", reporttest.Build)
	if code != exitShip {
		t.Errorf("the ideal hybrid run for its build: exit %d\n%s", code, out)
	}
	r := reporttest.IdealHybrid()
	r.Facts.Nodes[3].WindowsBuild, r.Facts.Nodes[3].Ready = "10.0.26100", false
	code, out = status(t, "gate", "--report", r.Write(t), "--policy", "../../policies/windows-node-build.yaml", "--windows-build", "10.0.26100")
	if code != exitBlocked || !regexp.MustCompile("(?m)^  - "+regexp.QuoteMeta("nothing shown on Windows build 10.0.26100")+".*: .*WEB-01").MatchString(out) {
		t.Errorf("a gate for a build whose node was NotReady: exit %d\n%.3000s", code, out)
	}
}
