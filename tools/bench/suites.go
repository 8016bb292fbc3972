package main

import (
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
	"github.com/winconform/winconform/reports/rundir"
)

// maxProcs bounds --procs, as winconform e2e bounds its own.
const maxProcs = 32

func suitesCmd(w *winconform) *cobra.Command {
	var (
		name, reportDir string
		procs           int
		was             wasFigures
	)
	cmd := &cobra.Command{
		Use:   "suites [-- winconform e2e flags]",
		Short: "Time the whole suite on a ready local cluster, serially and in parallel processes, and print the ratio",
		Long: `Brings the local cluster up (winconform up --name, made or reused), then runs
"winconform e2e --kubeconfig" on it twice, serially and in --procs parallel
processes, with the e2e flags given after -- (a selection: --suite,
--label-filter, --claim...), and prints the wall times, their ratio, each as
a ratio to the figures it replaces (--was-serial, --was-parallel) and
against the targets (150 s serially, 90 s in 2 processes, on 2 cores), and
the ten slowest specs of the serial run with their share of its summed spec
time (from each run's record). Failures do not stop the benchmark: their
runs are timed and said so. The figures go to bench-suites.json in
--report-dir too, each run's reports to procs-N beside it.`,
		RunE: func(cmd *cobra.Command, extra []string) error {
			ctx, log := cmd.Context(), cmd.ErrOrStderr()
			// The selection and the suite flags are checked before any
			// cluster work, by the command that takes them.
			if err := w.must(ctx, log, append([]string{"e2e", "--check"}, extra...)...); err != nil {
				return err
			}
			if err := os.MkdirAll(reportDir, 0o755); err != nil {
				return err
			}
			kubeconfig, err := filepath.Abs(filepath.Join(reportDir, "kubeconfig"))
			if err != nil {
				return err
			}
			up := []string{"up", "--kubeconfig-out", kubeconfig}
			if name != "" {
				up = append(up, "--name", name)
			}
			if err := w.must(ctx, log, up...); err != nil {
				return err
			}
			var ts []suiteTiming
			for _, n := range []int{1, procs} {
				dir := filepath.Join(reportDir, fmt.Sprintf("procs-%d", n))
				os.RemoveAll(dir)
				args := append([]string{"e2e", "--kubeconfig", kubeconfig, "--procs", strconv.Itoa(n), "--report-dir", dir}, extra...)
				var code int
				took, err := timeIt(func() (err error) { code, err = w.run(ctx, log, args...); return err })
				if err != nil {
					return err
				}
				t := suiteTiming{Procs: n, Took: took, Result: runResult(code)}
				if run, lerr := rundir.Load(dir); lerr == nil {
					t.Specs = run.Specs
				}
				ts = append(ts, t)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			if err := atomicfile.WriteJSON(filepath.Join(reportDir, "bench-suites.json"), ts); err != nil {
				return err
			}
			return printSuitesBench(cmd.OutOrStdout(), ts, was)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the local cluster to make or reuse (default: the embedded default's)")
	cmd.Flags().Var(flagvalue.Dir(&reportDir, filepath.Join("_output", "bench-suites"), "the bench's report directory"), "report-dir", "where bench-suites.json and each run's reports go")
	cmd.Flags().Var(flagvalue.Int(&procs, 2, 2, maxProcs, "the parallel side's processes"), "procs", "parallel processes of the parallel side (the targets are for 2)")
	cmd.Flags().Var(flagvalue.Duration(&was.serial, 289*time.Second, 0, "", "289s"), "was-serial", "the serial time to compare with: the serial time measured before the waits were cut")
	cmd.Flags().Var(flagvalue.Duration(&was.parallel, 179*time.Second, 0, "", "179s"), "was-parallel", "the parallel time to compare with: the time for 2 processes measured before the waits were cut")
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

// runResult says what winconform e2e's exit status means for the timing:
// 1 is a run whose specs failed (see winconform's exit statuses), still a
// run; any other status is no run.
func runResult(code int) string {
	switch code {
	case 0:
		return "passed"
	case 1:
		return "failed (timed anyway)"
	default:
		return fmt.Sprintf("error: winconform e2e exit status %d", code)
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
