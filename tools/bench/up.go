package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/flagvalue"
)

func upCmd(w *winconform) *cobra.Command {
	var (
		name, version string
		runs          int
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Compare `winconform up` (warm) with plain kind making the same cluster from the same image",
		Long: `Both sides start from nothing but a cached node image and end at the same state:
every node Ready, flannel and the system pods Ready. The harness's side is
the command "winconform up" (image lookup, host-quirk detection, kind through
its Go API, flannel, the probe image loaded, readiness). The baseline is what
a person would type: the kind CLI (built from the same module graph) with the
same kind config, kubectl apply of the same flannel manifest, and kubectl
rollout status. Both make the cluster of one cluster file (the embedded
default, named --name, with no load balancer: the baseline makes none).
Runs alternate between the two; the medians and their ratio are printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, log := cmd.Context(), cmd.ErrOrStderr()
			dir, err := os.MkdirTemp("", "winconform-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			file := filepath.Join(dir, "cluster.yaml")
			spec := fmt.Sprintf("name: %s\nloadBalancer:\n  enabled: false\n", name)
			if version != "" {
				spec += fmt.Sprintf("kubernetesVersion: %q\n", version)
			}
			if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
				return err
			}
			cfg, err := kind.LoadConfig(file)
			if err != nil {
				return fmt.Errorf("--name, --kubernetes-version: %w", err)
			}
			opts := kind.Options{Kubeconfig: filepath.Join(dir, "warm-up.kubeconfig"), CacheDir: nodeimage.DefaultCacheDir(),
				ShimDir: filepath.Join(dir, "shim"), Log: log}
			c, err := kind.New(ctx, cfg, opts)
			if err != nil {
				return err
			}
			if exists, _ := c.Exists(); exists {
				return fmt.Errorf("a cluster named %q exists: delete it (winconform down --name %s) before benchmarking", cfg.Name, cfg.Name)
			}
			// Warm-up: the node image and the host tools are built outside
			// the timings, and the cluster's Result gives the baseline its
			// image and kind config.
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
			base, err := newBaseline(dir, cfg, res, kindBin, kubectl, log)
			if err != nil {
				return err
			}
			defer base.restore()

			harnessUp := []string{"up", "--config", file, "--kubeconfig-out", filepath.Join(dir, "harness.kubeconfig")}
			var harness, plain []time.Duration
			for i := range runs {
				d, err := timeIt(func() error { return w.must(ctx, log, harnessUp...) })
				if err != nil {
					return err
				}
				if err := w.must(ctx, log, "down", "--config", file); err != nil {
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
			fmt.Fprintf(cmd.OutOrStdout(), "BenchmarkUp: winconform up (warm) %s, plain kind %s, ratio %.2f (%s the 1.2 target), median of %d runs, node image %s\n",
				h.Round(100*time.Millisecond), p.Round(100*time.Millisecond), ratio, within(ratio <= 1.2), runs, res.NodeImage)
			return nil
		},
	}
	cmd.Flags().Var(flagvalue.Name(&name, "winconform-bench", "the benchmark cluster's name"), "name", "the name of the cluster both sides make")
	cmd.Flags().StringVar(&version, "kubernetes-version", "", "the Kubernetes release or line of both sides' cluster (default: the default line)")
	cmd.Flags().Var(flagvalue.Int(&runs, 3, 1, maxRuns, "how many runs of each side"), "runs", "runs of each side")
	return cmd
}

// baseline makes the same cluster with the kind and kubectl CLIs.
type baseline struct {
	name, dir, kindBin, kubectl, kconf string
	out                                io.Writer
	restore                            func()
}

func newBaseline(dir string, cfg kind.Config, res *kind.Result, kindBin, kubectl string, log io.Writer) (*baseline, error) {
	b := &baseline{name: cfg.Name, dir: dir, kindBin: kindBin, kubectl: kubectl, kconf: filepath.Join(dir, "kubeconfig"), out: log, restore: func() {}}
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
	// kind's CLI needs the same docker shim on this host as the harness
	// does: this program, under the name docker (see main).
	d, err := docker.New()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b.restore, err = d.Activate(res.Quirks, filepath.Join(dir, "shim"), self)
	return b, err
}

func (b *baseline) run(ctx context.Context) error {
	steps := [][]string{
		{b.kindBin, "create", "cluster", "--name", b.name, "--config", filepath.Join(b.dir, "kind.yaml"), "--kubeconfig", b.kconf},
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
	return exec.CommandContext(ctx, b.kindBin, "delete", "cluster", "--name", b.name).Run()
}
