package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/internal/suiterun"
)

func sweepCmd() *cobra.Command {
	var (
		cf        clusterFlags
		vmsFile   string
		olderThan time.Duration
		dryRun    bool
	)
	cmd := &cobra.Command{
		Use:   "sweep [--older-than D] [--dry-run] [--kubeconfig K] [--vms FILE]",
		Short: "Remove what dead runs left: in the cluster (objects, node labels and taints) and, with --vms, their machines",
		Long: `sweep removes what runs that are no longer alive left behind. A run keeps a
heartbeat in the cluster while it runs (a Lease in the namespace ` + runmark.LeaseNamespace + `,
named by the run, renewed every 15 s); a run whose heartbeat has been silent
longer than --older-than (or than the Lease's own duration, when longer) is
dead, and so is a run without a heartbeat whose newest object is older than
--older-than. Of each dead run, sweep deletes the namespaces, PersistentVolumes,
ClusterRoles, RuntimeClasses and simulated nodes labelled ` + runmark.RunLabel + `=<run>,
takes back the labels and taints it added to nodes (not the nodes), and
removes its heartbeat. A live run's things are never touched. Every run does
the same before its specs (winconform e2e --dead-after).

The cluster is --kubeconfig, else the local cluster's (--config, --name).
With --vms FILE it also deletes the machines of that provider made longer
than --older-than ago, but those of runs still alive and those tagged
` + vms.TagKeep + `=true; machines have no heartbeat of their own while they are made,
so --older-than is required with --vms (longer than making them takes, e.g.
24h). --dry-run lists what would go and removes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if vmsFile != "" {
				if !cmd.Flags().Changed("older-than") {
					return usage(fmt.Errorf("--vms needs --older-than DURATION (%s or more, such as 24h): machines have no heartbeat while they are made, and younger ones may belong to a run still going", machineSweepFloor))
				}
				// The machines' floor (the flag's own is the cluster's).
				if err := machineAge(new(time.Duration)).Set(olderThan.String()); err != nil {
					return usage(fmt.Errorf("--older-than with --vms: %w", err))
				}
				if _, err := config.Load[config.Machines](vmsFile, nil); err != nil {
					return usage(fmt.Errorf("--vms: %w", err))
				}
			}
			kubeconfig, err := sweepTarget(&cf, vmsFile != "")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			var live func(string) bool
			if kubeconfig != "" {
				cs, err := clientFor(kubeconfig)
				if err != nil {
					return err
				}
				rep, err := sweepCluster(cmd.Context(), cs, olderThan, dryRun, out)
				if err != nil {
					return err
				}
				alive := map[string]bool{}
				for _, r := range rep.Live {
					alive[r.ID] = true
				}
				live = func(run string) bool { return alive[run] }
			} else {
				fmt.Fprintln(out, "no cluster to sweep (no --kubeconfig, and the local cluster's kubeconfig is not there): the machines only")
			}
			if vmsFile == "" {
				return nil
			}
			return sweepVMs(cmd.Context(), vmsFile, olderThan, lifecycle.DownOptions{Live: live, DryRun: dryRun, Log: cmd.ErrOrStderr()}, out)
		},
	}
	registerClusterLookup(cmd, &cf)
	cmd.Flags().Lookup("kubeconfig").Usage = "kubeconfig of the cluster to sweep (default: the local cluster's, " + outPath("<name>.kubeconfig") + ")"
	cmd.Flags().StringVar(&vmsFile, "vms", "", "a VM file: also delete its provider's machines of dead runs (needs --older-than)")
	cmd.Flags().Var(flagvalue.Duration(&olderThan, runmark.DefaultDeadAfter, 0, "", "2m"), "older-than", fmt.Sprintf("a run silent (or, without a heartbeat, untouched) this long is dead (with --vms: at least %s)", machineSweepFloor))
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed, remove nothing")
	return cmd
}

// sweepTarget is the kubeconfig of the cluster to sweep: --kubeconfig,
// else the local cluster's when it is there; "" (none) only when there are
// machines to sweep instead.
func sweepTarget(cf *clusterFlags, machines bool) (string, error) {
	given := cf.kubeconfig
	if given != "" {
		return given, checkKubeconfig(given)
	}
	if _, err := cf.load(); err != nil {
		return "", usage(err)
	}
	if _, err := os.Stat(cf.kubeconfig); err == nil {
		return cf.kubeconfig, nil
	}
	if machines {
		return "", nil
	}
	return "", usage(fmt.Errorf("no cluster to sweep: the local cluster's kubeconfig %s is not there (`make up` makes it); give --kubeconfig for another cluster", cf.kubeconfig))
}

// sweepCluster removes (or, dry, lists) what dead runs left in the
// cluster, a line per run, and a last line with the counts.
func sweepCluster(ctx context.Context, cs kubernetes.Interface, olderThan time.Duration, dryRun bool, out io.Writer) (suiterun.SweepReport, error) {
	rep, err := suiterun.SweepDead(ctx, cs, suiterun.SweepOptions{OlderThan: olderThan, DryRun: dryRun, Log: out})
	verb := "removed"
	if dryRun {
		verb = "would remove (dry run: nothing was removed)"
	}
	fmt.Fprintf(out, "cluster: %d dead run(s), %s %d object(s) and node change(s); %d live run(s) left alone\n", len(rep.Dead), verb, rep.Removed(), len(rep.Live))
	return rep, err
}

// sweepVMs deletes (or, dry, lists) the machines of dead runs
// (lifecycle.Sweep) of the VM file's provider: winconform sweep --vms and
// winconform vms sweep.
func sweepVMs(ctx context.Context, file string, olderThan time.Duration, o lifecycle.DownOptions, out io.Writer) error {
	_, p, err := openVMs(ctx, file)
	if err != nil {
		return err
	}
	defer p.Close()
	res, err := lifecycle.Sweep(ctx, p, olderThan, time.Now(), o)
	verb := "deleted"
	if o.DryRun {
		verb = "would be deleted (dry run: none was)"
	}
	fmt.Fprintf(out, "machines: %d %s, %d kept (tagged %s), %d of live runs, %d younger than %v\n", len(res.Deleted), verb, len(res.Kept), vms.TagKeep, len(res.Live), len(res.Young), olderThan)
	return err
}
