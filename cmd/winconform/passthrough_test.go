package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/internal/suiterun"
)

// passThroughForms are the ways Go's flag package reads a flag with a
// value: --name=value, --name value, -name=value, -name value. @F stands
// for a file in the test's directory.
func passThroughForms(name, value string) [][]string {
	return [][]string{
		{"--" + name + "=" + value}, {"--" + name, value},
		{"-" + name + "=" + value}, {"-" + name, value},
	}
}

// After --, only the suite binary's own flags, never the harness's: each
// hostile argument, in every form Go's flag package reads, is refused with
// exit status 2 and the harness's flag to use, before the suite binary is
// run (no dry run, so no report file written) and before any cluster work
// (issue 38: `e2e --check -- --ginkgo.junit-report=F` wrote F with 150
// passed test cases; `--timeout 1h -- --ginkgo.timeout=2h` dropped 2h;
// `e2e --check -- networking` selected every spec).
func TestPassThroughContract(t *testing.T) {
	type hostile struct {
		kind string
		args []string // after --; @F is a file in the test's directory
		want []string
	}
	var cases []hostile
	// Flags the harness owns, with a value, in the four forms.
	for _, o := range []struct{ name, value, want string }{
		{"ginkgo.junit-report", "@F", "--junit-file"},
		{"ginkgo.json-report", "@F", "--report-dir"},
		{"ginkgo.teamcity-report", "@F", "--report-dir"},
		{"report-dir", "@F", "--report-dir"},
		{"report-prefix", "x", "--report-dir"},
		{"ginkgo.timeout", "2h", "--timeout"},
		{"ginkgo.focus", "NET-03", "--claim, --suite or --labels"},
		{"ginkgo.skip", "Serial", "--labels"},
		{"ginkgo.label-filter", "os:windows", "--labels"},
		{"ginkgo.focus-file", "@F", "--suite or --labels"},
		{"ginkgo.skip-file", "@F", "--suite or --labels"},
		{"ginkgo.flake-attempts", "3", "--flake-attempts"},
		{"ginkgo.gojson-report", "@F", "--report-dir"},
		{"ginkgo.reportFile", "@F", "--junit-file"},       // Ginkgo's old name of junit-report
		{"ginkgo.flakeAttempts", "3", "--flake-attempts"}, // Ginkgo's deprecated name: an alias
		{"suite", "networking", "--suite"},
		{"claim", "NET-03", "--claim"},
		{"kubeconfig", "@F", "--kubeconfig"},
		{"run-id", "wc-1", "--run-id"},
		{"junit-property", "a=b", "--junit-property"},
		{"rerun-of", "@F", "--rerun-failed"},
		{"inventory", "@F", "--inventory"},
		{"ginkgo.parallel.total", "4", "--procs"},
	} {
		for _, f := range passThroughForms(o.name, o.value) {
			cases = append(cases, hostile{"harness's flag", f, []string{"the harness sets -" + o.name + " itself", o.want}})
		}
	}
	// Boolean flags the harness owns.
	for _, o := range []struct{ name, want string }{
		{"ginkgo.dry-run", "--dry-run"},
		{"ginkgo.dryRun", "--dry-run"},
		{"ginkgo.no-color", "--no-color"},
		{"list-tests", "winconform list"},
		{"list-images", "winconform images list"},
	} {
		for _, f := range [][]string{{"--" + o.name}, {"-" + o.name}, {"--" + o.name + "=true"}} {
			cases = append(cases, hostile{"harness's flag", f, []string{"the harness sets -" + o.name + " itself", o.want}})
		}
	}
	// Words that are not flags: the suite binary would stop there.
	for _, w := range [][]string{{"networking"}, {"--strict-drift", "storage"}, {"suites/networking"}, {"-"}, {"--allow-flaky", "NET-03"}} {
		cases = append(cases, hostile{"bare word", w, []string{"is not a flag", "--suite", "run every spec"}})
	}
	// Flags the suite binary does not have, Go's testing flags, bad syntax.
	for _, u := range [][]string{{"--bogus"}, {"-bogus=1"}, {"--focus", "x"}, {"--timeout=2h"}, {"--help"}, {"-h"}, {"--ginkgo.must-pass-repeatedly=3"}} {
		cases = append(cases, hostile{"unknown flag", u, []string{"the suite binary has no flag", "--help"}})
	}
	for _, g := range [][]string{{"-test.timeout=1m"}, {"--test.run", "X"}, {"-test.count=2"}} {
		cases = append(cases, hostile{"go test flag", g, []string{"Go's testing flags are not passed on"}})
	}
	for _, b := range [][]string{{"---x"}, {"--=x"}, {"-=1"}} {
		cases = append(cases, hostile{"bad syntax", b, []string{"bad flag syntax"}})
	}
	cases = append(cases,
		hostile{"second --", []string{"--strict-drift", "--", "--ginkgo.v"}, []string{"a second --"}},
		hostile{"missing value", []string{"--strict-drift", "--provider"}, []string{"needs a value"}},
	)

	counts := map[string]int{}
	for _, tc := range cases {
		counts[tc.kind]++
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			bin, calls := fakeSuiteBinary(t, 5)
			dir := t.TempDir()
			file := filepath.Join(dir, "F")
			args := slices.Clone(tc.args)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "@F", file)
			}
			for _, cmd := range [][]string{{"e2e", "--check"}, {"e2e", "--dry-run"}, {"e2e", "--timeout", "1h"}, {"sonobuoy", "plugin"}} {
				line := append(append(slices.Clone(cmd), "--suite-binary", bin, "--report-dir", filepath.Join(dir, "report"), "--"), args...)
				if cmd[0] == "sonobuoy" {
					line = append(append(slices.Clone(cmd), "--suite-binary", bin, "-o", filepath.Join(dir, "plugin.yaml"), "--"), args...)
				}
				code, stdout, stderr := runCLI(t, line...)
				if code != exitUsage {
					t.Errorf("%s: exit %d, want 2; stderr %q", cmd, code, stderr)
				}
				want := tc.want
				if cmd[0] == "sonobuoy" && tc.kind == "harness's flag" {
					want = want[:1] // the plugin has no such flag: the harness sets it in the cluster
				}
				for _, w := range want {
					if !strings.Contains(stderr, w) {
						t.Errorf("%s: stderr lacks %q: %q", cmd, w, stderr)
					}
				}
				if strings.Count(strings.TrimSpace(stderr), "\n") > 0 || stdout != "" {
					t.Errorf("%s: want one line, got stdout %q stderr %q", cmd, stdout, stderr)
				}
				if got := calls(); got != nil {
					t.Errorf("%s: the suite binary ran: %q", cmd, got)
				}
				if entries, _ := os.ReadDir(dir); len(entries) > 0 {
					t.Errorf("%s: written: %v", cmd, entries)
				}
			}
		})
	}
	t.Logf("hostile pass-through arguments by kind: %v", counts)
}

