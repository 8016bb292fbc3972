package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/flagvalue"
)

// maxBenchRuns bounds a benchmark's --runs.
const maxBenchRuns = 100

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmarks that print ratios (run by make bench)"}
	cmd.AddCommand(benchUpCmd(), benchMatrixCmd(), benchSuitesCmd())
	return cmd
}

func benchUpCmd() *cobra.Command {
	var (
		cf   clusterFlags
		runs int
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Compare `winconform up` (warm) with plain kind making the same cluster from the same image",
		Long: `Both sides start from nothing but a cached node image and end at the same state:
every node Ready, flannel and the system pods Ready. "winconform up" is the
harness (image lookup, host-quirk detection, kind through its Go API, flannel,
the probe image loaded, readiness). The baseline is what a person would type:
the kind CLI (built from the same module graph) with the same kind config,
kubectl apply of the same flannel manifest, and kubectl rollout status. Runs
alternate between the two; the medians and their ratio are printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cf.name == "" {
				cf.name = "winconform-bench"
			}
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			// The baseline makes no load balancer: neither does the harness here,
			// so that both sides end at the same state.
			off := false
			cfg.LoadBalancer = config.LoadBalancer{Enabled: &off}
			opts, err := cf.options()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			log := cmd.ErrOrStderr()
			c, err := kind.New(ctx, cfg, opts)
			if err != nil {
				return err
			}
			if exists, _ := c.Exists(); exists {
				return fmt.Errorf("a cluster named %q exists: delete it (winconform down --name %s) before benchmarking", cfg.Name, cfg.Name)
			}
			// Warm-up: the node image and the host tools are built outside the timings.
			fmt.Fprintln(log, "bench: warming up (node image, kind and kubectl binaries)")
			res, err := c.Up(ctx)
			if err != nil {
				return err
			}
			if _, err := c.Down(); err != nil {
				return err
			}
			kindBin, kubectl, err := nodeimage.HostTools(ctx, opts.CacheDir, cfg.KubernetesVersion, log)
			if err != nil {
				return err
			}
			base, err := newBaseline(cmd, cfg, res, kindBin, kubectl)
			if err != nil {
				return err
			}
			defer base.cleanup()

			var harness, plain []time.Duration
			for i := 0; i < runs; i++ {
				d, err := timeIt(func() error {
					_, err := c.Up(ctx)
					return err
				})
				if err != nil {
					return fmt.Errorf("winconform up: %w", err)
				}
				if _, err := c.Down(); err != nil {
					return err
				}
				harness = append(harness, d)
				d, err = timeIt(func() error { return base.run(ctx) })
				_ = base.delete(context.WithoutCancel(ctx))
				if err != nil {
					return fmt.Errorf("plain kind: %w", err)
				}
				plain = append(plain, d)
				fmt.Fprintf(log, "bench: run %d: winconform up %s, plain kind %s\n", i+1, harness[i].Round(100*time.Millisecond), plain[i].Round(100*time.Millisecond))
			}
			h, p := median(harness), median(plain)
			ratio := h.Seconds() / p.Seconds()
			verdict := "within"
			if ratio > 1.2 {
				verdict = "OVER"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "BenchmarkUp: winconform up (warm) %s, plain kind %s, ratio %.2f (%s the 1.2 target), median of %d runs, node image %s\n",
				h.Round(100*time.Millisecond), p.Round(100*time.Millisecond), ratio, verdict, runs, res.NodeImage)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().Var(flagvalue.Int(&runs, 3, 1, maxBenchRuns, "how many runs of each side"), "runs", "runs of each side")
	return cmd
}

// baseline makes the same cluster with the kind and kubectl CLIs.
type baseline struct {
	cfg                          kind.Config
	dir, kindBin, kubectl, kconf string
	out                          io.Writer
	restore                      func()
}

func newBaseline(cmd *cobra.Command, cfg kind.Config, res *kind.Result, kindBin, kubectl string) (*baseline, error) {
	dir, err := os.MkdirTemp("", "winconform-bench-")
	if err != nil {
		return nil, err
	}
	b := &baseline{cfg: cfg, dir: dir, kindBin: kindBin, kubectl: kubectl, kconf: filepath.Join(dir, "kubeconfig"), out: cmd.ErrOrStderr()}
	kc, err := yaml.Marshal(cfg.KindConfig(res.NodeImage, res.CgroupV1))
	if err != nil {
		return nil, err
	}
	manifest, err := cfg.CNIManifest(res.LocalImage)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kind.yaml"), kc, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "flannel.yaml"), manifest, 0o644); err != nil {
		return nil, err
	}
	// kind's CLI needs the same docker shim on this host as the harness does.
	d, err := docker.New()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b.restore, err = d.Activate(res.Quirks, filepath.Join(nodeimage.DefaultCacheDir(), "shim"), self)
	return b, err
}

func (b *baseline) run(ctx context.Context) error {
	steps := [][]string{
		{b.kindBin, "create", "cluster", "--name", b.cfg.Name, "--config", filepath.Join(b.dir, "kind.yaml"), "--kubeconfig", b.kconf},
		{b.kubectl, "--kubeconfig", b.kconf, "apply", "-f", filepath.Join(b.dir, "flannel.yaml")},
		{b.kubectl, "--kubeconfig", b.kconf, "wait", "--for=condition=Ready", "nodes", "--all", "--timeout=5m"},
		{b.kubectl, "--kubeconfig", b.kconf, "-n", "kube-flannel", "rollout", "status", "daemonset/kube-flannel-ds", "--timeout=5m"},
		{b.kubectl, "--kubeconfig", b.kconf, "-n", "kube-system", "rollout", "status", "daemonset/kube-proxy", "--timeout=5m"},
		{b.kubectl, "--kubeconfig", b.kconf, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=5m"},
	}
	for _, s := range steps {
		cmd := exec.CommandContext(ctx, s[0], s[1:]...)
		cmd.Stdout, cmd.Stderr = b.out, b.out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", filepath.Base(s[0]), s[1], err)
		}
	}
	return nil
}

func (b *baseline) delete(ctx context.Context) error {
	return exec.CommandContext(ctx, b.kindBin, "delete", "cluster", "--name", b.cfg.Name).Run()
}

func (b *baseline) cleanup() {
	b.restore()
	os.RemoveAll(b.dir)
}

func timeIt(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
