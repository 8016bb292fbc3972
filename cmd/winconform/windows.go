package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/internal/flagvalue"
)

// windowsFlags are the flags of the commands that work on the inventory's
// Windows machines.
type windowsFlags struct {
	inventory string
	// vms is a VM file whose machines are to be made and joined: its
	// machine block is checked as an inventory's machines are.
	vms         string
	machine     string
	artifacts   string
	collectLogs bool
	check       bool
	// env resolves the variables the files reference; the process's
	// environment when nil (--render: none is read).
	env config.Env

	// loaded is the inventory, read once per command (load).
	loaded  *config.Inventory
	loadErr error
}

// load reads the inventory once: every step of a command sees the same
// machines, and its secrets are read once.
//
// Its error is refused input (usage), naming --inventory.
func (w *windowsFlags) load() (*config.Inventory, error) {
	if w.loaded == nil && w.loadErr == nil {
		w.loaded, w.loadErr = config.Load[config.Inventory](w.inventory, w.env)
		if w.loadErr != nil {
			w.loadErr = usage(fmt.Errorf("--inventory: %w", w.loadErr))
		}
	}
	return w.loaded, w.loadErr
}

func (w *windowsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.inventory, "inventory", "", "inventory of Windows machines (YAML)")
	cmd.Flags().Var(flagvalue.Name(&w.machine, "", "a machine's name in the inventory"), "machine", "only this machine of the inventory (default: every machine)")
	cmd.Flags().Var(flagvalue.Dir(&w.artifacts, outPath("windows"), "the reports, WinRM transcripts and machine logs"), "artifacts", "where reports, WinRM transcripts and machine logs go")
}

// registerUp adds to `up` the flags that join machines after it.
func (w *windowsFlags) registerUp(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.inventory, "inventory", "", "inventory of Windows machines (YAML) to join once the cluster is up")
	cmd.Flags().Var(flagvalue.Dir(&w.artifacts, outPath("windows"), "the join reports, WinRM transcripts and machine logs"), "windows-artifacts", "with --inventory: where the join reports, WinRM transcripts and machine logs go")
}

// machines loads the inventory and selects the machines.
//
// Its errors are refused input (usage): the file, or --machine.
func (w *windowsFlags) machines() ([]config.Machine, error) {
	inv, err := w.load()
	if err != nil {
		return nil, err
	}
	if w.machine == "" {
		return inv.Machines, nil
	}
	m, ok := inv.Machine(w.machine)
	if !ok {
		var names []string
		for _, m := range inv.Machines {
			names = append(names, m.Name)
		}
		return nil, usage(fmt.Errorf("--machine %q: %s has no machine of that name (%sit has %s)", w.machine, w.inventory, config.DidYouMean(w.machine, names), strings.Join(names, ", ")))
	}
	return []config.Machine{m}, nil
}

// precheck fails before any work when the inventory or the cluster file
// cannot work for Windows machines.
func (w *windowsFlags) precheck(cf *clusterFlags) error {
	return usage(w.checkInputs(cf))
}

func (w *windowsFlags) checkInputs(cf *clusterFlags) error {
	if w.inventory == "" && w.vms == "" && !w.check {
		return nil
	}
	machines, _, _, err := w.inputs(cf)
	if err != nil {
		return err
	}
	// The routed underlay changes this host: refused without root, up front.
	if w.vms != "" {
		if shape, err := underlay.ShapeOf(machines[0]); err != nil || shape != underlay.Routed {
			return err
		}
		return underlay.CheckRoot(fmt.Sprintf("joining %s's machines through the routed underlay", w.vms))
	}
	return w.precheckUnderlay(context.Background())
}

// inputs loads the machines (the inventory's, or the VM file's machine
// block under its name prefix: each machine the VM file would make is it)
// and the cluster file, and checks that the cluster can take them: its API
// server address, and the versions each machine would run against its
// line (the join checks them again against the API server's own version).
func (w *windowsFlags) inputs(cf *clusterFlags) (machines []config.Machine, cfg kind.Config, source string, err error) {
	source = w.inventory
	switch {
	case w.vms != "":
		f, err := config.Load[config.Machines](w.vms, w.env)
		if err != nil {
			return nil, cfg, "", fmt.Errorf("--vms: %w", err)
		}
		m := f.Machine
		m.Name = f.NamePrefix + "-<run>-1"
		machines, source = []config.Machine{m}, w.vms+" (its machine block)"
	case w.inventory != "":
		if machines, err = w.machines(); err != nil {
			return nil, cfg, "", err
		}
	}
	if cfg, err = cf.load(); err != nil {
		return nil, cfg, "", err
	}
	if _, err := kind.WindowsAPIServerAddress(cfg); err != nil {
		return nil, cfg, "", fmt.Errorf("cluster %q cannot take Windows machines: %w", cfg.Name, err)
	}
	if err := cni.ForWindows(cfg.CNI.Backend, cfg.CNI.VNI, cfg.CNI.Port); err != nil {
		return nil, cfg, "", fmt.Errorf("cluster %q cannot take Windows machines: %w", cfg.Name, err)
	}
	if err := windows.CheckVersions(machines, cfg.KubernetesVersion); err != nil {
		return nil, cfg, "", fmt.Errorf("%s: %w", source, err)
	}
	return machines, cfg, source, nil
}

