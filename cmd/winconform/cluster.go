package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/winconform/winconform/internal/atomicfile"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/userfile"
)

// clusterFlags are the flags of every command that makes or finds a local cluster.
type clusterFlags struct {
	config string
	name   string
	// kubeconfig is the local cluster's kubeconfig: the file up writes
	// (--kubeconfig-out), or the file join and reset read (--kubeconfig).
	kubeconfig string
	backend    string
	version    string
	remote     int
	probe      string
	// images are more archives to load into the nodes (the Sonobuoy images).
	images []kind.ImageArchive
	// misplaced is a --kubeconfig given to up or down, which write (or
	// delete) the local cluster's: refused, naming --kubeconfig-out.
	misplaced string
}

func (f *clusterFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "", "cluster file (default: the embedded default cluster)")
	cmd.Flags().Var(flagvalue.Name(&f.name, "", "the cluster's name"), "name", "cluster name (overrides the cluster file)")
	cmd.Flags().Var(flagvalue.OutFile(&f.kubeconfig, "", false), "kubeconfig-out", "where the local cluster's kubeconfig is written (default: "+outPath("<name>.kubeconfig")+")")
	cmd.Flags().StringVar(&f.backend, "cni-backend", "", "flannel back end, vxlan or host-gw (overrides the cluster file)")
	cmd.Flags().Var(flagvalue.Name(&f.version, "", "a Kubernetes release, e.g. "+kubelines.Default().Version), "kubernetes-version", "Kubernetes release of the cluster, on a supported line: "+kubelines.Supported()+
		"; a line's name (1.36) means its newest patch (overrides the cluster file's kubernetesVersion; default "+kubelines.Default().Version+")")
	cmd.Flags().Var(flagvalue.Int(&f.remote, -1, 0, config.MaxRemoteNodes, "how many Linux nodes join through the underlay"), "remote-nodes", "Linux nodes outside kind's network, joined through the routed underlay (overrides the cluster file's remoteNodes; needs root)")
	cmd.Flags().Var(flagvalue.Name(&f.probe, binPath("probe-linux-amd64"), "the Linux probe binary's path"), "probe", "Linux probe binary, loaded into the nodes as the probe image (see winconform images list)")
}

// refuseKubeconfig gives a command that makes or deletes the local
// cluster a --kubeconfig that says where the local cluster's kubeconfig
// goes instead (kind's --kubeconfig is the file it writes; the siblings'
// is the cluster to use).
func (f *clusterFlags) refuseKubeconfig(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.misplaced, "kubeconfig", "", "")
	_ = cmd.Flags().MarkHidden("kubeconfig")
}

// load reads the cluster file and applies the overrides. Its errors are
// refused input (usage): the file, or a flag's override.
func (f *clusterFlags) load() (kind.Config, error) {
	if f.misplaced != "" {
		return kind.Config{}, usage(fmt.Errorf("--kubeconfig %s: --kubeconfig names a cluster to test or use (e2e, sonobuoy run, join, reset); the local cluster's kubeconfig goes to --kubeconfig-out", f.misplaced))
	}
	cfg, err := kind.LoadConfig(f.config)
	if err != nil {
		return cfg, usage(fmt.Errorf("--config: %w", err))
	}
	if f.name != "" {
		cfg.Name = f.name
	}
	if f.backend != "" {
		cfg.CNI.Backend = f.backend
	}
	if f.remote >= 0 {
		cfg.RemoteNodes = f.remote
	}
	if f.version != "" {
		if cfg, err = cfg.WithKubernetesVersion(f.version); err != nil {
			return cfg, usage(fmt.Errorf("--kubernetes-version: %w", err))
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usage(fmt.Errorf("cluster config: %w", err))
	}
	if f.kubeconfig == "" {
		f.kubeconfig = outPath(cfg.Name + ".kubeconfig")
	}
	return cfg, nil
}

// options are the kind options for this invocation, with the probe image
// archive made from the probe binary when it exists.
func (f *clusterFlags) options() (kind.Options, error) {
	abs, err := filepath.Abs(f.kubeconfig)
	if err != nil {
		return kind.Options{}, err
	}
	opts := kindOptions(abs)
	opts.LogDir, opts.Log = outPath("logs"), errOut
	opts.Images = append(opts.Images, f.images...)
	if f.probe == "" {
		return opts, nil
	}
	// Named by the binary's digest, and written whole before it is renamed
	// into place: runs of other checkouts on this machine share the cache
	// directory, and must never load each other's probe.
	digest, err := fileDigest(f.probe)
	if err != nil {
		return opts, err
	}
	archive := filepath.Join(opts.CacheDir, "images", "probe-"+digest+".tar")
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return opts, err
	}
	if _, err := os.Stat(archive); err != nil {
		if err := atomicfile.Produce(archive, 0o644, func(tmp string) error { return images.ProbeArchive(f.probe, tmp) }); err != nil {
			return opts, err
		}
	}
	opts.Images = append(opts.Images, kind.ImageArchive{Name: images.Ref("probe"), Path: archive})
	return opts, nil
}

