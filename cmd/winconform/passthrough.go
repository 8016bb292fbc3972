package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/framework/e2e"
)

// The pass-through contract (docs/running.md): after --, only the suite
// binary's own flags, and of those not the ones the harness sets itself.
// The suite binary's flags are not listed here: suiteFlagSet builds them as
// the suite binary does, so a flag added to the suites is accepted at once.

// suiteFlagSet is the suite binary's flag set, built as its TestMain builds
// it: the flags its packages register on flag.CommandLine when they load
// (Ginkgo's, klog's: the CLI links the same packages, through framework/e2e)
// and e2e.RegisterSuiteFlags. Go's testing flags (-test.*), which a test
// binary registers, are left out: the harness runs the suite, not go test.
// The set is for looking flags up, never for parsing: its values are the
// CLI's own (Ginkgo's configuration, klog's verbosity), and the suite
// binary's dry run checks the values.
func suiteFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("e2e.test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !isGoTestFlag(f.Name) {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	e2e.RegisterSuiteFlags(fs)
	return fs
}

func isGoTestFlag(name string) bool { return strings.HasPrefix(name, "test.") }

// harnessFlag is what the harness does with a suite flag it sets itself:
// use is the harness's flag that sets it, why what the suite's own would do
// wrong.
type harnessFlag struct{ use, why string }

// harnessOwned are the suite flags the harness sets, by their names in the
// suite binary (an alias, such as Ginkgo's deprecated camelCase names, is
// found by its value: see owner).
var harnessOwned = map[string]harnessFlag{
	"kubeconfig":              {"--kubeconfig", "the harness reaches, marks and sweeps the cluster it names"},
	"report-dir":              {"--report-dir", "the harness reads, checks and moves aside the report there"},
	"report-prefix":           {"--report-dir", "the harness names the run's reports"},
	"ginkgo.junit-report":     {"--junit-file", "the harness writes the run's JUnit file from its record, into --report-dir and --junit-file"},
	"ginkgo.json-report":      {"--report-dir", "the harness writes the run's Ginkgo JSON into --report-dir; a dry run or --check would write one of specs that never ran"},
	"ginkgo.gojson-report":    {"--report-dir", "the harness writes the run's reports from its record; a dry run or --check would write one of specs that never ran"},
	"ginkgo.teamcity-report":  {"--report-dir", "the harness writes the run's reports from its record; a dry run or --check would write one of specs that never ran"},
	"ginkgo.timeout":          {"--timeout", "the harness sets the suite's time limit (24h on a lab), and a second one would be dropped"},
	"ginkgo.dry-run":          {"--dry-run", "the suite binary's own dry run would report every spec passed (winconform list prints the selection too)"},
	"ginkgo.focus":            {"--claim, --suite or --labels", "the harness selects the specs, and focuses a rerun on the failed ones"},
	"ginkgo.skip":             {"--labels (e.g. '!claim:NET-03')", "the harness selects the specs"},
	"ginkgo.focus-file":       {"--suite or --labels", "the harness selects the specs"},
	"ginkgo.skip-file":        {"--suite or --labels", "the harness selects the specs"},
	"ginkgo.label-filter":     {"--labels", "the harness joins it with --suite and --claim; a second filter would be dropped"},
	"suite":                   {"--suite", "the harness checks it and names the run by it"},
	"claim":                   {"--claim", "the harness checks it against the claim catalogue"},
	"ginkgo.flake-attempts":   {"--flake-attempts", "the harness passes Ginkgo's retries on and reports a spec that passed on a retry as flaky, with its first failure"},
	"ginkgo.parallel.process": {"--procs", "the harness runs the parallel processes"},
	"ginkgo.parallel.total":   {"--procs", "the harness runs the parallel processes"},
	"ginkgo.parallel.host":    {"--procs", "the harness runs the parallel processes"},
	"ginkgo.no-color":         {"--no-color", "the harness decides the colour of its output and the suite's"},
	"run-id":                  {"--run-id", "the harness claims the run's ID in the cluster and sweeps by it"},
	"run-started":             {"--run-id", "the harness sets when the run started, with its ID"},
	"junit-property":          {"--junit-property", "the harness checks the properties and writes the JUnit file"},
	"rerun-of":                {"--rerun-failed", "the harness reads the report to rerun and focuses on its failed specs"},
	"inventory":               {"--inventory", "the harness checks the inventory and climbs the underlay with its machines"},
	"kwok-binary":             {"--kwok-binary", "the harness passes kwok when it exists"},
	"probe-binary":            {"--probe", "the harness loads the probe into the cluster and passes it"},
	"windows-artifacts":       {"", "the harness passes where winconform join wrote its reports, _output/windows"},
	"list-tests":              {"winconform list", "the suite binary would print and run nothing, and the run would report nothing"},
	"list-labels":             {"winconform list", "the suite binary would print and run nothing, and the run would report nothing"},
	"list-images":             {"winconform images list", "the suite binary would print and run nothing, and the run would report nothing"},
}

