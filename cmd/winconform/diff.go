package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/reports/diff"
	"github.com/winconform/winconform/reports/html"
	"github.com/winconform/winconform/reports/rundir"
)

func diffCmd() *cobra.Command {
	var report, baseline, out string
	cmd := &cobra.Command{
		Use:   "diff --baseline DIR --report DIR",
		Short: "Compare a run with a baseline run: claims newly failing and fixed, evidence, matrix cells, ledger verdicts, clusters",
		Long: `diff compares the run in --report with the earlier run in --baseline and writes
diff.md and diff.json into the report directory (or --out); report.html is
rewritten to include it. A baseline of another cluster shape is compared and
said to be so; one of an older report format is refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runDiff(report, baseline, out, cmd.OutOrStdout()); err != nil {
				return unusable{err}
			}
			return nil
		},
	}
	cmd.Flags().Var(flagvalue.Name(&report, "", "a run's report directory"), "report", "the run's report directory (required)")
	cmd.Flags().Var(flagvalue.Name(&baseline, "", "the earlier run's report directory"), "baseline", "the earlier run's report directory (required)")
	cmd.Flags().Var(flagvalue.Dir(&out, "", "diff.md and diff.json"), "out", "where diff.md and diff.json go (default: the report directory)")
	return cmd
}

func runDiff(report, baseline, out string, w io.Writer) error {
	if report == "" || baseline == "" {
		return errors.New("diff needs --report DIR and --baseline DIR (two runs' report directories)")
	}
	cur, err := rundir.Load(report)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	base, err := rundir.Load(baseline)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	if err := rundir.CheckBaseline(base, cur); err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	d := diff.Compare(base, cur)
	if out == "" {
		out = report
	}
	if err := d.Write(out); err != nil {
		return fmt.Errorf("writing the diff into %s: %v", out, err)
	}
	fmt.Fprint(w, d.Markdown())
	written := "diff.md, diff.json"
	if out == report {
		if err := html.WriteHTML(report); errors.Is(err, html.ErrScreenshotRemoved) {
			fmt.Fprintln(w, "winconform:", err)
		} else if err != nil {
			return fmt.Errorf("writing %s: %v", html.File, err)
		}
		written += ", " + html.File
	}
	fmt.Fprintf(w, "\nwritten to %s: %s\n", out, written)
	return nil
}
