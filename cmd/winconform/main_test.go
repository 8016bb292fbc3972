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
		{"a suite flag typo", 5, []string{"--", "--bogus"}, []string{"suite flags: flag provided but not defined: -bogus"}},
		{"the CLI's own flag after --", 5, []string{"--", "--kubeconfig=/x"}, []string{"give them before --"}},
		{"procs not a number", 5, []string{"--procs", "four"}, []string{`--procs (PROCS) "four" is not a number`}},
		{"an inventory with a typo", 5, []string{"--inventory", inv}, []string{"--inventory", inv}},
		{"a missing kubeconfig", 5, []string{"--kubeconfig", "/nonexistent/kubeconfig"}, []string{"--kubeconfig /nonexistent/kubeconfig", "no such file"}},
		{"a bad label filter", 5, []string{"--labels", "os:linux && ("}, []string{"not a Ginkgo label filter"}},
		{"an unknown claim", 5, []string{"--claim", "NET-999"}, []string{`unknown claim "NET-999"`}},
		{"a negative timeout", 5, []string{"--timeout", "-1h"}, []string{"--timeout -1h0m0s: want a positive duration"}},
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

// Usage errors exit 2 wherever they are; the last line names the command.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"version", "extra"}, {"gate", "--bogus"}, {"results"}, {"version", "-o", "yaml"}} {
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || strings.Contains(stderr, "exit status") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
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
	if code := exitStatus(context.Background(), "winconform up", errors.New("docker CLI not found"), &errb); code != exitFailed || errb.String() != "winconform up: docker CLI not found\n" {
		t.Errorf("a failure: %d %q", code, errb.String())
	}
}