// usableIn says whether cmd has the harness's flag h names (another
// command, such as winconform list, always is).
func (h harnessFlag) usableIn(cmd *cobra.Command) bool {
	if h.use == "" {
		return false
	}
	first, ok := strings.CutPrefix(strings.Fields(h.use)[0], "--")
	return !ok || cmd.Flags().Lookup(strings.TrimSuffix(first, ",")) != nil
}

// owner is the harness's flag that sets the suite flag f: f itself, or an
// alias of it (another name for the same value), is in harnessOwned.
func owner(fs *flag.FlagSet, f *flag.Flag) (harnessFlag, bool) {
	if h, ok := harnessOwned[f.Name]; ok {
		return h, true
	}
	for name, h := range harnessOwned {
		if o := fs.Lookup(name); o != nil && o.Value == f.Value {
			return h, true
		}
	}
	return harnessFlag{}, false
}

// checkPassThrough refuses arguments after -- that break the contract: a
// word that is not a flag (the suite binary would stop reading its flags
// there, and run every spec), a flag the suite binary does not have, a
// flag the harness sets itself (named with the harness's flag to use), a
// flag without its value. It reads args as the suite binary's flag package
// would: -flag and --flag, -flag=value and -flag value, a boolean flag
// taking no separate value. Nothing is run or written.
func checkPassThrough(cmd *cobra.Command, args []string) error {
	fs := suiteFlagSet()
	fix := fmt.Sprintf("the suite binary's flags go after --; the selection is %s --suite, --claim or --labels", cmd.CommandPath())
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return fmt.Errorf("-- %s: a second --: the suite binary would stop reading its flags there (%s)", strings.Join(args[:i+1], " "), fix)
		}
		if len(a) < 2 || a[0] != '-' {
			return fmt.Errorf("-- %s: %q is not a flag: the suite binary would stop reading its flags there and run every spec; to run one area: %s %s (or --suite %s), for specs by claim or label: --claim, --labels", strings.Join(args[:i+1], " "), a, cmd.CommandPath(), areaName(a), areaName(a))
		}
		name := strings.TrimPrefix(a[1:], "-")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return fmt.Errorf("-- %s: bad flag syntax (want -name, --name, --name=value)", a)
		}
		name, _, hasValue := strings.Cut(name, "=")
		if isGoTestFlag(name) {
			return fmt.Errorf("-- %s: Go's testing flags are not passed on: the harness runs the suite binary, with --timeout, --procs and the selection (%s)", a, fix)
		}
		f := fs.Lookup(name)
		if f == nil {
			return fmt.Errorf("-- %s: the suite binary has no flag -%s (its flags: %s --help; %s's own flags go before --)", a, name, harnessBinary(cmd), cmd.CommandPath())
		}
		if h, ok := owner(fs, f); ok {
			if !h.usableIn(cmd) {
				return fmt.Errorf("-- %s: the harness sets -%s itself (%s)", a, name, h.why)
			}
			use := h.use
			if strings.HasPrefix(use, "--") {
				use = cmd.CommandPath() + " " + use
			}
			return fmt.Errorf("-- %s: the harness sets -%s itself: use %s instead (%s)", a, name, use, h.why)
		}
		// A value is the suite binary's to check (its dry run does).
		if hasValue {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 == len(args) {
			return fmt.Errorf("-- %s: the flag needs a value, e.g. --%s=VALUE", a, name)
		}
		i++ // the value
	}
	return nil
}

// harnessBinary is how a refusal names the suite binary.
func harnessBinary(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("suite-binary"); f != nil {
		return f.Value.String()
	}
	return "e2e.test"
}
