package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/internal/suiterun"
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
	// nodes is the number of parallel processes (NODES), ginkgo their runner.
	nodes  string
	ginkgo string
	// rerun is a report directory whose failed and interrupted specs to run again.
	rerun string
	// runID names the run's objects in the cluster.
	runID string
	// focus are the Ginkgo focus expressions of a rerun.
	focus []string
}

func (r *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.binary, "suite-binary", "_output/bin/e2e.test", "the suite binary (go test -c ./suites)")
	cmd.Flags().StringVar(&r.suite, "suite", "", "run one area (a package under suites/), e.g. networking")
	cmd.Flags().StringVar(&r.claim, "claim", "", "run the specs of these claims, e.g. NET-03 or NET-03,NET-04")
	cmd.Flags().StringVar(&r.labels, "labels", "", "a Ginkgo label filter, e.g. 'os:linux && !needs:windows-node'")
	cmd.Flags().StringVar(&r.reportDir, "report-dir", "_output/report", "where JUnit, Ginkgo JSON and the harness's reports go")
	cmd.Flags().StringVar(&r.kwok, "kwok-binary", "_output/bin/kwok", "kwok, to simulate Windows nodes for scheduling specs where the cluster has none")
	cmd.Flags().StringVar(&r.inventory, "inventory", "", "inventory of Windows machines (YAML), to probe from their hosts")
	cmd.Flags().StringVar(&r.nodes, "nodes", "1", "parallel processes running the suite (Ginkgo's --procs); specs that must run alone are Serial")
	cmd.Flags().StringVar(&r.ginkgo, "ginkgo", "_output/bin/ginkgo", "Ginkgo's CLI, which runs the suite binary in parallel processes")
	cmd.Flags().StringVar(&r.rerun, "rerun-failed", "", "a report directory: run only the specs that failed, were blocked, were interrupted or never ran there")
}

// args is the suite binary's command line for kubeconfig. Paths are
// absolute: Ginkgo's CLI runs the binary from its own directory.
func (r *runFlags) args(kubeconfig string) []string {
	args := []string{"--kubeconfig=" + abs(kubeconfig), "--report-dir=" + abs(r.reportDir), "--ginkgo.v",
		"--windows-artifacts=" + abs(filepath.Join("_output", "windows"))}
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
	if r.rerun != "" {
		args = append(args, "--rerun-of="+abs(r.rerun))
	}
	for _, f := range r.focus {
		args = append(args, "--ginkgo.focus="+f)
	}
	return append(args, r.selection()...)
}

// rerunFocus reads the report in r.rerun and focuses the run on its
// failed, blocked, interrupted and never-run specs.
func (r *runFlags) rerunFocus() error {
	if r.rerun == "" {
		return nil
	}
	s, err := reports.ReadSummary(r.rerun)
	if err != nil {
		return fmt.Errorf("--rerun-failed: %w", err)
	}
	for _, sp := range s.Specs {
		switch sp.Result {
		case reports.SpecFailed, reports.SpecBlocked, reports.SpecInterrupted, reports.SpecNeverRan:
			r.focus = append(r.focus, suiterun.Focus(s.Suite, sp.Name))
		}
	}
	if len(r.focus) == 0 {
		return fmt.Errorf("--rerun-failed %s: nothing to rerun, no spec failed, was blocked, interrupted or left unrun there (%s)", r.rerun, s.Status)
	}
	fmt.Fprintf(os.Stderr, "rerunning %d spec(s) of %s\n", len(r.focus), r.rerun)
	return nil
}

// abs is path made absolute (as it is when that fails).
func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// newRunID is a run ID: a valid label value, unique enough to tell runs apart.
func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("wc-%s-%x", time.Now().UTC().Format("20060102t150405"), b)
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

