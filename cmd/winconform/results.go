package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// specResults are the results a spec can have (reports.Spec.Result).
var specResults = []string{reports.SpecPassed, reports.SpecFailed, reports.SpecBlocked, reports.SpecInterrupted,
	reports.SpecNeverRan, reports.SpecSkipped, reports.SpecInconclusive}

func resultsCmd() *cobra.Command {
	var outcome string
	cmd := &cobra.Command{
		Use:   "results DIR [--outcome OUTCOME]",
		Short: "Show a run's report directory in the terminal: its status, the claims and the specs that did not pass",
		Long: `results reads a run's record (its report directory) and prints the run's
status and headline, every claim with its outcome and why, and the specs that
failed, were blocked, interrupted or never ran, or passed only on a retry
(flaky, with their first failure). --outcome keeps only the
claims with that outcome and the specs with that result (failed, blocked,
interrupted, drift, shown, inconclusive, supported, skipped, not run, not
covered; passed, never ran).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outcome != "" {
				known := slices.Concat(reports.Outcomes, specResults)
				if !slices.Contains(known, outcome) {
					fix := config.DidYouMean(outcome, known)
					slices.Sort(known)
					return usage(fmt.Errorf("--outcome %q: %sthe outcomes are %s", outcome, fix, strings.Join(slices.Compact(known), ", ")))
				}
			}
			run, err := rundir.Load(args[0])
			if err != nil {
				return unfinished(cmd.OutOrStdout(), err)
			}
			return writeResults(cmd.OutOrStdout(), args[0], run.Summary, outcome)
		},
	}
	cmd.Flags().StringVar(&outcome, "outcome", "", "only the claims with this outcome and the specs with this result, e.g. failed")
	_ = cmd.RegisterFlagCompletionFunc("outcome", cobra.FixedCompletions(reports.Outcomes, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// unfinished says that a report directory's run did not end (killed
// before the end, or still running), and no verdict: exit status 1.
func unfinished(out io.Writer, err error) error {
	var u *rundir.Unfinished
	if !errors.As(err, &u) {
		return usage(err)
	}
	fmt.Fprintln(out, err)
	return exitCode(exitFailed)
}

// writeResults prints a summary for a terminal: the status, the headline,
// the claims and the specs that did not pass (or those of one outcome).
func writeResults(out io.Writer, dir string, s reports.Summary, outcome string) error {
	fmt.Fprintf(out, "%s: %s\n%s\n", dir, s.Status, s.Headline)
	if len(s.Violations) > 0 {
		fmt.Fprintln(out, "\nthe record breaks its contract (docs/record.md), so it decides nothing:")
		for _, v := range s.Violations {
			fmt.Fprintf(out, "  %s\n", v)
		}
	}
	if s.Cluster.Known && s.Cluster.PreRelease {
		fmt.Fprintf(out, "cluster: %s\n", s.Cluster.Kubernetes())
	}
	for _, u := range s.Cluster.Uncounted {
		fmt.Fprintf(out, "not counted: %s\n", u)
	}
	if s.RunID != "" {
		fmt.Fprintf(out, "run %s", s.RunID)
		if s.Rerun != "" {
			fmt.Fprintf(out, ", rerunning %s", s.Rerun)
		}
		fmt.Fprintln(out)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	claims := 0
	for _, c := range s.Claims {
		if outcome != "" && c.Outcome != outcome {
			continue
		}
		if claims == 0 {
			fmt.Fprintln(w, "\nCLAIM\tOUTCOME\tNEEDS\tSHOWN BY\tWHY")
		}
		claims++
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Outcome, c.Level, c.ShownBy(), reports.Cell(text.FirstLine(c.Why), 100))
	}
	specs := 0
	for _, sp := range s.Specs {
		flake, flaky := s.Flake(sp.Name)
		switch {
		case outcome != "" && sp.Result != outcome:
			continue
		case outcome == "" && !flaky && !slices.Contains([]string{reports.SpecFailed, reports.SpecBlocked, reports.SpecInterrupted, reports.SpecNeverRan}, sp.Result):
			continue
		}
		if specs == 0 {
			fmt.Fprintln(w, "\nRESULT\tSECONDS\tSPEC\tWHY")
		}
		specs++
		why := text.FirstLine(sp.Message)
		if why == "" && sp.SkipReason != "" {
			why = sp.SkipReason
		}
		if sp.Artifacts != "" {
			why += " (artifacts: " + sp.Artifacts + ")"
		}
		result := sp.Result
		if flaky { // passed on a retry: named, with its first failure and its bundle
			result, why = "passed (flaky)", flake.Note()
			if flake.Artifacts != "" {
				why += " (artifacts: " + flake.Artifacts + ")"
			}
		}
		fmt.Fprintf(w, "%s\t%.1f\t%s\t%s\n", result, sp.Seconds, sp.Name, reports.Cell(why, 160))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case outcome != "" && claims+specs == 0:
		fmt.Fprintf(out, "\nno claim or spec is %s\n", outcome)
	case outcome == "" && specs == 0:
		fmt.Fprintln(out, "\nno spec failed, was blocked, interrupted or left unrun")
	}
	return nil
}
