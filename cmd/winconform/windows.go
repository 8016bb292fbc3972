package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/infra/windows"
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
}

func (w *windowsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.inventory, "inventory", "", "inventory of Windows machines (YAML)")
	cmd.Flags().StringVar(&w.machine, "machine", "", "only this machine of the inventory (default: every machine)")
	cmd.Flags().StringVar(&w.artifacts, "artifacts", outPath("windows"), "where reports, WinRM transcripts and machine logs go")
}

// registerUp adds to `up` the flags that join machines after it.
func (w *windowsFlags) registerUp(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.inventory, "inventory", "", "inventory of Windows machines (YAML) to join once the cluster is up")
	cmd.Flags().StringVar(&w.artifacts, "windows-artifacts", outPath("windows"), "with --inventory: where the join reports, WinRM transcripts and machine logs go")
}

// machines loads the inventory and selects the machines.
func (w *windowsFlags) machines() ([]config.Machine, error) {
	inv, err := config.Load[config.Inventory](w.inventory, nil)
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
		return nil, fmt.Errorf("--machine %q: %s has no machine of that name (%sit has %s)", w.machine, w.inventory, config.DidYouMean(w.machine, names), strings.Join(names, ", "))
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
	var machines []config.Machine
	source := w.inventory
	switch {
	case w.vms != "":
		// The machines to be made: each is the VM file's machine block,
		// under its name prefix; checked before the first is made.
		f, err := config.Load[config.Machines](w.vms, nil)
		if err != nil {
			return err
		}
		m := f.Machine
		m.Name = f.NamePrefix + "-<run>-1"
		machines, source = []config.Machine{m}, w.vms+" (its machine block)"
	case w.inventory != "":
		var err error
		if machines, err = w.machines(); err != nil {
			return err
		}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	if _, err := kind.WindowsAPIServerAddress(cfg); err != nil {
		return fmt.Errorf("cluster %q cannot take Windows machines: %w", cfg.Name, err)
	}
	// The versions each machine would run against this cluster's line:
	// refused here, before the cluster is made or readied (the join checks
	// them again against the API server's own version).
	if err := windows.CheckVersions(machines, cfg.KubernetesVersion); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	// The routed underlay changes this host: refused without root, up front.
	if w.vms != "" {
		if shape, err := machineShape(machines[0]); err != nil || shape != underlay.Routed {
			return err
		}
		return underlay.CheckRoot(fmt.Sprintf("joining %s's machines through the routed underlay", w.vms))
	}
	return w.precheckUnderlay(context.Background())
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
	var junitDir string
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Join the inventory's Windows machines to the local cluster over WinRM",
		Long: `join readies the cluster for Windows nodes (the Windows kube-proxy and flannel
HostProcess DaemonSets; the Linux-only DaemonSets kept off Windows nodes), then
joins each machine of the inventory: it installs containerd, the kubelet,
kube-proxy and the CNI plugins, runs kubeadm join, waits for the node to be
Ready and applies the inventory's labels and taints. Joining a joined machine
changes nothing. Reports and WinRM transcripts go to --artifacts/<machine>/,
and the logs of a machine that fails to join to --artifacts/logs/<machine>/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	cmd.Flags().StringVar(&junitDir, "report-dir", "", "when the join fails, write a JUnit file with the failed step into this report directory (as e2e does)")
	cmd.Flags().BoolVar(&w.collectLogs, "collect-logs", false, "collect every machine's logs into --artifacts/logs, not only those of machines that fail")
	cmd.Flags().BoolVar(&w.check, "check", false, "only ready the cluster and prove it can join machines (make, check and delete a join command); no machine is touched")
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
	cmd.Flags().StringVar(&f.name, "name", "", "cluster name (overrides the cluster file)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the local cluster's kubeconfig (default: "+outPath("<name>.kubeconfig")+")")
}

// joinAfterUp joins the inventory's machines to the cluster up just made.
func joinAfterUp(cmd *cobra.Command, cf *clusterFlags, w *windowsFlags, out io.Writer) error {
	fmt.Fprintf(out, "joining the Windows machines of %s\n", w.inventory)
	return w.join(cmd, cf)
}