// validate dry-runs the suite binary with the selection; its own one-line
// error (unknown SUITE, unknown claim, bad filter) becomes this error.
func (r *runFlags) validate(ctx context.Context) error {
	args := append([]string{"--ginkgo.dry-run", "--ginkgo.no-color", "--ginkgo.silence-skips"}, r.selection()...)
	out, err := exec.CommandContext(ctx, r.binary, args...).CombinedOutput()
	if err == nil {
		return nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		if msg, ok := strings.CutPrefix(line, "winconform e2e: "); ok {
			return errors.New(msg)
		}
	}
	return fmt.Errorf("%s rejected the selection: %v: %s", r.binary, err, out)
}

func e2eCmd() *cobra.Command {
	var (
		cf       clusterFlags
		rf       runFlags
		existing string
		remove   bool
	)
	cmd := &cobra.Command{
		Use:   "e2e [-- suite binary flags]",
		Short: "Run the suites: on the local kind cluster (made or reused), or on any cluster with --existing",
		Long: `Without --existing, e2e brings up the local cluster (as up does, reusing it when it
exists), loads the test images, and runs the suite binary against it. With
--existing KUBECONFIG it runs against that cluster as it is. Arguments after
-- go to the suite binary (e.g. -- --ginkgo.focus=...).`,
		RunE: func(cmd *cobra.Command, extra []string) error {
			if _, err := os.Stat(rf.binary); err != nil {
				return fmt.Errorf("suite binary %s: %v (build it with `make build`)", rf.binary, err)
			}
			// Check the selection before any cluster work: an unknown SUITE or
			// claim, or a report that cannot be rerun, fails in a second, not
			// after the cluster is up.
			if err := rf.validate(cmd.Context()); err != nil {
				return err
			}
			if err := rf.rerunFocus(); err != nil {
				return err
			}
			// A report directory that holds something else is refused now;
			// a previous report there is moved aside when the run starts.
			if err := rundir.Check(rf.reportDir); err != nil {
				return err
			}
			if _, err := suiterun.Procs(rf.nodes, maxProcs, "checked again against the cluster"); err != nil {
				return err
			}
			if cf.probe != "" {
				rf.probe = abs(cf.probe)
			}
			rf.kwok = abs(rf.kwok)
			kubeconfig := existing
			if kubeconfig == "" {
				if remove {
					defer deleteCluster(cmd, &cf)
				}
				res, err := up(cmd, &cf)
				if err != nil {
					return rf.stepFailed("up", err)
				}
				kubeconfig = res.Kubeconfig
				if cfg, err := cf.load(); err == nil {
					rf.expectVersion = cfg.KubernetesVersion
					rf.expectSANs = append(rf.expectSANs, cfg.Networking.CertSANs...)
					if a := cfg.Networking.APIServerAddress; a != "" && a != "0.0.0.0" {
						rf.expectSANs = append(rf.expectSANs, a)
					}
				}
			}
			return runSuite(cmd.Context(), rf, kubeconfig, extra, localCluster(existing, &cf))
		},
	}
	cf.register(cmd)
	rf.register(cmd)
	cmd.Flags().StringVar(&existing, "existing", "", "kubeconfig of an existing cluster to test as it is (no local cluster is made)")
	cmd.Flags().BoolVar(&remove, "delete-cluster", false, "delete the local cluster afterwards (also when the run fails or is interrupted)")
	return cmd
}

// maxProcs bounds NODES before the cluster is known.
const maxProcs = 32

