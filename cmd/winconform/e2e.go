package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"
	"github.com/winconform/winconform/framework/progress"
	"github.com/winconform/winconform/internal/runid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/kubefile"
	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/internal/userfile"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/html"
	"github.com/winconform/winconform/reports/rundir"
)

// runFlags select what the suite binary runs.
type runFlags struct {
	binary    string
	suite     string
	claim     string
	labels    string
	reportDir string
	probe     string
	inventory string
	kwok      string
	// What the local cluster was asked for, for INF-01.
	expectVersion string
	expectSANs    []string
	// procs is the number of parallel processes (--procs, PROCS), ginkgo their runner.
	procs  string
	ginkgo string
	// rerun is a report directory whose failed and interrupted specs to run again.
	rerun string
	// runID names the run's objects in the cluster; started is when it started.
	runID   string
	started time.Time
	// deadAfter is how long a run's heartbeat may be silent before it is
	// dead and its objects swept (this run's heartbeat promises it too).
	deadAfter time.Duration
	// focus are the Ginkgo focus expressions of a rerun.
	focus []string
	// underlay is the underlay check's report, written into the report
	// directory.
	underlay *underlay.Report
	// quiet turns Ginkgo's output down (no -v); noColor keeps colour codes out.
	quiet, noColor bool
	// timeout is the suite's time limit (0: suiteTimeout decides).
	timeout time.Duration
	// flakeAttempts is Ginkgo's --flake-attempts (0, 1: no retry).
	flakeAttempts int
	// specs is how many specs the run selects (the dry run's count);
	// selected is the dry run's report, the selection's specs not skipped.
	specs    int
	selected types.Report
	// positional is the argument before -- that named the suite.
	positional string
	// junitFile is where the run's JUnit file goes too (--junit-file);
	// junitProperties are its name=value properties (--junit-property).
	junitFile       string
	junitProperties []string
	// progressURL is where the suite posts its progress (the CLI's own
	// listener); forward, the suite flags' own --progress-report-url.
	progressURL, forward string
	// win reads --inventory once for the command (windows).
	win *windowsFlags
}

// windows is the run's inventory (--inventory) as a command's machines:
// the check, the machines' check against the cluster and the underlay
// check share its one read.
func (r *runFlags) windows() *windowsFlags {
	if r.win == nil || r.win.inventory != r.inventory {
		r.win = &windowsFlags{inventory: r.inventory}
	}
	return r.win
}