// render writes into dir what a join of the machines would send them, and
// the objects it would apply to the cluster, touching neither
// (docs/windows-machines.md, "Review a join before it runs").
func (w *windowsFlags) render(out io.Writer, cf *clusterFlags, dir string) error {
	// The join never sends a password in a script: a rendering reads none.
	w.env = func(name string) (string, bool) { return "<$" + name + ">", true }
	w.loaded, w.loadErr = nil, nil // read again, without the secrets
	machines, cfg, source, err := w.inputs(cf)
	if err != nil {
		return usage(err)
	}
	addr, _ := kind.WindowsAPIServerAddress(cfg)
	port := int(cfg.Networking.APIServerPort)
	if port == 0 {
		port = 6443 // kind picks the port when the cluster is made
	}
	endpoint := net.JoinHostPort(addr, strconv.Itoa(port))
	r, err := windows.RenderJoinFiles(dir, machines, windows.RenderOptions{KubernetesVersion: cfg.KubernetesVersion, Endpoint: endpoint},
		windows.PrepareOptions{APIServerEndpoint: endpoint, ServiceSubnet: cfg.Networking.ServiceSubnet, PodSubnet: cfg.Networking.PodSubnet,
			VNI: cfg.CNI.VNI, Port: cfg.CNI.Port})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rendered the join of %d machine(s) of %s against cluster %q (Kubernetes %s, API server %s) into %s, touching no machine and no cluster:\n%s",
		len(machines), source, cfg.Name, cfg.KubernetesVersion, endpoint, dir, r)
	return nil
}

// controlPlane finds the cluster and readies it for Windows nodes.
func (w *windowsFlags) controlPlane(cmd *cobra.Command, cf *clusterFlags) (*kind.WindowsControlPlane, error) {
	cfg, err := cf.load()
	if err != nil {
		return nil, err
	}
	opts := kindOptions(abs(cf.kubeconfig))
	opts.Log = cmd.ErrOrStderr()
	c, err := kind.New(cmd.Context(), cfg, opts)
	if err != nil {
		return nil, err
	}
	return c.WindowsControlPlane(cmd.Context())
}

// join prepares the control plane and joins each machine, one after the
// other (windows.JoinAll): each machine's report and transcript go to the
// artifacts directory, and the logs of those that fail.
func (w *windowsFlags) join(cmd *cobra.Command, cf *clusterFlags) error {
	var machines []config.Machine
	if !w.check {
		var err error
		if machines, err = w.machines(); err != nil {
			return err
		}
	}
	cp, err := w.controlPlane(cmd, cf)
	if err != nil {
		return err
	}
	log := cmd.ErrOrStderr()
	ctx := cmd.Context()
	err = windows.PrepareControlPlane(ctx, cp.RESTConfig(), windows.PrepareOptions{
		APIServerEndpoint: cp.Endpoint(), ServiceSubnet: cp.ServiceSubnet(), Log: log,
	})
	if err != nil {
		return err
	}
	if w.check {
		jc, err := windows.CheckJoinCommand(ctx, cp)
		if err != nil {
			return fmt.Errorf("the cluster cannot join machines: %w", err)
		}
		fmt.Fprintf(log, "the cluster is ready for Windows machines: %s (a bootstrap token was made, checked and deleted)\n", jc)
		return nil
	}
	// The kind host's side of the underlay, and each machine's routes for
	// its underlay-route step (infra/underlay).
	routes, err := w.joinUnderlay(ctx, cf, log, nil)
	if err != nil {
		return err
	}
	_, err = windows.JoinAll(ctx, machines, cp, windows.FleetOptions{Artifacts: w.artifacts, CollectLogs: w.collectLogs, Log: log, UnderlayRoutes: routes})
	var failed *windows.FleetError
	if err != nil && !errors.As(err, &failed) {
		return err
	}
	for _, p := range windows.LinuxOnlyDaemonSetsProblems(ctx, cp.Clientset()) {
		fmt.Fprintf(log, "warning: %s\n", p)
	}
	fmt.Fprintf(log, "reports and transcripts: %s\n", w.artifacts)
	return err
}