// The suite binary's flags that are not the harness's pass, in every form,
// with their values, and reach the dry run: the allowed set is the suite
// binary's (e2e.RegisterSuiteFlags and what its packages register when
// they load), never a list kept here.
func TestPassThroughAllowsTheSuiteBinarysFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--strict-drift"}, {"-allow-flaky"}, {"--disruptive=true"},
		{"--provider", "skeleton"}, {"-node-os-distro=windows"}, {"--ginkgo.v"}, {"-ginkgo.seed", "7"},
		{"--ginkgo.poll-progress-after=1m", "--e2e-verify-service-account=false"}, {"--v=4"},
		{"--progress-report-url", "http://localhost:8099/progress"},
	} {
		bin, calls := fakeSuiteBinary(t, 5)
		code, _, stderr := runCLI(t, append([]string{"e2e", "--suite-binary", bin, "--check", "--"}, args...)...)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
			continue
		}
		if args[0] != "--progress-report-url" && !slices.Contains(calls(), args[0]) {
			t.Errorf("%q: the dry run got %q", args, calls())
		}
	}

	// Every flag e2e.RegisterSuiteFlags adds that the harness does not set
	// passes: a flag added there is accepted with no change here.
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	e2e.RegisterSuiteFlags(fs)
	all := suiteFlagSet()
	fs.VisitAll(func(f *flag.Flag) {
		if _, owned := owner(all, all.Lookup(f.Name)); owned {
			return
		}
		if err := checkPassThrough(e2eCmd(), []string{"--" + f.Name + "=" + f.DefValue}); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	})
	// A flag a package of the suite binary registers when it loads, as
	// Ginkgo's and klog's are, is accepted too.
	flag.CommandLine.String("winconform-test-new-suite-flag", "", "registered as a suite package would")
	if err := checkPassThrough(e2eCmd(), []string{"--winconform-test-new-suite-flag", "x"}); err != nil {
		t.Errorf("a newly registered flag: %v", err)
	}
}

// The harness's own list names suite flags that exist (a flag renamed in
// Ginkgo or the e2e framework fails here, not silently), and every suite
// flag the harness passes itself is in it: a user's copy would override
// or be overridden by the harness's.
func TestHarnessOwnedFlagsAreTheSuiteBinarysAndTheHarnesss(t *testing.T) {
	fs := suiteFlagSet()
	for name := range harnessOwned {
		if fs.Lookup(name) == nil {
			t.Errorf("harnessOwned has %s, which the suite binary does not have", name)
		}
	}
	rf := runFlags{reportDir: "r", probe: "p", inventory: "i", kwok: os.Args[0], runID: "wc-1", started: time.Now(),
		junitProperties: []string{"a=b"}, rerun: "r", suite: "s", claim: "NET-01", labels: "l", focus: []string{"f"}, progressURL: "http://x"}
	_, serial, _ := suiterun.Options{Binary: "b", Procs: 1, Timeout: time.Hour, FlakeAttempts: 2}.Command()
	for _, a := range append(rf.args("k"), serial...) {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "progress-report-url": // the CLI's listener, which forwards to the user's own
			continue
		case "expect-kubernetes-version", "expect-cert-sans": // from the cluster file, on the local cluster only
			continue
		}
		if f := fs.Lookup(name); f == nil {
			t.Errorf("the harness passes %s, which the suite binary does not have", a)
		} else if _, ok := owner(fs, f); !ok {
			t.Errorf("the harness passes %s, which is not in harnessOwned", a)
		}
	}
}