// registerSelection adds the flags that choose specs.
func (r *runFlags) registerSelection(cmd *cobra.Command) {
	cmd.Flags().Var(flagvalue.Name(&r.binary, binPath("e2e.test"), "the suite binary's path"), "suite-binary", "the suite binary (go test -c ./suites)")
	cmd.Flags().StringVar(&r.suite, "suite", "", "run one area (a package under suites/), e.g. networking; also the argument before --")
	cmd.Flags().Var(flagvalue.List(&r.claim, ""), "claim", "run the specs of these claims, e.g. NET-03 or NET-03,NET-04 (repeatable: --claim NET-03 --claim NET-04 is the same)")
	cmd.Flags().StringVar(&r.labels, "labels", "", "a Ginkgo label filter, e.g. 'os:linux && !needs:windows-node'")
	// Shell completion of the values, from the suite binary's dry run
	// (its suites and labels) and the claim catalogue.
	_ = cmd.RegisterFlagCompletionFunc("suite", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return labels.Values(r.dryRunLabels(), labels.SuitePrefix), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("labels", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return r.dryRunLabels(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("claim", func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		before := typed[:strings.LastIndex(typed, ",")+1] // claims are comma-separated: complete the last
		var out []string
		for _, c := range claims.All() {
			out = append(out, before+c.ID)
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// dryRunLabels are the labels of every spec of the suite binary's dry
// run, sorted, for completion (none when it cannot run).
func (r *runFlags) dryRunLabels() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := suiterun.DryRun(ctx, r.binary, nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range reports.Specs(rep) {
		out = append(out, s.Labels...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (r *runFlags) register(cmd *cobra.Command) {
	r.registerSelection(cmd)
	cmd.Flags().Var(flagvalue.Dir(&r.reportDir, outPath("report"), "the run's reports"), "report-dir", "where JUnit, Ginkgo JSON and the harness's reports go")
	cmd.Flags().StringVar(&r.kwok, "kwok-binary", binPath("kwok"), "kwok, to simulate Windows nodes for scheduling specs where the cluster has none")
	cmd.Flags().StringVar(&r.inventory, "inventory", "", "inventory of Windows machines (YAML), to probe from their hosts")
	cmd.Flags().StringVar(&r.ginkgo, "ginkgo", binPath("ginkgo"), "Ginkgo's CLI, which runs the suite binary in parallel processes")
}

// registerRun adds the flags of a run: processes, rerun, output, timeout.
func (r *runFlags) registerRun(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.procs, "procs", "1", "parallel processes running the suite (Ginkgo's --procs); specs that must run alone are Serial")
	f.StringVar(&r.procs, "nodes", "1", "the old name of --procs")
	_ = f.MarkDeprecated("nodes", "use --procs (make: PROCS=, NODES= still works)")
	f.StringVar(&r.rerun, "rerun-failed", "", "a report directory: run only the specs that failed, were blocked, were interrupted or never ran there")
	f.BoolVarP(&r.quiet, "quiet", "q", false, "only failures, the N of M progress lines and the summary (no Ginkgo -v)")
	f.BoolVar(&r.noColor, "no-color", false, "no colour codes (also when $CI or $NO_COLOR is set, or the output is not a terminal)")
	f.Var(flagvalue.Duration(&r.deadAfter, runmark.DefaultDeadAfter, 0, "", "2m"), "dead-after", "a run whose heartbeat in the cluster is silent this long is dead: before its specs, this run removes what dead runs left (as winconform sweep --older-than)")
	f.StringVar(&r.runID, "run-id", "", "the run's ID, on its objects and heartbeat in the cluster (default: wc-<time>-<random>; make e2e VMS= gives its machines' run)")
	f.Var(flagvalue.OutFile(&r.junitFile, "", false), "junit-file", "also write the run's JUnit file here (it is always in the report directory)")
	f.StringArrayVar(&r.junitProperties, "junit-property", nil, "a name=value property of the run's JUnit test suite (repeatable), e.g. build=20348.2340")
	f.Var(flagvalue.Duration(&r.timeout, 0, 0, "", "2h"), "timeout", "the suite's time limit (default: 24h on an existing cluster or with --inventory, where machines reboot; Ginkgo's 1h on the local cluster)")
	r.registerFlakeAttempts(cmd)
}

// registerFlakeAttempts adds --flake-attempts, Ginkgo's retries, to a
// command that runs the suites (e2e, sonobuoy plugin and run).
func (r *runFlags) registerFlakeAttempts(cmd *cobra.Command) {
	cmd.Flags().Var(flagvalue.Int(&r.flakeAttempts, 0, 0, 5, "the attempts of a failing spec (0 or 1: no retry)"), "flake-attempts", "run a failing spec up to N times (Ginkgo's --flake-attempts; upstream's Windows jobs use 2): one that passes on a retry is flaky, listed apart with its first failure, and the gate's flakes.tolerated decides")
}

// suiteTimeout is the time limit of a run: --timeout, else 24 hours for a
// lab (an existing cluster, Windows machines of an inventory: upstream's
// e2e runs pass 24h, and reboots take long), else Ginkgo's default (one
// hour) for the local cluster.
func (r *runFlags) suiteTimeout(local bool) time.Duration {
	switch {
	case r.timeout > 0:
		return r.timeout
	case !local || r.inventory != "":
		return 24 * time.Hour
	}
	return 0
}

// args is the suite binary's command line for kubeconfig. Paths are
// absolute: Ginkgo's CLI runs the binary from its own directory.
func (r *runFlags) args(kubeconfig string) []string {
	args := []string{"--kubeconfig=" + abs(kubeconfig), "--report-dir=" + abs(r.reportDir),
		"--windows-artifacts=" + abs(outPath("windows"))}
	if r.progressURL != "" {
		args = append(args, "--progress-report-url="+r.progressURL)
	}
	if r.probe != "" {
		args = append(args, "--probe-binary="+r.probe)
	}
	if r.inventory != "" {
		args = append(args, "--inventory="+abs(r.inventory))
	}
	if r.expectVersion != "" {
		args = append(args, "--expect-kubernetes-version="+r.expectVersion)
	}
	if len(r.expectSANs) > 0 {
		args = append(args, "--expect-cert-sans="+strings.Join(r.expectSANs, ","))
	}
	if r.kwok != "" {
		if _, err := os.Stat(r.kwok); err == nil {
			args = append(args, "--kwok-binary="+r.kwok)
		}
	}
	if r.runID != "" {
		args = append(args, "--run-id="+r.runID)
	}
	if !r.started.IsZero() {
		args = append(args, "--run-started="+r.started.UTC().Format(time.RFC3339))
	}
	for _, p := range r.junitProperties {
		args = append(args, "--junit-property="+p)
	}
	if r.rerun != "" {
		args = append(args, "--rerun-of="+abs(r.rerun))
	}
	return append(args, r.selectionAndFocus()...)
}

// selectionAndFocus is the selection and a rerun's focus.
func (r *runFlags) selectionAndFocus() []string {
	args := r.selection()
	for _, f := range r.focus {
		args = append(args, "--ginkgo.focus="+f)
	}
	return args
}

// check refuses, before any cluster work, what cannot run: a bad selection
// or suite flag, a selection of no spec, a rerun without anything to rerun,
// a bad --procs, timeout or inventory. It takes the suite flag the CLI
// forwards (--progress-report-url) out of extra and returns the rest (the
// rest of the pass-through contract is checkPassThrough's). Every refusal
// is a usage error.
func (r *runFlags) check(ctx context.Context, extra []string) ([]string, error) {
	for _, s := range r.junitProperties {
		p, err := record.ParseProperty(s)
		if err == nil && reports.ReservedProperty(p[0]) {
			err = fmt.Errorf("JUnit property %s is the harness's own: give the run's property another name", p[0])
		}
		if err != nil {
			return nil, usage(fmt.Errorf("--junit-property: %w", err))
		}
	}
	// The run begins here: up's failure, the suites and the sweep are
	// this one run's, under one ID.
	id, err := runid.Begin(r.runID)
	if err != nil {
		return nil, usage(fmt.Errorf("--run-id: %w", err))
	}
	r.runID = id
	extra, r.forward, _ = takeFlag(extra, "progress-report-url")
	if r.forward != "" {
		if u, err := url.Parse(r.forward); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, usage(fmt.Errorf("--progress-report-url=%s: want an http:// or https:// URL, e.g. http://localhost:8099/progress", r.forward))
		}
	}
	if _, err := suiterun.Procs(r.procs, maxProcs, "checked again against the cluster"); err != nil {
		return nil, usage(err)
	}
	// A report directory that holds something else is refused now; a
	// previous report there is moved aside when the run starts.
	if err := rundir.Check(r.reportDir); err != nil {
		return nil, usage(err)
	}
	if r.inventory != "" {
		if _, err := r.windows().load(); err != nil {
			return nil, err
		}
	}
	if err := r.checkFilters(); err != nil {
		return nil, usage(err)
	}
	if err := r.rerunFocus(); err != nil {
		return nil, usage(err)
	}
	rep, err := selected(ctx, r.binary, append(r.selectionAndFocus(), extra...))
	if err != nil {
		return nil, usage(r.unknownSuite(err))
	}
	r.specs, r.selected = rep.PreRunStats.SpecsThatWillRun, rep
	return extra, nil
}

// checkFilters checks the claims and the label filter without the suite
// binary: an unknown claim, a filter Ginkgo cannot parse.
func (r *runFlags) checkFilters() error {
	if _, err := labels.Filter("", r.claim, ""); err != nil {
		return err
	}
	if r.labels != "" {
		if _, err := types.ParseLabelFilter(r.labels); err != nil {
			msg := err.Error()
			var ge types.GinkgoError
			if errors.As(err, &ge) {
				msg = text.LastLines(ge.Message, 1) // the lines before it repeat the filter
			}
			return fmt.Errorf("--labels %q is not a Ginkgo label filter: %s (labels are listed by `make list`)", r.labels, msg)
		}
	}
	return nil
}

// rerunFocus reads the report in r.rerun and focuses the run on its
// failed, blocked, interrupted and never-run specs.
func (r *runFlags) rerunFocus() error {
	if r.rerun == "" {
		return nil
	}
	run, err := rundir.Load(r.rerun)
	if err != nil {
		return fmt.Errorf("--rerun-failed: %w", err)
	}
	s := run.Summary
	for _, sp := range s.Specs {
		switch sp.Result {
		case reports.SpecFailed, reports.SpecBlocked, reports.SpecInterrupted, reports.SpecNeverRan:
			r.focus = append(r.focus, suiterun.Focus(s.Suite, sp.Name))
		}
	}
	if len(r.focus) == 0 {
		return fmt.Errorf("--rerun-failed %s: nothing to rerun, no spec failed, was blocked, interrupted or left unrun there (%s)", r.rerun, s.Status)
	}
	fmt.Fprintf(errOut, "rerunning %d spec(s) of %s\n", len(r.focus), r.rerun)
	return nil
}

// abs is path made absolute (as it is when that fails).
func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// selection is the suite binary's flags that choose specs.
func (r *runFlags) selection() []string {
	var args []string
	if r.suite != "" {
		args = append(args, "--suite="+r.suite)
	}
	if r.claim != "" {
		args = append(args, "--claim="+r.claim)
	}
	if r.labels != "" {
		args = append(args, "--ginkgo.label-filter="+r.labels)
	}
	return args
}

func e2eCmd() *cobra.Command {
	var (
		cf         clusterFlags
		rf         runFlags
		kubeconfig string
		remove     bool
		checkOnly  bool
		dryRun     bool
		vmsFile    string
	)
	cmd := &cobra.Command{
		Use:   "e2e [SUITE] [-- suite binary flags]",
		Short: "Run the suites: on the local kind cluster (made or reused), or on any cluster with --kubeconfig",
		Long: `Without --kubeconfig, e2e brings up the local cluster (as up does, reusing it
when it exists and was made from the same cluster file and flags), loads the
test images, and runs the suite binary against it. With --kubeconfig FILE
(--existing FILE, its old name) it runs against that cluster as it is.

An argument before -- is the suite to run (e2e networking is e2e --suite
networking); arguments after -- go to the suite binary (e.g. -- --strict-drift).
Everything is checked before any cluster work, with the suite binary's dry run:
a selection that matches no spec, an unknown suite, claim or suite flag, a bad
inventory or --procs end with exit status 2. A run whose claims all held exits
0; a failed claim or run, 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			extra, err := suiteArgs(cmd, args, &rf)
			if err != nil {
				return err
			}
			if err := e2eFlagConflicts(cmd, kubeconfig); err != nil {
				return err
			}
			// Check everything before any cluster work: an unknown SUITE or
			// claim, a typo in a label or a suite flag, a report that cannot
			// be rerun fail in a second, not after the cluster is up.
			if extra, err = rf.check(cmd.Context(), extra); err != nil {
				return err
			}
			if cf.probe != "" {
				rf.probe = abs(cf.probe)
			}
			rf.kwok = abs(rf.kwok)
			var cfg kind.Config
			if kubeconfig != "" {
				err = checkKubeconfig(kubeconfig)
			} else if cfg, err = cf.load(); err != nil {
				err = usage(err)
			}
			if err != nil {
				return err
			}
			// The machines `make e2e VMS=` will make, or the inventory's:
			// checked against this cluster now, before the first VM or any
			// cluster work.
			if (vmsFile != "" || rf.inventory != "") && kubeconfig == "" {
				w := &windowsFlags{vms: vmsFile}
				if vmsFile == "" {
					w = rf.windows()
				}
				if err := w.checkInputs(&cf); err != nil {
					return usage(err)
				}
			}
			if dryRun {
				reports.WriteList(cmd.OutOrStdout(), reports.Specs(rf.selected))
				return nil
			}
			if checkOnly {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d spec(s) selected; the selection, the suite flags and the files are fine (--check: nothing was run)\n", rf.specs)
				return nil
			}
			noteKubeconfigEnv(cmd, kubeconfig)
			if kubeconfig != "" {
				return runSuite(cmd.Context(), rf, kubeconfig, extra, nil)
			}
			if remove {
				defer deleteCluster(cmd, &cf)
			}
			res, err := up(cmd, &cf)
			if err != nil {
				return rf.stepFailed("up", err)
			}
			// The machines joined through the underlay climb its rungs
			// before the suites: a missing rule or route fails here,
			// named, not as a hundred blocked cells.
			rep, err := underlayCheck{cf: &cf, w: rf.windows(), pods: true, log: cmd.ErrOrStderr()}.run(cmd.Context())
			if err != nil {
				return rf.underlayFailed(rep, err)
			}
			rf.underlay = rep
			rf.expectVersion = cfg.KubernetesVersion
			rf.expectSANs = append(rf.expectSANs, cfg.Networking.CertSANs...)
			if a := cfg.Networking.APIServerAddress; a != "" && a != "0.0.0.0" {
				rf.expectSANs = append(rf.expectSANs, a)
			}
			return runSuite(cmd.Context(), rf, res.Kubeconfig, extra, &localLogs{cf: &cf})
		},
	}
	cf.register(cmd)
	rf.register(cmd)
	rf.registerRun(cmd)
	registerTarget(cmd, &kubeconfig, "the cluster to test, as it is (no local cluster is made)")
	cmd.Flags().BoolVar(&remove, "delete-cluster", false, "delete the local cluster afterwards (also when the run fails or is interrupted)")
	cmd.Flags().BoolVar(&checkOnly, "check", false, "only check the selection, the suite flags and the files, and say how many specs would run: no cluster work")
	cmd.Flags().StringVar(&vmsFile, "vms", "", "a VM file whose machines this run joins (make e2e VMS=): their machine block is checked against the cluster (versions, apiServerAddress, root for the underlay) before any work")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the specs the selection runs, as list does, and stop: no cluster work")
	return cmd
}

// noteKubeconfigEnv says, when $KUBECONFIG is set and --kubeconfig is not,
// that the variable is ignored: a run taints nodes and starts privileged
// pods, never on whatever cluster the shell points at.
func noteKubeconfigEnv(cmd *cobra.Command, kubeconfig string) {
	if kubeconfig == "" && os.Getenv("KUBECONFIG") != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "winconform: $KUBECONFIG is set and ignored: e2e runs on the local kind cluster unless --kubeconfig names the cluster to test")
	}
}

// e2eFlagConflicts refuses flags that would be ignored or mean nothing:
// a cluster file beside --kubeconfig (the cluster is then the kubeconfig's).
func e2eFlagConflicts(cmd *cobra.Command, kubeconfig string) error {
	if kubeconfig != "" && cmd.Flags().Changed("config") {
		return usage(errors.New("--config and --kubeconfig: the cluster file makes the local cluster, --kubeconfig names an existing one to test as it is; give one"))
	}
	return nil
}

// registerTarget adds --kubeconfig, the cluster to test or use (as in
// e2e.test, hydrophone and sonobuoy), and --existing, its old name.
func registerTarget(cmd *cobra.Command, kubeconfig *string, what string) {
	cmd.Flags().StringVar(kubeconfig, "kubeconfig", "", "kubeconfig of "+what)
	cmd.Flags().StringVar(kubeconfig, "existing", "", "the old name of --kubeconfig (make: EXISTING=)")
}

// checkKubeconfig refuses a kubeconfig that cannot be read, before
// anything is made, moved or removed: it is read through the door for
// users' files (internal/kubefile), as the run reads it.
func checkKubeconfig(path string) error {
	_, err := kubefile.REST("--kubeconfig", path)
	var fe *userfile.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return usage(err)
	}
	// A file with no cluster and context (a cluster file, say) reads as an
	// empty kubeconfig.
	return usage(fmt.Errorf("--kubeconfig %s is not a kubeconfig of a cluster (%v): give the kubeconfig of the cluster to test; a cluster file goes to --config", path, err))
}

// maxProcs bounds --procs before the cluster is known.
const maxProcs = 32

// runSuite runs the suite (in --procs parallel processes) once the
// cluster has answered: it readies the report directory (a previous report
// there is moved aside, never deleted; the kubeconfig was checked before
// anything, by checkKubeconfig), prints an N of M line per spec, passes an
// interrupt on once and gives the suite time to clean up and report; then
// removes what the run left in the cluster, and on failure collects the
// node logs into the report directory. Its last line says how the run
// ended; it returns the suite's exit status.
func runSuite(ctx context.Context, rf runFlags, kubeconfig string, extra []string, local *localLogs) error {
	cs, err := reachCluster(ctx, kubeconfig)
	if err != nil {
		return rf.stepFailed("reach the cluster", err)
	}
	procs, err := checkProcs(ctx, cs, rf.procs)
	if err != nil {
		return usage(err)
	}
	if rf.runID == "" {
		return errors.New("winconform: a run without an ID: its check (runFlags.check) begins it")
	}
	rf.started = time.Now().UTC().Truncate(time.Second)
	// The run ID is claimed before anything is moved or made: a live run
	// of the same ID is refused, whose objects this run's cleanup would
	// take for its own.
	hb, err := claimRun(ctx, cs, &rf, errOut)
	if err != nil {
		return usage(err)
	}
	if err := rf.prepareReportDir(); err != nil {
		hb.Stop()
		return err
	}
	if err := rf.underlay.WriteStamped(filepath.Join(rf.reportDir, rundir.UnderlayFile), rf.runID); err != nil {
		return err
	}
	rf.ginkgo = abs(rf.ginkgo)
	server, err := progress.Serve(rf.specs, errOut, rf.forward)
	if err != nil {
		return err
	}
	defer server.Close()
	rf.progressURL = server.URL
	timeout := rf.suiteTimeout(local != nil)
	limit := "Ginkgo's default time limit, 1h"
	if timeout > 0 {
		limit = "time limit " + timeout.String()
	}
	fmt.Fprintf(errOut, "run %s: %d spec(s) in %d process(es), %s; report in %s\n", rf.runID, rf.specs, procs, limit, rf.reportDir)
	rec := startRun(ctx, cs, &rf, hb, errOut)
	runErr := suiterun.Run(ctx, suiterun.Options{Binary: abs(rf.binary), Ginkgo: rf.ginkgo, Procs: procs,
		Args: append(rf.args(kubeconfig), extra...), Stdout: os.Stdout, Stderr: os.Stderr,
		Timeout: timeout, FlakeAttempts: rf.flakeAttempts, Verbose: !rf.quiet && !hasFlag(extra, "ginkgo.v", "ginkgo.vv", "ginkgo.succinct"),
		Color: colorWanted(rf.noColor, os.Getenv, os.Stdout)})
	// What the run left (an interrupt cut its cleanup short): removed, and said.
	rec.StopHeartbeat()
	sweepCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	left, err := suiterun.Sweep(sweepCtx, cs, rf.runID, 2*time.Minute)
	switch {
	case err != nil:
		fmt.Fprintf(errOut, "winconform: cleaning up after run %s: %v\n", rf.runID, err)
	case len(left) > 0:
		fmt.Fprintf(errOut, "winconform: run %s left %d object(s), now deleted: %v\n", rf.runID, len(left), left)
	}
	if runErr != nil {
		local.collect(sweepCtx, rf)
	}
	rec.Finish(runErr)
	// report.html, for people, from whatever the run wrote (also a failed or
	// interrupted one's partial report).
	if err := html.WriteHTML(rf.reportDir); err != nil {
		fmt.Fprintln(errOut, "winconform: report.html:", err)
	}
	line, readable := closingLine(rf.runID, rf.reportDir, runErr)
	rf.copyJUnit()
	fmt.Fprintln(errOut, line)
	var exit suiterun.ExitError
	switch {
	case errors.As(runErr, &exit):
		return exitCode(exit.Code)
	case runErr != nil:
		return runErr
	case !readable:
		// Ginkgo said the suite passed, but the run's record cannot be
		// read, or breaks its contract: nothing it showed can be checked,
		// so the run fails.
		return exitCode(exitFailed)
	}
	return nil
}

// closingLine is a run's last line: how it ended, as its record says, and
// where its reports are; readable is false when the record cannot be read
// or breaks its contract (docs/record.md).
func closingLine(runID, dir string, runErr error) (line string, readable bool) {
	run, err := rundir.Load(dir)
	var exit suiterun.ExitError
	switch {
	case err == nil:
		return fmt.Sprintf("winconform e2e: run %s %s; reports in %s (summary.md, report.html; winconform results %s)", runID, run.Summary.Status, dir, dir), len(run.Summary.Violations) == 0
	case errors.As(runErr, &exit):
		return fmt.Sprintf("winconform e2e: run %s failed (the suite exited with status %d) before it wrote its record: see its output above and %s", runID, exit.Code, dir), false
	case runErr != nil:
		return fmt.Sprintf("winconform e2e: run %s did not finish: %v", runID, runErr), false
	}
	return fmt.Sprintf("winconform e2e: run %s ended, but its record cannot be read, so it shows nothing: %v", runID, err), false
}

// checkProcs reads --procs and checks it against what the cluster can hold:
// one process per allocatable CPU of its Ready, schedulable nodes.
func checkProcs(ctx context.Context, cs kubernetes.Interface, value string) (int, error) {
	if value == "" || value == "1" {
		return 1, nil
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing the cluster's nodes to check --procs %s: %w", value, err)
	}
	ready, cpus := 0, int64(0)
	for _, n := range nodes.Items {
		f := facts.FromNode(&n)
		if !f.Ready || f.Simulated || n.Spec.Unschedulable {
			continue
		}
		ready++
		cpus += n.Status.Allocatable.Cpu().Value()
	}
	max := int(cpus)
	if max < 1 {
		max = 1
	}
	return suiterun.Procs(value, max, fmt.Sprintf("%d Ready node(s) with %d allocatable CPU(s) in all, one process per CPU", ready, cpus))
}

// clientFor is a clientset of kubeconfig's cluster, each request bounded
// by 30 seconds.
func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	_, cs, err := kubefile.Clients("--kubeconfig", kubeconfig, 30*time.Second)
	return cs, err
}

// reachCluster asks the cluster of kubeconfig for its version before
// anything of the run: a server that does not answer, or is not an API
// server, ends the run in one line naming it.
func reachCluster(ctx context.Context, kubeconfig string) (kubernetes.Interface, error) {
	cfg, cs, err := kubefile.Clients("--kubeconfig", kubeconfig, 30*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err = cs.Discovery().ServerVersion(); err != nil {
		return nil, fmt.Errorf("the cluster at %s (kubeconfig %s) did not answer /version, so the run never reached it: %v", cfg.Host, kubeconfig, err)
	}
	return cs, nil
}

// localLogs collects the node logs of the local kind cluster when a run
// fails (nil for an existing cluster: its nodes are not ours to read).
type localLogs struct {
	cf *clusterFlags
}

// collect exports the cluster's node logs into the report's artifacts, once per run.
func (l *localLogs) collect(ctx context.Context, rf runFlags) {
	if l == nil {
		return
	}
	cfg, err := l.cf.load()
	if err != nil {
		return
	}
	c, err := kind.New(ctx, cfg, kindOptions(abs(l.cf.kubeconfig)))
	if err != nil {
		fmt.Fprintln(errOut, "winconform: cannot collect the node logs:", err)
		return
	}
	dir := filepath.Join(rf.reportDir, "artifacts", "nodes")
	missed, err := c.ExportLogs(dir)
	if err != nil {
		fmt.Fprintln(errOut, "winconform: the run failed, and its node logs could not be collected:", err)
		return
	}
	for _, m := range missed {
		fmt.Fprintln(errOut, "winconform:", m)
	}
	fmt.Fprintf(errOut, "the run failed: node logs in %s\n", dir)
}

func deleteCluster(cmd *cobra.Command, cf *clusterFlags) {
	cfg, err := cf.load()
	if err != nil {
		return
	}
	// The run's context may be cancelled: deletion must still happen.
	opts := kindOptions(abs(cf.kubeconfig))
	opts.Log = cmd.ErrOrStderr()
	c, err := kind.New(context.WithoutCancel(cmd.Context()), cfg, opts)
	if err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "winconform: cannot delete the cluster:", err)
		return
	}
	if _, err := c.Down(); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "winconform: deleting cluster %q: %v\n", cfg.Name, err)
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "deleted cluster %q\n", cfg.Name)
}

func listCmd() *cobra.Command {
	var (
		rf    runFlags
		check bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every spec with its labels (a dry run: no cluster needed), and the claims no spec covers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := rf.checkFilters(); err != nil {
				return usage(err)
			}
			r, err := selected(cmd.Context(), rf.binary, rf.selection())
			if err != nil {
				return usage(err)
			}
			specs := reports.Specs(r)
			reports.WriteList(cmd.OutOrStdout(), specs)
			if problems := reports.LabelProblems(specs); check && len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(cmd.ErrOrStderr(), "label problem:", p)
				}
				return fmt.Errorf("%d label problem(s)", len(problems))
			}
			return nil
		},
	}
	rf.registerSelection(cmd)
	cmd.Flags().BoolVar(&check, "check", false, "fail when a spec lacks its suite:, claim: or os: label or names an unknown claim")
	return cmd
}
