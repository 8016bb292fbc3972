package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runCLI runs a winconform command line as main does, with no docker on
// PATH: a command that got past its checks to cluster work fails there
// with exit status 1, never 2.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// Every input is checked before any cluster work, with the suite binary's
// dry run: bad input ends with exit status 2 and one line naming the cause
// and the fix (issue 22: `make e2e LABELS='os:linx'` ran 0 of 146 specs and
// exited 0; `winconform e2e networking` ran everything; SUITE_FLAGS typos
// and --inventory typos surfaced after the cluster was up).
func TestE2ERefusesBadInputBeforeClusterWork(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "machines.yaml")
	os.WriteFile(inv, []byte("machines:\n  - nmae: win-1\n"), 0o644)
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "thesis.tex"), []byte("years of work"), 0o644)
	for _, tc := range []struct {
		name  string
		specs int
		args  []string
		want  []string
	}{
		{"a label no spec has", 0, []string{"--labels", "os:linx"},
			[]string{"matches none of the 121 specs", `no spec has the label os:linx (did you mean "os:linux"?)`, "make list"}},
		{"two positional suites", 5, []string{"networking", "storage"},
			[]string{"one suite at a time", "suite:networking || suite:storage"}},
		{"a positional suite that does not exist", 5, []string{"nope"},
			[]string{`unknown SUITE "nope"`, `the argument "nope" before -- is the suite to run`}},
		{"a positional suite and --suite", 5, []string{"--suite", "storage", "networking"}, []string{"name the suite once"}},
		{"a suite flag typo", 5, []string{"--", "--bogus"}, []string{"the suite binary has no flag -bogus", "--help"}},
		{"the CLI's own flag after --", 5, []string{"--", "--kubeconfig=/x"}, []string{"use winconform e2e --kubeconfig instead"}},
		{"procs not a number", 5, []string{"--procs", "four"}, []string{`--procs (PROCS) "four" is not a number`}},
		{"an inventory with a typo", 5, []string{"--inventory", inv}, []string{"--inventory", inv}},
		{"a missing kubeconfig", 5, []string{"--kubeconfig", "/nonexistent/kubeconfig"}, []string{"--kubeconfig /nonexistent/kubeconfig does not exist", "check the path of the kubeconfig"}},
		{"a bad label filter", 5, []string{"--labels", "os:linux && ("}, []string{"not a Ginkgo label filter"}},
		{"an unknown claim", 5, []string{"--claim", "NET-999"}, []string{`unknown claim "NET-999"`}},
		{"a negative timeout", 5, []string{"--timeout", "-1h"}, []string{`invalid argument "-1h" for "--timeout" flag: want a positive duration, such as 2h`}},
		{"a bad progress URL", 5, []string{"--", "--progress-report-url=localhost:8099"}, []string{"want an http:// or https:// URL"}},
		{"an unknown flag", 5, []string{"--lables", "os:linux"}, []string{"unknown flag: --lables", "winconform e2e --help"}},
		{"a report directory of other files", 5, []string{"--report-dir", home}, []string{"holds what is not a winconform report (thesis.tex)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, _ := fakeSuiteBinary(t, tc.specs)
			code, _, stderr := runCLI(t, append([]string{"e2e", "--suite-binary", bin}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d (refused input); stderr:\n%s", code, exitUsage, stderr)
			}
			// The answer starts "winconform e2e: " (a file's problems follow
			// it, one a line); nothing reads like a crash.
			if !strings.HasPrefix(stderr, "winconform e2e: ") || strings.Contains(stderr, "exit status") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr %q: want the command's answer, winconform e2e: ...", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// A mistyped --kubeconfig (make's EXISTING) is refused before the default
// report directory, which holds the last run's report, is touched.
func TestE2EMistypedKubeconfigKeepsTheLastReport(t *testing.T) {
	bin, _ := fakeSuiteBinary(t, 5)
	t.Chdir(t.TempDir())
	last := filepath.Join(outPath("report"), "summary.json")
	os.MkdirAll(filepath.Dir(last), 0o755)
	os.WriteFile(last, []byte("{}"), 0o644)
	if code, _, stderr := runCLI(t, "e2e", "--suite-binary", bin, "--existing", "~/.kube/confg"); code != exitUsage {
		t.Errorf("exit status %d: %s", code, stderr)
	}
	if _, err := os.Stat(last); err != nil {
		t.Errorf("the last run's report is gone: %v", err)
	}
}

// An argument before -- is the suite (as in `ginkgo run ./networking`),
// passed to the suite binary as --suite; the suite flags after -- reach it
// too. --check stops after the checks (no cluster work) and says how many
// specs would run.
func TestE2EPositionalSuite(t *testing.T) {
	for _, arg := range []string{"networking", "./suites/networking/"} {
		bin, calls := fakeSuiteBinary(t, 7)
		code, _, stderr := runCLI(t, "e2e", "--suite-binary", bin, "--check", arg, "--", "--strict-drift")
		if code != 0 {
			t.Fatalf("%s: exit status %d: %s", arg, code, stderr)
		}
		got := calls()
		if !slices.Contains(got, "--suite=networking") || !slices.Contains(got, "--strict-drift") {
			t.Errorf("%s: the dry run got %q, want --suite=networking and --strict-drift", arg, got)
		}
		if !strings.Contains(stderr, "7 spec(s) selected") {
			t.Errorf("%s: %s", arg, stderr)
		}
	}
}

// --procs is Ginkgo's name for parallel processes; --nodes (NODES) still
// works, with a note.
func TestE2EProcsAndDeprecatedNodes(t *testing.T) {
	bin, _ := fakeSuiteBinary(t, 3)
	code, stdout, stderr := runCLI(t, "e2e", "--suite-binary", bin, "--check", "--nodes", "40")
	if code != exitUsage || !strings.Contains(stdout, "--nodes has been deprecated, use --procs") || !strings.Contains(stderr, "--procs (PROCS) 40 is more than") {
		t.Errorf("--nodes 40: exit %d: %s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "e2e", "--suite-binary", bin, "--check", "--procs", "2"); code != 0 {
		t.Errorf("--procs 2: exit %d: %s", code, stderr)
	}
}

// --kubeconfig is the cluster to test or use, as in e2e.test, hydrophone
// and sonobuoy: up and down, which write or delete the local cluster's,
// refuse it and name --kubeconfig-out (before, `winconform e2e --kubeconfig
// ~/.kube/config` made a kind cluster and wrote its kubeconfig there).
func TestKubeconfigMeansTheClusterToUse(t *testing.T) {
	for _, c := range []string{"up", "down"} {
		code, _, stderr := runCLI(t, c, "--kubeconfig", "/tmp/k")
		if code != exitUsage || !strings.Contains(stderr, "--kubeconfig-out") {
			t.Errorf("%s --kubeconfig: exit %d: %s", c, code, stderr)
		}
	}
	for _, c := range [][]string{{"e2e"}, {"sonobuoy", "run"}, {"join"}, {"reset"}} {
		cmd, _, err := rootCmd().Find(c)
		if err != nil {
			t.Fatal(err)
		}
		f := cmd.Flags().Lookup("kubeconfig")
		if f == nil || f.Hidden || !strings.Contains(f.Usage, "cluster") {
			t.Errorf("%v --kubeconfig: %+v", c, f)
		}
	}
	for _, c := range [][]string{{"up"}, {"e2e"}, {"sonobuoy", "run"}} {
		cmd, _, _ := rootCmd().Find(c)
		if cmd.Flags().Lookup("kubeconfig-out") == nil {
			t.Errorf("%v has no --kubeconfig-out", c)
		}
	}
	e2e, _, _ := rootCmd().Find([]string{"e2e"})
	if e2e.Flags().Lookup("existing") == nil {
		t.Error("e2e lost --existing (make's EXISTING)")
	}
}

// The defaults are found beside the executable, so the binary works from
// any directory.
func TestOutputDir(t *testing.T) {
	for exe, want := range map[string]string{
		"/work/main/_output/bin/winconform": "/work/main/_output",
		"/usr/local/bin/winconform":         "_output",
		"":                                  "_output",
	} {
		if got := outputDir(exe); got != want {
			t.Errorf("outputDir(%q) = %q, want %q", exe, got, want)
		}
	}
}

// The docker shim goes into this binary's _output, never the working
// directory or the cache the checkouts share (a tracked shim/docker once
// linked to one machine's binary).
func TestShimDirIsUnderOutput(t *testing.T) {
	o := kindOptions("/k")
	if !filepath.IsAbs(o.ShimDir) || filepath.Base(o.ShimDir) != "shim" || filepath.Base(filepath.Dir(o.ShimDir)) != "_output" {
		t.Errorf("ShimDir %q", o.ShimDir)
	}
}

// `winconform gate --check` reads the policy alone, so that a long run
// (make e2e VMS=...) refuses a bad POLICY before it makes a machine.
func TestGateCheckPolicy(t *testing.T) {
	if code, out, stderr := runCLI(t, "gate", "--check", "--policy", "../../policies/linux-only.yaml"); code != 0 || !strings.Contains(out, "can be used") {
		t.Errorf("a good policy: exit %d: %s%s", code, out, stderr)
	}
	bad := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(bad, []byte("requird: [NET-01]\n"), 0o644)
	if code, _, stderr := runCLI(t, "gate", "--check", "--policy", bad); code != exitUsage || !strings.Contains(stderr, bad) {
		t.Errorf("a bad policy: exit %d: %s", code, stderr)
	}
}

// gate --check warns of a known issue that has expired (it waives nothing);
// the policy stays usable, for gating the old runs it was written for
// (issue 31 item 6).
func TestGateCheckWarnsOfAnExpiredKnownIssue(t *testing.T) {
	data, err := os.ReadFile("../../policies/linux-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expired := strings.Replace(string(data), "knownIssues: []", "knownIssues:\n  - claim: NET-01\n    reason: a flake of the CNI\n    link: https://example.com/issues/1\n    expires: 2026-01-31", 1)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(path, []byte(expired), 0o644)
	code, out, stderr := runCLI(t, "gate", "--check", "--policy", path)
	if code != 0 || !strings.Contains(out, "can be used") || !strings.Contains(stderr, "the known issue of NET-01 expired on 2026-01-31 and waives nothing") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// vms up --parallel 0 would make no machine at a time: refused (issue 31
// item 6).
func TestVMsUpParallelZero(t *testing.T) {
	code, _, stderr := runCLI(t, "vms", "up", "--vms", "nowhere.yaml", "--parallel", "0")
	if code != exitUsage || !strings.Contains(stderr, `invalid argument "0" for "--parallel" flag: want how many machines are created at once, a whole number from 1 to 32`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// join and reset refuse a missing or bad inventory and a machine it does
// not have with exit status 2, before the cluster is looked up.
func TestWindowsCommandsRefuseBadInput(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "machines.yaml")
	os.WriteFile(inv, []byte("defaults:\n  user: Administrator\n  passwordFrom: {env: WINCONFORM_TEST_PASSWORD}\nmachines:\n- name: win-a\n  address: 192.0.2.20\n"), 0o600)
	t.Setenv("WINCONFORM_TEST_PASSWORD", "not-used")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reset"}, "reset needs --inventory FILE"},
		{[]string{"join"}, "join needs --inventory FILE"},
		{[]string{"reset", "--inventory", inv, "--machine", "win-b"}, `--machine "win-b": ` + inv + ` has no machine of that name (did you mean "win-a"? it has win-a)`},
		{[]string{"join", "--inventory", filepath.Join(t.TempDir(), "none.yaml")}, "does not exist"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d: %s\nwant %q", tc.args, code, stderr, tc.want)
		}
	}
}

// up --report-dir (where a failure's JUnit goes; join's is the same
// check) refuses a directory that holds what is not a report, before any
// cluster work (no docker on PATH: cluster work would exit 1), and leaves it
// as it is.
func TestStepReportDirRefusedBeforeClusterWork(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "thesis.tex"), []byte("years of work"), 0o644)
	code, _, stderr := runCLI(t, "up", "--report-dir", home)
	if code != exitUsage || !strings.Contains(stderr, "holds what is not a winconform report (thesis.tex)") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 1 {
		t.Errorf("the directory changed: %v", entries)
	}
}

// An interrupt during cluster work says so, not "context canceled" alone;
// a failure already reported adds nothing; refused input is exit 2.
func TestExitStatus(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errb bytes.Buffer
	if code := exitStatus(ctx, "winconform e2e", usage(fmt.Errorf("dry run: %w", context.Canceled)), &errb); code != exitInterrupted ||
		errb.String() != "winconform e2e: interrupted, stopped before it finished (dry run: context canceled)\n" {
		t.Errorf("interrupted: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := exitStatus(context.Background(), "winconform e2e", exitCode(1), &errb); code != 1 || errb.Len() != 0 {
		t.Errorf("a failed run: %d %q", code, errb.String())
	}
	if code := exitStatus(context.Background(), "winconform up", ranError{errors.New("docker CLI not found")}, &errb); code != exitFailed || errb.String() != "winconform up: docker CLI not found\n" {
		t.Errorf("a failure: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := exitStatus(context.Background(), "winconform vms up", errors.New(`required flag(s) "vms" not set`), &errb); code != exitUsage {
		t.Errorf("cobra's refusal: %d %q", code, errb.String())
	}
}

// One rule for exit statuses (issue 31 item 7): refused input exits 2
// wherever it is, a failed run 1. Before, a missing required flag and a
// group command's unknown command (printing help) exited 1 and 0.
func TestCommandLineRefusalsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"vms", "up"}, {"vms", "down"}, {"vms", "sweep"}, {"vms", "bogus"}, {"images", "bogus"},
		{"sonobuoy", "bogus"}, {"underlay"}, {"vms"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "winconform") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if _, _, stderr := runCLI(t, "vms", "bogus"); !strings.Contains(stderr, `unknown command "bogus" for winconform vms (its commands: `) {
		t.Errorf("vms bogus: %q", stderr)
	}
	if code, _, _ := runCLI(t, "--help"); code != 0 {
		t.Errorf("--help: exit %d", code)
	}
}

// A run that failed and said so (a blocked gate, a failed suite) exits with
// its status alone: no "exit status N" line after its own.
func TestAReportedFailureAddsNoLine(t *testing.T) {
	code, _, stderr := runCLI(t, "gate", "--report", defaultRun(t), "--policy", "../../policies/windows-node-build.yaml")
	if code != exitBlocked || strings.Contains(stderr, "exit status") {
		t.Errorf("a blocked gate: exit %d, stderr %q", code, stderr)
	}
}

// list prints the selection (--suite, --claim, --labels), as e2e runs it,
// and refuses one of no spec as e2e does: exit 2, with the label no spec
// has and the nearest that one has; no raw Ginkgo output (issue 31: list
// printed every spec and exited 0, even for os:linx).
func TestListPrintsTheSelection(t *testing.T) {
	bin, calls := fakeSuiteBinary(t, 1)
	code, out, errOut := runCLI(t, "list", "--suite-binary", bin, "--labels", "os:windows")
	if code != 0 || !strings.Contains(out, "a Windows pod reaches pods") || strings.Contains(out, "pods reach pods\n") {
		t.Errorf("list --labels os:windows: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "1 of 2 specs selected") {
		t.Errorf("list does not count its selection:\n%s", out)
	}
	if got := calls(); !slices.Contains(got, "--ginkgo.label-filter=os:windows") {
		t.Errorf("the dry run got %q", got)
	}

	bin, _ = fakeSuiteBinary(t, 0)
	code, out, errOut = runCLI(t, "list", "--suite-binary", bin, "--labels", "os:linx")
	if code != 2 || !strings.Contains(errOut, "no spec has the label os:linx (did you mean \"os:linux\"?)") || strings.Contains(out, "pods reach pods") {
		t.Errorf("list --labels os:linx: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "\x1b[") {
		t.Errorf("colour codes reach the user: %q", errOut)
	}
}

// e2e refuses, before any cluster work, what would be ignored or would make
// a run say more than it saw (issue 31 items 2, 5, 6): a
// cluster file given as --kubeconfig (it reads as an empty kubeconfig),
// --config beside --kubeconfig, --timeout 0 given.
func TestE2ERefusesWhatWouldBeIgnored(t *testing.T) {
	clusterFile := filepath.Join(t.TempDir(), "cluster.yaml")
	os.WriteFile(clusterFile, []byte("name: winconform\nkubernetesVersion: v1.37.2\n"), 0o644)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(unreachable), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a cluster file as --kubeconfig", []string{"--kubeconfig", clusterFile}, "is not a kubeconfig of a cluster"},
		{"--config beside --kubeconfig", []string{"--kubeconfig", kc, "--config", clusterFile}, "--config and --kubeconfig"},
		{"--timeout 0 given", []string{"--timeout", "0"}, `invalid argument "0" for "--timeout" flag: want a positive duration, such as 2h`},
		{"a JUnit property that is no name=value", []string{"--junit-property", "build"}, "write it as name=value"},
		{"a JUnit property of the harness's", []string{"--junit-property", "shown=93"}, "JUnit property shown is the harness's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, _ := fakeSuiteBinary(t, 2)
			code, _, stderr := runCLI(t, append([]string{"e2e", "--suite-binary", bin, "--check"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// e2e --dry-run prints the selection as list does, with no cluster work.
func TestE2EDryRunIsList(t *testing.T) {
	bin, _ := fakeSuiteBinary(t, 1)
	code, out, stderr := runCLI(t, "e2e", "--suite-binary", bin, "--dry-run", "--labels", "os:windows")
	if code != 0 || !strings.Contains(out, "a Windows pod reaches pods") || strings.Contains(out, "pods reach pods\n") || !strings.Contains(out, "1 of 2 specs selected") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

// A cluster that does not answer ends the run in one line naming it, exit
// 1, before the suite starts; the report says the run never reached it
// (issue 31 item 5: the suite started, dumped Ginkgo structs, and results
// listed 93 claims as not covered).
func TestE2EUnreachableClusterEndsInOneLine(t *testing.T) {
	t.Chdir(t.TempDir())
	bin, calls := fakeSuiteBinary(t, 2)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(unreachable), 0o600)
	code, _, stderr := runCLI(t, "e2e", "--suite-binary", bin, "--kubeconfig", kc, "--report-dir", "report", "--junit-file", "ci.xml")
	if code != exitFailed || !strings.Contains(stderr, "the cluster at https://127.0.0.1:1") || !strings.Contains(stderr, "did not answer /version") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if got := calls(); !slices.Contains(got, "--ginkgo.dry-run") {
		t.Errorf("the suite binary ran for real: %q", got)
	}
	junit, err := os.ReadFile(filepath.Join("report", "junit_01.xml"))
	if err != nil || !strings.Contains(string(junit), "reach the cluster") {
		t.Errorf("the report does not say the run never reached the cluster (%v):\n%s", err, junit)
	}
	if copied, err := os.ReadFile("ci.xml"); err != nil || string(copied) != string(junit) {
		t.Errorf("--junit-file: %v", err)
	}
}

// $KUBECONFIG is ignored (a run taints nodes and starts privileged pods:
// never on whatever cluster the shell points at), and e2e says so.
func TestE2ESaysKubeconfigIsIgnored(t *testing.T) {
	cmd := e2eCmd()
	var errb bytes.Buffer
	cmd.SetErr(&errb)
	t.Setenv("KUBECONFIG", "/somewhere/else")
	noteKubeconfigEnv(cmd, "")
	if !strings.Contains(errb.String(), "$KUBECONFIG is set and ignored") || !strings.Contains(errb.String(), "--kubeconfig") {
		t.Errorf("stderr %q", errb.String())
	}
	errb.Reset()
	noteKubeconfigEnv(cmd, "/a/kubeconfig")
	if errb.Len() != 0 {
		t.Errorf("with --kubeconfig: %q", errb.String())
	}
}

// A flag of a related tool's habit gets what it is called here, not a
// bare "unknown flag" (issue 31).
func TestHabitsGetHints(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"e2e", "--focus", "x"}, "--claim or --labels"},
		{[]string{"e2e", "--skip", "x"}, "--labels"},
		{[]string{"e2e", "--parallel", "2"}, "--procs"},
		{[]string{"list", "--ginkgo.procs", "2"}, "--procs"},
		{[]string{"e2e", "--output-dir", "x"}, "--report-dir"},
		{[]string{"--version"}, "winconform version"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// Shell completion of values: suites and labels from the suite binary's
// dry run, claims from the catalogue, outcomes (cobra's __complete is what
// the shells' completion scripts call).
func TestCompletionOfValues(t *testing.T) {
	bin, _ := fakeSuiteBinary(t, 2)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "e2e", "--suite-binary", bin, "--suite", ""}, []string{"networking"}},
		{[]string{"__complete", "list", "--suite-binary", bin, "--labels", ""}, []string{"os:windows", "claim:NET-01"}},
		{[]string{"__complete", "e2e", "--claim", "NET-01,NET-0"}, []string{"NET-01,NET-02"}},
		{[]string{"__complete", "results", "dir", "--outcome", "f"}, []string{"failed"}},
	} {
		_, out, stderr := runCLI(t, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("%q completes to:\n%s%s\nwant %s", tc.args, out, stderr, w)
			}
		}
	}
}