// probeKind is the probe binary --probe names.
var probeKind = userfile.Kind{What: "Linux probe binary (`make build` writes it)", Max: userfile.BinaryMax}

// fileDigest is the first 12 hex digits of the SHA-256 of the probe
// binary --probe names, read through the door for users' files.
func fileDigest(path string) (string, error) {
	f, err := userfile.Open("--probe", path, probeKind)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// kindOptions are the options of every use of the local cluster: its
// kubeconfig, the shared cache (node images), and the docker shim (where
// this host needs one) in this binary's _output.
func kindOptions(kubeconfig string) kind.Options {
	return kind.Options{Kubeconfig: kubeconfig, CacheDir: nodeimage.DefaultCacheDir(), ShimDir: abs(outPath("shim"))}
}

func upCmd() *cobra.Command {
	var f clusterFlags
	var w windowsFlags
	var junitDir string
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create the local kind cluster (or check and reuse it) and load the test images",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := w.precheck(&f); err != nil {
				return err
			}
			if err := checkStepDir(junitDir); err != nil {
				return err
			}
			res, err := up(cmd, &f)
			if err != nil {
				return stepFailedIn(cmd.ErrOrStderr(), junitDir, "up", err)
			}
			out, _ := json.MarshalIndent(res, "", "  ")
			fmt.Fprintln(cmd.ErrOrStderr(), string(out))
			fmt.Fprintf(cmd.ErrOrStderr(), "cluster %q is ready: export KUBECONFIG=%s\n", res.Name, res.Kubeconfig)
			if w.inventory != "" {
				return stepFailedIn(cmd.ErrOrStderr(), junitDir, "join", joinAfterUp(cmd, &f, &w, cmd.ErrOrStderr()))
			}
			return nil
		},
	}
	f.register(cmd)
	f.refuseKubeconfig(cmd)
	w.registerUp(cmd)
	cmd.Flags().Var(flagvalue.Dir(&junitDir, "", "a failure's JUnit file"), "report-dir", "when up or the join fails, write a JUnit file with the failed step into this report directory (as e2e does)")
	return cmd
}

// up makes the local cluster, or reuses it when it exists and was made
// from the same shape (the cluster file with the flags' overrides; see
// infra/kind.CheckExistingShape), and records the shape on a cluster it made.
func up(cmd *cobra.Command, f *clusterFlags) (*kind.Result, error) {
	cfg, err := f.load()
	if err != nil {
		return nil, usage(err)
	}
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	c, err := kind.New(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	exists, err := c.Exists()
	if err != nil {
		return nil, err
	}
	if exists {
		if err := kind.CheckExistingShape(ctx, cfg, cmd.ErrOrStderr()); err != nil {
			return nil, err
		}
	}
	res, err := c.Up(ctx)
	if err != nil {
		return nil, err
	}
	if !res.Reused {
		cs, err := clientFor(res.Kubeconfig)
		if err == nil {
			err = kind.RecordShape(ctx, cs, cfg)
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %q: recording its shape: %w", cfg.Name, err)
		}
	}
	return res, nil
}

func downCmd() *cobra.Command {
	var f clusterFlags
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Delete the local kind cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load()
			if err != nil {
				return usage(err)
			}
			opts := kindOptions(abs(f.kubeconfig))
			opts.Log = cmd.ErrOrStderr()
			c, err := kind.New(cmd.Context(), cfg, opts)
			if err != nil {
				return err
			}
			existed, err := c.Down()
			if err != nil {
				return fmt.Errorf("deleting cluster %q: %w", cfg.Name, err)
			}
			if existed {
				fmt.Fprintf(cmd.ErrOrStderr(), "deleted cluster %q\n", cfg.Name)
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "no cluster %q to delete\n", cfg.Name)
			}
			return nil
		},
	}
	f.register(cmd)
	f.refuseKubeconfig(cmd)
	return cmd
}
