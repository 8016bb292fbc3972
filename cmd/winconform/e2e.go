package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/reports"
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
}

func (r *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.binary, "suite-binary", "_output/bin/e2e.test", "the suite binary (go test -c ./suites)")
	cmd.Flags().StringVar(&r.suite, "suite", "", "run one area (a package under suites/), e.g. networking")
	cmd.Flags().StringVar(&r.claim, "claim", "", "run the specs of these claims, e.g. NET-03 or NET-03,NET-04")
	cmd.Flags().StringVar(&r.labels, "labels", "", "a Ginkgo label filter, e.g. 'os:linux && !needs:windows-node'")
	cmd.Flags().StringVar(&r.reportDir, "report-dir", "_output/report", "where JUnit, Ginkgo JSON and the harness's reports go")
	cmd.Flags().StringVar(&r.kwok, "kwok-binary", "_output/bin/kwok", "kwok, to simulate Windows nodes for scheduling specs where the cluster has none")
	cmd.Flags().StringVar(&r.inventory, "inventory", "", "inventory of Windows machines (YAML), to probe from their hosts")
}

// args is the suite binary's command line for kubeconfig.
func (r *runFlags) args(kubeconfig string) []string {
	args := []string{"--kubeconfig=" + kubeconfig, "--report-dir=" + r.reportDir, "--ginkgo.v"}
	if r.probe != "" {
		args = append(args, "--probe-binary="+r.probe)
	}
	if r.inventory != "" {
		args = append(args, "--inventory="+r.inventory)
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
	return append(args, r.selection()...)
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
			// claim fails in a second, not after the cluster is up.
			if err := rf.validate(cmd.Context()); err != nil {
				return err
			}
			if cf.probe != "" {
				if abs, err := filepath.Abs(cf.probe); err == nil {
					rf.probe = abs
				}
			}
			if abs, err := filepath.Abs(rf.kwok); err == nil {
				rf.kwok = abs
			}
			kubeconfig := existing
			if kubeconfig == "" {
				if remove {
					defer deleteCluster(cmd, &cf)
				}
				res, err := up(cmd, &cf)
				if err != nil {
					return err
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
			return runSuite(cmd.Context(), rf, kubeconfig, extra)
		},
	}
	cf.register(cmd)
	rf.register(cmd)
	cmd.Flags().StringVar(&existing, "existing", "", "kubeconfig of an existing cluster to test as it is (no local cluster is made)")
	cmd.Flags().BoolVar(&remove, "delete-cluster", false, "delete the local cluster afterwards (also when the run fails or is interrupted)")
	return cmd
}

// runSuite runs the suite binary and returns its exit status as an error.
// An interruption reaches the suite as SIGINT, so that Ginkgo cleans up and
// writes its reports before it exits.
func runSuite(ctx context.Context, rf runFlags, kubeconfig string, extra []string) error {
	if rf.reportDir == "_output/report" {
		os.RemoveAll(rf.reportDir) // the default directory holds the last run only
	}
	if err := os.MkdirAll(rf.reportDir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, rf.binary, append(rf.args(kubeconfig), extra...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitCode(exit.ExitCode())
	}
	return err
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
