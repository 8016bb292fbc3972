package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/winconform/winconform/internal/suiterun"
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
// in which the specs the selection leaves out are skipped
// (suiterun.DryRun). The suite's own refusal (an unknown SUITE or claim, a
// bad filter, an unknown flag) becomes the error; so does a selection that
// matches no spec (reports.CheckSelected).
func selected(ctx context.Context, binary string, args []string) (types.Report, error) {
	r, err := suiterun.DryRun(ctx, binary, args)
	if err != nil {
		return r, err
	}
	return r, reports.CheckSelected(r, args)
}
