package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/kubefile"
)

func matrixCmd(w *winconform) *cobra.Command {
	var (
		existing, name, probe string
		runs, samples         int
	)
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Time the whole network matrix, and the harness's cost per probe against a bare kubectl exec",
		Long: `Deploys the matrix's peers once (not timed), then:
  - runs the whole matrix --runs times and prints the median wall time (target: at most 30 s);
  - probes --samples reachable targets one at a time from one pod, alternately through the
    harness (client-go exec, parsing, expectations) and through a bare "kubectl exec" of the
    same probe command, and prints the mean of each and their ratio (target: at most 2x);
  - prints the cost per probe of the batched way the matrix really probes, for comparison.
The cluster is --existing, or the local cluster (winconform up --name, made or reused).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := cmd.ErrOrStderr()
			kubeconfig := existing
			if kubeconfig == "" {
				dir, err := os.MkdirTemp("", "winconform-bench-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				kubeconfig = filepath.Join(dir, "kubeconfig")
				args := []string{"up", "--probe", probe, "--kubeconfig-out", kubeconfig}
				if name != "" {
					args = append(args, "--name", name)
				}
				if err := w.must(ctx, log, args...); err != nil {
					return err
				}
			}
			cfg, cs, err := kubefile.Clients("--existing", kubeconfig, 0)
			if err != nil {
				return err
			}
			fs, err := facts.Discover(ctx, cs)
			if err != nil {
				return err
			}
			probeBin, _ := filepath.Abs(probe)
			var dep *netmatrix.Deployment
			deploy, err := timeIt(func() (err error) {
				dep, err = netmatrix.Deploy(ctx, netmatrix.Env{Config: cfg, Clientset: cs, Facts: fs, Kubeconfig: kubeconfig,
					ClusterDomain: "cluster.local", ProbeBinary: probeBin, Log: log})
				return err
			})
			defer func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				_ = dep.Cleanup(cctx)
			}()
			if err != nil {
				return err
			}
			_, kubectl, err := nodeimage.HostTools(ctx, nodeimage.DefaultCacheDir(), fs.ServerVersion, log)
			if err != nil {
				return err
			}
			m := dep.Matrix
			var walls []time.Duration
			for i := range runs {
				d, _ := timeIt(func() error { m.Run(ctx, nil); return nil })
				walls = append(walls, d)
				fmt.Fprintf(log, "bench: matrix run %d: %s\n", i+1, d.Round(10*time.Millisecond))
			}
			cells := m.Cells()
			bad := 0
			for _, c := range cells {
				if c.Verdict != netmatrix.OK {
					bad++
				}
			}
			run := median(walls)
			wall := deploy + run
			fmt.Fprintf(cmd.OutOrStdout(), "BenchmarkMatrix: %d sources x %d targets, %d cells (%d not ok): %s on a ready cluster (deploying the peers %s, probing every cell %s, median of %d runs; %s the 30 s target)\n",
				len(m.Sources), len(m.Targets), len(cells), bad, wall.Round(10*time.Millisecond), deploy.Round(10*time.Millisecond),
				run.Round(10*time.Millisecond), runs, within(wall.Seconds() <= 30))
			return benchOverhead(ctx, cmd, m, kubectl, samples)
		},
	}
	cmd.Flags().StringVar(&existing, "existing", "", "kubeconfig of an existing cluster (default: the local cluster, made or reused)")
	cmd.Flags().StringVar(&name, "name", "", "the local cluster to make or reuse without --existing (default: the embedded default's)")
	cmd.Flags().Var(flagvalue.Name(&probe, filepath.Join("_output", "bin", "probe-linux-amd64"), "the Linux probe binary's path"), "probe", "the Linux probe binary (make build writes it)")
	cmd.Flags().Var(flagvalue.Int(&runs, 3, 1, maxRuns, "how many whole-matrix runs"), "runs", "whole-matrix runs")
	cmd.Flags().Var(flagvalue.Int(&samples, 10, 1, 1000, "how many single probes on each side"), "samples", "single probes on each side")
	return cmd
}

// benchOverhead compares single probes through the harness with bare
// kubectl exec runs of the same command, from the first pod source.
func benchOverhead(ctx context.Context, cmd *cobra.Command, m *netmatrix.Matrix, kubectl string, samples int) error {
	var src netmatrix.PodSource
	found := false
	for _, s := range m.Sources {
		if p, ok := s.(netmatrix.PodSource); ok && p.Self.Kind == netmatrix.Pod {
			src, found = p, true
			break
		}
	}
	if !found {
		return fmt.Errorf("no pod source in the matrix")
	}
	var targets []string
	for _, c := range m.Cells() {
		if c.Source == src.Self.Name && c.Observed == netmatrix.Reachable && strings.HasPrefix(c.Result.Target, "http://") {
			targets = append(targets, c.Result.Target)
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("no reachable target from %s to measure with", src.Self.Name)
	}
	var harness, bare time.Duration
	for i := 0; i < samples; i++ {
		t := targets[i%len(targets)]
		d, err := timeIt(func() error {
			rs, err := src.Probe(ctx, []string{t})
			if err == nil && !rs[0].OK {
				err = fmt.Errorf("%s", rs[0].Describe())
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("harness probe of %s: %w", t, err)
		}
		harness += d
		args := strings.Fields(src.Repro(t))[1:] // the same command, run by kubectl
		d, err = timeIt(func() error {
			c := exec.CommandContext(ctx, kubectl, args...)
			c.Stderr = os.Stderr
			return c.Run()
		})
		if err != nil {
			return fmt.Errorf("kubectl exec probe of %s: %w", t, err)
		}
		bare += d
	}
	batch, err := timeIt(func() error { _, err := src.Probe(ctx, targets); return err })
	if err != nil {
		return err
	}
	h, b := harness/time.Duration(samples), bare/time.Duration(samples)
	perBatched := batch / time.Duration(len(targets))
	ratio := h.Seconds() / b.Seconds()
	fmt.Fprintf(cmd.OutOrStdout(), "BenchmarkProbeOverhead: one probe through the harness %s, bare kubectl exec %s: ratio %.2f (%s the 2x target); batched as the matrix probes: %s per probe (%d targets in %s), ratio %.2f to bare\n",
		h.Round(time.Millisecond), b.Round(time.Millisecond), ratio, within(ratio <= 2), perBatched.Round(time.Millisecond),
		len(targets), batch.Round(time.Millisecond), perBatched.Seconds()/b.Seconds())
	return nil
}
