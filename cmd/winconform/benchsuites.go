package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/internal/suiterun"
)

func benchSuitesCmd() *cobra.Command {
	var (
		cf    clusterFlags
		rf    runFlags
		procs int
	)
	cmd := &cobra.Command{
		Use:   "suites",
		Short: "Time the whole suite on a ready local cluster, serially and in parallel processes, and print the ratio",
		Long: `Brings the local cluster up (or reuses it), runs every selected spec once
serially and once in --procs parallel processes (Ginkgo's CLI), both on the
ready cluster, and prints the wall times and their ratio. Failures do not
stop the benchmark: their runs are timed and said so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if procs < 2 {
				return usage(fmt.Errorf("--procs=%d: the parallel side needs at least 2 processes", procs))
			}
			n, err := checkSelection(cmd.Context(), rf.binary, rf.selection())
			if err != nil {
				return usage(err)
			}
			rf.specs = n
			res, err := up(cmd, &cf)
			if err != nil {
				return err
			}
			rf.probe = abs(cf.probe)
			rf.kwok = abs(rf.kwok)
			base := rf.reportDir
			type timing struct {
				procs int
				took  time.Duration
				err   error
			}
			var ts []timing
			for _, n := range []int{1, procs} {
				r := rf
				r.procs = strconv.Itoa(n)
				r.reportDir = filepath.Join(base, fmt.Sprintf("procs-%d", n))
				os.RemoveAll(r.reportDir)
				start := time.Now()
				err := runSuite(cmd.Context(), r, res.Kubeconfig, nil, nil)
				ts = append(ts, timing{n, time.Since(start), err})
				if cmd.Context().Err() != nil {
					return cmd.Context().Err()
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "bench suites: the whole selected suite on a ready cluster")
			w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "  PROCESSES\tSECONDS\tRESULT")
			for _, t := range ts {
				status := "passed"
				var exit exitCode
				var rexit suiterun.ExitError
				switch {
				case errors.As(t.err, &exit), errors.As(t.err, &rexit):
					status = "failed (timed anyway)"
				case t.err != nil:
					status = "error: " + t.err.Error()
				}
				fmt.Fprintf(w, "  %d\t%.1f\t%s\n", t.procs, t.took.Seconds(), status)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(out, "  ratio parallel/serial: %.2f (goal: the whole suite in 60 s or less)\n", ts[1].took.Seconds()/ts[0].took.Seconds())
			return nil
		},
	}
	cf.register(cmd)
	rf.register(cmd)
	cmd.Flags().IntVar(&procs, "procs", 4, "parallel processes of the parallel side")
	cmd.Flags().Lookup("report-dir").DefValue = outPath("bench-suites")
	_ = cmd.Flags().Set("report-dir", outPath("bench-suites"))
	return cmd
}
