package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/reports/html"
)

func reportCmd() *cobra.Command {
	var (
		dir, browser string
		shot         bool
		timeout      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "report --report DIR [--screenshot]",
		Short: "Write report.html (one self-contained page) for a run's report directory, and with --screenshot report.png",
		Long: `report renders the report directory's files (summary, cluster, network matrix,
limitation ledger, and the gate's decisions and the baseline diff when they
are there) as report.html: one file with inline CSS and script, that loads
nothing. --screenshot also renders the whole page in headless Chromium into
report.png; a report.png already there is taken again whenever the page is
written (here, by gate and by diff), or removed where it cannot be.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return unusable{fmt.Errorf("report needs --report DIR (a run's report directory)")}
			}
			// An older report.png is taken again; where it cannot be, it is
			// removed (and, with --screenshot, taken below or said why not).
			switch err := html.WriteHTML(dir); {
			case errors.Is(err, html.ErrScreenshotRemoved):
				if !shot {
					fmt.Fprintln(cmd.ErrOrStderr(), "winconform:", err)
				}
			case err != nil:
				return unusable{err}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", filepath.Join(dir, html.File))
			if shot {
				if err := html.Screenshot(cmd.Context(), dir, browser, timeout); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "wrote", filepath.Join(dir, html.ScreenshotFile))
			}
			return nil
		},
	}
	cmd.Flags().Var(flagvalue.Name(&dir, "", "a run's report directory"), "report", "the run's report directory (required)")
	cmd.Flags().BoolVar(&shot, "screenshot", false, "also render the whole page in headless Chromium into report.png")
	cmd.Flags().Var(flagvalue.Program(&browser, "", "the Chromium binary's path (or leave --browser out to look for chromium, chromium-browser or google-chrome on PATH)"), "browser",
		"the Chromium binary (default: chromium, chromium-browser or google-chrome on PATH; none there is a failure of the host, exit 1)")
	cmd.Flags().Var(flagvalue.Duration(&timeout, 2*time.Minute, 0, "", "2m"), "screenshot-timeout", "how long Chromium may take")
	return cmd
}