// runSuite runs the suite (in NODES parallel processes), passing an
// interrupt on once and giving the suite time to clean up and report; then
// removes what the run left in the cluster, and on failure collects the
// node logs into the report directory. It returns the suite's exit status
// as an error.
func runSuite(ctx context.Context, rf runFlags, kubeconfig string, extra []string, local *localLogs) error {
	cs, err := clientFor(kubeconfig)
	if err != nil {
		return err
	}
	procs, err := checkProcs(ctx, cs, rf.nodes)
	if err != nil {
		return err
	}
	if err := rf.prepareReportDir(); err != nil {
		return err
	}
	if rf.runID == "" {
		rf.runID = newRunID()
	}
	rf.ginkgo = abs(rf.ginkgo)
	fmt.Fprintf(os.Stderr, "run %s: %d process(es); report in %s\n", rf.runID, procs, rf.reportDir)
	runErr := suiterun.Run(ctx, suiterun.Options{Binary: abs(rf.binary), Ginkgo: rf.ginkgo, Procs: procs,
		Args: append(rf.args(kubeconfig), extra...), Stdout: os.Stdout, Stderr: os.Stderr})
	// What the run left (an interrupt cut its cleanup short): removed, and said.
	sweepCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	left, err := suiterun.Sweep(sweepCtx, cs, rf.runID, 2*time.Minute)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "winconform: cleaning up after run %s: %v\n", rf.runID, err)
	case len(left) > 0:
		fmt.Fprintf(os.Stderr, "winconform: run %s left %d object(s), now deleted: %v\n", rf.runID, len(left), left)
	}
	if runErr != nil {
		local.collect(sweepCtx, rf)
	}
	// report.html, for people, from whatever the run wrote (also a failed or
	// interrupted one's partial report).
	if err := html.WriteHTML(rf.reportDir); err != nil {
		fmt.Fprintln(os.Stderr, "winconform: report.html:", err)
	}
	var exit suiterun.ExitError
	if errors.As(runErr, &exit) {
		return exitCode(exit.Code)
	}
	return runErr
}

// checkProcs reads NODES and checks it against what the cluster can hold:
// one process per allocatable CPU of its Ready, schedulable nodes.
func checkProcs(ctx context.Context, cs kubernetes.Interface, value string) (int, error) {
	if value == "" || value == "1" {
		return 1, nil
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing the cluster's nodes to check NODES=%s: %w", value, err)
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

func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.Timeout = 30 * time.Second
	return kubernetes.NewForConfig(cfg)
}

// localLogs collects the node logs of the local kind cluster when a run
// fails (nil for an existing cluster: its nodes are not ours to read).
type localLogs struct {
	cf *clusterFlags
}

func localCluster(existing string, cf *clusterFlags) *localLogs {
	if existing != "" {
		return nil
	}
	return &localLogs{cf: cf}
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
	kc, _ := filepath.Abs(l.cf.kubeconfig)
	c, err := kind.New(ctx, cfg, kind.Options{Kubeconfig: kc})
	if err != nil {
		fmt.Fprintln(os.Stderr, "winconform: cannot collect the node logs:", err)
		return
	}
	dir := filepath.Join(rf.reportDir, "artifacts", "nodes")
	if err := c.ExportLogs(dir); err != nil {
		fmt.Fprintln(os.Stderr, "winconform:", err)
	}
	fmt.Fprintf(os.Stderr, "the run failed: node logs in %s\n", dir)
}

func deleteCluster(cmd *cobra.Command, cf *clusterFlags) {
	cfg, err := cf.load()
	if err != nil {
		return
	}
	kc, _ := filepath.Abs(cf.kubeconfig)
	// The run's context may be cancelled: deletion must still happen.
	c, err := kind.New(context.WithoutCancel(cmd.Context()), cfg, kind.Options{Kubeconfig: kc})
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
			tmp, err := os.MkdirTemp("", "winconform-list-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			report := filepath.Join(tmp, "dry-run.json")
			args := append([]string{"--ginkgo.dry-run", "--ginkgo.json-report=" + report, "--ginkgo.no-color", "--ginkgo.silence-skips"}, rf.selection()...)
			out, err := exec.CommandContext(cmd.Context(), rf.binary, args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("dry run of %s: %v: %s", rf.binary, err, out)
			}
			r, err := reports.ReadReport(report)
			if err != nil {
				return err
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
	rf.register(cmd)
	cmd.Flags().BoolVar(&check, "check", false, "fail when a spec lacks its suite:, claim: or os: label or names an unknown claim")
	return cmd
}
