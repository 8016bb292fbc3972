package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/reports"
)

// suiteArgs splits a command line into its positional suite and the suite
// binary's flags (after --). As in Ginkgo's `ginkgo run ./networking`, an
// argument before -- names the area to run: `winconform e2e networking` is
// `winconform e2e --suite networking` (suites/networking and
// ./suites/networking too). One area at a time, as --suite; anything else
// before -- is refused, never passed on (the suite binary would stop reading
// its flags there and run everything). The suite binary's dry run checks
// the area (unknownSuite adds how it was named). What follows -- keeps the
// pass-through contract (checkPassThrough).
func suiteArgs(cmd *cobra.Command, args []string, rf *runFlags) ([]string, error) {
	before, after := args, []string(nil)
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		before, after = args[:dash], args[dash:]
	}
	if err := checkPassThrough(cmd, after); err != nil {
		return nil, usage(err)
	}
	switch {
	case len(before) == 0:
		return after, nil
	case len(before) > 1:
		return nil, usage(fmt.Errorf("%q: one suite at a time (as --suite); for several, a label filter: --labels 'suite:%s || suite:%s'; suite binary flags go after --, e.g. %s -- --strict-drift",
			strings.Join(before, " "), areaName(before[0]), areaName(before[1]), cmd.CommandPath()))
	case rf.suite != "":
		return nil, usage(fmt.Errorf("%q and --suite %q: name the suite once", before[0], rf.suite))
	}
	rf.suite, rf.positional = areaName(before[0]), before[0]
	return after, nil
}

// unknownSuite explains a suite the dry run refused that came from an
// argument before --.
func (r *runFlags) unknownSuite(err error) error {
	if err == nil || r.positional == "" || !strings.HasPrefix(err.Error(), "unknown SUITE") {
		return err
	}
	return fmt.Errorf("%w (the argument %q before -- is the suite to run, as --suite; suite binary flags go after --)", err, r.positional)
}

// areaName is the area a positional argument names: "networking",
// "suites/networking", "./suites/networking/".
func areaName(arg string) string {
	a := strings.TrimSuffix(strings.TrimPrefix(arg, "./"), "/")
	return strings.TrimPrefix(a, "suites/")
}

// takeFlag removes the suite flag name (--name=value, --name value, with
// one dash or two) from args and returns its last value.
func takeFlag(args []string, name string) (rest []string, value string, found bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		switch {
		case a == flag:
			rest = append(rest, a) // not a flag
		case flag == name && i+1 < len(args):
			value, found = args[i+1], true
			i++
		case strings.HasPrefix(flag, name+"="):
			value, found = strings.TrimPrefix(flag, name+"="), true
		default:
			rest = append(rest, a)
		}
	}
	return rest, value, found
}

// hasFlag says whether args set one of the suite flags names.
func hasFlag(args []string, names ...string) bool {
	for _, a := range args {
		flag, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if a != flag && slices.Contains(names, flag) {
			return true
		}
	}
	return false
}

// checkSelection dry-runs the suite binary with args (the selection and
// any suite flags) and returns how many specs would run (see selected).
func checkSelection(ctx context.Context, binary string, args []string) (int, error) {
	r, err := selected(ctx, binary, args)
	return r.PreRunStats.SpecsThatWillRun, err
}

// selected dry-runs the suite binary with args and returns its report,
// in which the specs the selection leaves out are skipped. The suite's own
// refusal (an unknown SUITE or claim, a bad filter, an unknown flag)
// becomes the error; so does a selection that matches no spec, with the
// labels of the filter that no spec has.
func selected(ctx context.Context, binary string, args []string) (types.Report, error) {
	r, err := dryRun(ctx, binary, args)
	if err != nil || r.PreRunStats.SpecsThatWillRun > 0 {
		return r, err
	}
	msg := fmt.Sprintf("the selection %s matches none of the %d specs", strings.Join(args, " "), r.PreRunStats.TotalSpecs)
	if hint := labelHint(args, reports.Specs(r)); hint != "" {
		msg += ": " + hint
	}
	return r, errors.New(msg + " (`make list` lists every spec with its labels)")
}

// labelRe finds the labels a Ginkgo label filter names: its words, outside
// /regular expressions/.
var (
	labelRe  = regexp.MustCompile(`[^&|!,()\s/]+`)
	regexpRe = regexp.MustCompile(`/[^/]*/`)
)

// labelHint says which labels of the label filters in args no spec has,
// with the nearest one that some spec has.
func labelHint(args []string, specs []reports.Listed) string {
	var known []string
	for _, s := range specs {
		known = append(known, s.Labels...)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	var hints []string
	for _, a := range args {
		filter, ok := strings.CutPrefix(a, "--ginkgo.label-filter=")
		if !ok {
			continue
		}
		for _, l := range labelRe.FindAllString(regexpRe.ReplaceAllString(filter, " "), -1) {
			if slices.Contains(known, l) {
				continue
			}
			h := "no spec has the label " + l
			if dym := config.DidYouMean(l, known); dym != "" {
				h += " (" + strings.TrimSpace(dym) + ")"
			}
			hints = append(hints, h)
		}
	}
	return strings.Join(slices.Compact(hints), "; ")
}

// dryRun runs the suite binary's dry run with args and returns its report;
// the suite's own one-line error (an unknown SUITE or claim, an unknown
// flag) becomes the error.
func dryRun(ctx context.Context, binary string, args []string) (types.Report, error) {
	if _, err := os.Stat(binary); err != nil {
		return types.Report{}, fmt.Errorf("suite binary %s: %v (build it with `make build`)", binary, err)
	}
	tmp, err := os.MkdirTemp("", "winconform-dry-run-")
	if err != nil {
		return types.Report{}, err
	}
	defer os.RemoveAll(tmp)
	report := filepath.Join(tmp, "dry-run.json")
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	full := append([]string{"--ginkgo.dry-run", "--ginkgo.no-color", "--ginkgo.silence-skips", "--ginkgo.json-report=" + report}, args...)
	out, err := exec.CommandContext(ctx, binary, full...).CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return types.Report{}, fmt.Errorf("dry run of %s: %w", binary, context.Cause(ctx))
		}
		return types.Report{}, selectionError(binary, string(out), err)
	}
	r, err := reports.ReadReport(report)
	if err != nil {
		return types.Report{}, fmt.Errorf("dry run of %s: %w", binary, err)
	}
	return r, nil
}

// selectionError is the one line of the suite binary's output that says
// why it refused its arguments.
func selectionError(binary, out string, err error) error {
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if msg, ok := strings.CutPrefix(l, "winconform e2e: "); ok {
			return errors.New(msg)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "flag provided but not defined") || strings.Contains(l, "invalid value") || strings.Contains(l, "invalid boolean") {
			return fmt.Errorf("suite flags: %s (the suite binary's flags: %s --help)", strings.TrimSpace(l), binary)
		}
	}
	return fmt.Errorf("%s refused the selection: %v: %s", binary, err, text.LastLines(out, 5))
}