func joinCmd() *cobra.Command {
	var cf clusterFlags
	var w windowsFlags
	var junitDir, render string
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Join the inventory's Windows machines to the local cluster over WinRM",
		Long: `join readies the cluster for Windows nodes (the Windows kube-proxy and flannel
HostProcess DaemonSets; the Linux-only DaemonSets kept off Windows nodes), then
joins each machine of the inventory: it installs containerd, the kubelet,
kube-proxy and the CNI plugins, runs kubeadm join, waits for the node to be
Ready and applies the inventory's labels and taints. Joining a joined machine
changes nothing. Reports and WinRM transcripts go to --artifacts/<machine>/,
and the logs of a machine that fails to join to --artifacts/logs/<machine>/.

With --render DIR it joins nothing: it writes, for each machine of the
inventory (or of the VM file), the scripts the join would send, their
parameters and the files they carry (containerd's config.toml, kubeadm
join's JoinConfiguration, discovery kubeconfig and kubelet patch, the
kubelet's command line), and the cluster's Windows objects, for review.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if render != "" {
				if w.check || w.inventory == "" && w.vms == "" || w.inventory != "" && w.vms != "" {
					return usage(errors.New("join --render DIR needs --inventory FILE or --vms FILE (one of them), and not --check"))
				}
				return w.render(cmd.OutOrStdout(), &cf, render)
			}
			if w.vms != "" {
				return usage(errors.New("join --vms FILE renders only (--render DIR): a VM file's machines are made and joined by up and e2e"))
			}
			if !w.check && w.inventory == "" {
				return usage(errors.New("join needs --inventory FILE (or --check, to only ready the cluster)"))
			}
			if err := w.precheck(&cf); err != nil {
				return err
			}
			if err := checkStepDir(junitDir); err != nil {
				return err
			}
			return stepFailedIn(cmd.ErrOrStderr(), junitDir, "join", w.join(cmd, &cf))
		},
	}
	registerClusterLookup(cmd, &cf)
	w.register(cmd)
	cmd.Flags().Var(flagvalue.Dir(&junitDir, "", "a failure's JUnit file"), "report-dir", "when the join fails, write a JUnit file with the failed step into this report directory (as e2e does)")
	cmd.Flags().BoolVar(&w.collectLogs, "collect-logs", false, "collect every machine's logs into --artifacts/logs, not only those of machines that fail")
	cmd.Flags().BoolVar(&w.check, "check", false, "only ready the cluster and prove it can join machines (make, check and delete a join command); no machine is touched")
	cmd.Flags().Var(flagvalue.Dir(&render, "", "the rendered scripts and files"), "render", "write into this directory, per machine, exactly the scripts, parameters and files the join would send (a placeholder token and CA), and the cluster's Windows objects; no machine and no cluster is contacted")
	cmd.Flags().StringVar(&w.vms, "vms", "", "with --render: the VM file whose machines to render (its machine block)")
	return cmd
}

func resetCmd() *cobra.Command {
	var cf clusterFlags
	var w windowsFlags
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Remove the inventory's Windows machines from the local cluster (they can join again)",
		Long: `reset drains and deletes each machine's node, then, on the machine, runs
kubeadm reset, deletes the kubelet service, and removes the node's
configuration, the CNI configuration and flannel's HNS networks. The runtime
and the binaries stay, so that the machine can join again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if w.inventory == "" {
				return usage(errors.New("reset needs --inventory FILE (the machines to reset)"))
			}
			machines, err := w.machines()
			if err != nil {
				return usage(err)
			}
			cp, err := w.controlPlane(cmd, &cf)
			if err != nil {
				return err
			}
			// The machines' underlay routes go with them, and their rules
			// on the kind host after them.
			reset := map[string]bool{}
			for _, m := range machines {
				reset[m.Name] = true
			}
			routes, err := w.underlayRoutes(cmd.Context(), &cf, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			_, err = windows.ResetAll(cmd.Context(), machines, cp, windows.FleetOptions{Artifacts: w.artifacts, Log: cmd.ErrOrStderr(), UnderlayRoutes: routes})
			if _, uerr := w.joinUnderlay(cmd.Context(), &cf, cmd.ErrOrStderr(), reset); uerr != nil {
				return errors.Join(err, uerr)
			}
			return err
		},
	}
	registerClusterLookup(cmd, &cf)
	w.register(cmd)
	return cmd
}

// registerClusterLookup registers the flags that find the cluster.
func registerClusterLookup(cmd *cobra.Command, f *clusterFlags) {
	f.remote = -1 // the cluster file's remoteNodes
	cmd.Flags().StringVar(&f.config, "config", "", "cluster file (default: the embedded default cluster)")
	cmd.Flags().Var(flagvalue.Name(&f.name, "", "the cluster's name"), "name", "cluster name (overrides the cluster file)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the local cluster's kubeconfig (default: "+outPath("<name>.kubeconfig")+")")
}

// joinAfterUp joins the inventory's machines to the cluster up just made.
func joinAfterUp(cmd *cobra.Command, cf *clusterFlags, w *windowsFlags, out io.Writer) error {
	fmt.Fprintf(out, "joining the Windows machines of %s\n", w.inventory)
	return w.join(cmd, cf)
}
