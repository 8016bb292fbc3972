package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/internal/atomicfile"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/runid"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/reports/rundir"
)

func benchSuitesCmd() *cobra.Command {
	var (
		cf    clusterFlags
		rf    runFlags
		procs int
		was   wasFigures
	)
	cmd := &cobra.Command{
		Use:   "suites",
		Short: "Time the whole suite on a ready local cluster, serially and in parallel processes, and print the ratio",
		Long: `Brings the local cluster up (or reuses it), runs every selected spec once
serially and once in --procs parallel processes (Ginkgo's CLI), both on the
ready cluster, and prints the wall times, their ratio, each as a ratio to the
figures it replaces (--was-serial, --was-parallel) and against the targets
(150 s serially, 90 s in 2 processes, on 2 cores), and the ten slowest specs
of the serial run with their share of its summed spec time (from each run's
Ginkgo report). Failures do not stop the benchmark: their runs are timed and
said so. The figures go to bench-suites.json in the report directory too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			var ts []suiteTiming
			for _, n := range []int{1, procs} {
				// Each timing is a run of its own.
				r := rf
				if r.runID, err = runid.Begin(rf.runID); err != nil {
					return usage(fmt.Errorf("--run-id: %w", err))
				}
				r.procs = strconv.Itoa(n)
				r.reportDir = filepath.Join(base, fmt.Sprintf("procs-%d", n))
				os.RemoveAll(r.reportDir)
				start := time.Now()
				err := runSuite(cmd.Context(), r, res.Kubeconfig, nil, nil)
				t := suiteTiming{Procs: n, Took: time.Since(start), Result: runResult(err)}
				if run, lerr := rundir.Load(r.reportDir); lerr == nil {
					t.Specs = run.Specs
				}
				ts = append(ts, t)
				if cmd.Context().Err() != nil {
					return cmd.Context().Err()
				}
			}
			if err := atomicfile.WriteJSON(filepath.Join(base, "bench-suites.json"), ts); err != nil {
				return err
			}
			return printSuitesBench(cmd.OutOrStdout(), ts, was)
		},
	}
	cf.register(cmd)
	rf.register(cmd)
	cmd.Flags().Var(flagvalue.Int(&procs, 2, 2, maxProcs, "the parallel side's processes"), "procs", "parallel processes of the parallel side (the targets are for 2)")
	cmd.Flags().Var(flagvalue.Duration(&was.serial, 289*time.Second, 0, "", "289s"), "was-serial", "the serial time to compare with: the serial time measured before the waits were cut")
	cmd.Flags().Var(flagvalue.Duration(&was.parallel, 179*time.Second, 0, "", "179s"), "was-parallel", "the parallel time to compare with: the time for 2 processes measured before the waits were cut")
	cmd.Flags().Lookup("report-dir").DefValue = outPath("bench-suites")
	rf.reportDir = outPath("bench-suites")
	return cmd
}

// The targets of the suites' wall time on a ready cluster (2 cores).
const (
	targetSerial   = 150 * time.Second
	targetParallel = 90 * time.Second // in 2 processes
)

// slowestSpecs is how many of the serial run's specs the bench lists.
const slowestSpecs = 10

// wasFigures are the times a bench compares with.
type wasFigures struct{ serial, parallel time.Duration }

// suiteTiming is one timed run of the suites.
type suiteTiming struct {
	Procs  int               `json:"procs"`
	Took   time.Duration     `json:"took"`
	Result string            `json:"result"`
	Specs  []rundir.SpecTime `json:"specs,omitempty"`
}

func runResult(err error) string {
	var exit exitCode
	var rexit suiterun.ExitError
	switch {
	case err == nil:
		return "passed"
	case errors.As(err, &exit), errors.As(err, &rexit):
		return "failed (timed anyway)"
	default:
		return "error: " + err.Error()
	}
}

// printSuitesBench writes the bench's table: ts[0] is the serial run,
// ts[1] the parallel one.
func printSuitesBench(out io.Writer, ts []suiteTiming, was wasFigures) error {
	fmt.Fprintln(out, "bench suites: the whole selected suite on a ready cluster")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  PROCESSES\tSECONDS\tRESULT\tWAS\tNOW/WAS\tTARGET")
	for i, t := range ts {
		before, target := was.serial, targetSerial
		if i > 0 {
			before, target = was.parallel, time.Duration(0)
			if t.Procs == 2 {
				target = targetParallel
			}
		}
		tgt := "-"
		switch {
		case target == 0:
		case t.Result != "passed": // a run that failed or broke off is no figure
			tgt = fmt.Sprintf("%.0f (not judged: the run did not pass)", target.Seconds())
		case t.Took <= target:
			tgt = fmt.Sprintf("%.0f (met)", target.Seconds())
		default:
			tgt = fmt.Sprintf("%.0f (missed)", target.Seconds())
		}
		fmt.Fprintf(w, "  %d\t%.1f\t%s\t%.1f\t%.2fx\t%s\n", t.Procs, t.Took.Seconds(), t.Result, before.Seconds(), t.Took.Seconds()/before.Seconds(), tgt)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(ts) > 1 {
		fmt.Fprintf(out, "  parallel/serial: %.2fx\n", ts[1].Took.Seconds()/ts[0].Took.Seconds())
	}
	serial := ts[0]
	if len(serial.Specs) == 0 {
		fmt.Fprintln(out, "  no spec times: the serial run wrote no Ginkgo report")
		return nil
	}
	n := min(slowestSpecs, len(serial.Specs))
	var sum, top time.Duration
	for i, s := range serial.Specs {
		sum += s.Took
		if i < n {
			top += s.Took
		}
	}
	fmt.Fprintf(out, "  the %d slowest specs of the serial run: %.1f s, %.0f%% of its %.1f s of spec time (%.0f%% of its wall time)\n",
		n, top.Seconds(), 100*top.Seconds()/sum.Seconds(), sum.Seconds(), 100*top.Seconds()/serial.Took.Seconds())
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "    SECONDS\tSHARE\tSTATE\tSPEC")
	for _, s := range serial.Specs[:n] {
		fmt.Fprintf(w, "    %.1f\t%.0f%%\t%s\t%s\n", s.Took.Seconds(), 100*s.Took.Seconds()/sum.Seconds(), s.State, s.Spec)
	}
	return w.Flush()
}
