package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/framework/underlaypods"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/internal/atomicfile"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/kubefile"
)

// underlayCheck is the check before the suites: every machine joined
// through the underlay (the cluster's remote nodes, the inventory's
// machines) climbs the rungs. It returns nil when there is no such machine.
type underlayCheck struct {
	cf *clusterFlags
	w  *windowsFlags
	// pods runs the pods rung (on by default).
	pods bool
	log  io.Writer
}

// run checks and returns the report, and an error naming each failure.
func (u underlayCheck) run(ctx context.Context) (*underlay.Report, error) {
	// Its own input (the cluster file, the inventory) before Docker.
	cfg, err := u.cf.load()
	if err != nil {
		return nil, usage(err)
	}
	if u.w != nil && u.w.inventory != "" {
		if _, err := u.w.machines(); err != nil {
			return nil, err
		}
	}
	kc, err := filepath.Abs(u.cf.kubeconfig)
	if err != nil {
		return nil, err
	}
	c, err := kind.New(ctx, cfg, kind.Options{Kubeconfig: kc, Log: u.log})
	if err != nil {
		return nil, err
	}
	if ok, err := c.Exists(); err != nil || !ok {
		return nil, fmt.Errorf("cluster %q does not exist: make it first (winconform up)", cfg.Name)
	}
	more, sides, closeAll, err := u.w.underlayMachines(ctx, u.log)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	plan, err := c.UnderlayPlan(ctx, more...)
	if err != nil {
		return nil, err
	}
	if len(plan.Machines) == 0 {
		return nil, nil
	}
	if err := underlay.CheckRoot("the underlay check"); err != nil {
		return nil, err
	}
	linux, cp, err := c.UnderlaySides(ctx)
	if err != nil {
		return nil, err
	}
	for name, s := range linux {
		if _, ok := sides[name]; !ok {
			sides[name] = s
		}
	}
	env := underlay.CheckEnv{Plan: plan, Sides: sides, Kind: cp}
	if plan.Needed() {
		if env.Host, err = underlay.NewHost(); err != nil {
			return nil, err
		}
	}
	if u.pods {
		restCfg, cs, err := kubefile.Clients("--kubeconfig", kc, 30*time.Second)
		if err != nil {
			return nil, err
		}
		env.Pods = &underlaypods.Prober{Config: restCfg, Clientset: cs}
	}
	fmt.Fprintf(u.log, "underlay check: %d machine(s) joined through the underlay of cluster %q (kind network %s)\n", len(plan.Machines), cfg.Name, plan.Network.Subnet)
	start := time.Now()
	rep := underlay.Check(ctx, env)
	fmt.Fprint(u.log, rep.String())
	fmt.Fprintf(u.log, "underlay check: done in %s\n", time.Since(start).Round(100*time.Millisecond))
	return &rep, rep.Err()
}

func underlayCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "underlay",
		Short: "The network path between the kind network and the machines joined from outside it: check it, show it",
	}
	cmd.AddCommand(underlayCheckCmd(), underlayPlanCmd())
	return cmd
}

func underlayCheckCmd() *cobra.Command {
	var cf clusterFlags
	var w windowsFlags
	var noPods bool
	var out string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the underlay of every machine joined through it, rung by rung, naming what is missing and the fix",
		Long: `check climbs, for every machine joined through the underlay (the cluster's
remote nodes, the inventory's machines), the rungs: the kind host's rules,
the machine's route to the kind network, the API server from the machine,
the kubelet from the control plane, the tunnel endpoints' own addresses,
VXLAN through the kind host both ways, and a pod on each side. A rung that
fails names the rule or route that is missing and the command that fixes
it; the rungs above it are not tried. Needs root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if info, err := os.Stat(out); out != "" && err == nil && info.IsDir() {
				return usage(fmt.Errorf("--out %s is a directory: give the file to write the report to, e.g. %s", out, filepath.Join(out, "underlay.json")))
			}
			rep, err := underlayCheck{cf: &cf, w: &w, pods: !noPods, log: cmd.ErrOrStderr()}.run(cmd.Context())
			if rep == nil && err == nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "underlay check: no machine is joined through the underlay")
				return nil
			}
			if out != "" && rep != nil {
				if werr := atomicfile.WriteJSON(out, rep); werr != nil {
					return errors.Join(err, werr)
				}
			}
			return err
		},
	}
	registerClusterLookup(cmd, &cf)
	cmd.Flags().StringVar(&w.inventory, "inventory", "", "inventory of Windows machines (YAML) joined through the underlay")
	cmd.Flags().BoolVar(&noPods, "no-pods", false, "leave out the pods rung (and VXLAN, which counts its packets)")
	cmd.Flags().Var(flagvalue.OutFile(&out, "", false), "out", "write the report as JSON to this file")
	return cmd
}

func underlayPlanCmd() *cobra.Command {
	var cf clusterFlags
	var w windowsFlags
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print the underlay of the cluster and the inventory: its machines, the kind host's rules, the machines' routes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			if w.inventory != "" {
				if _, err := w.machines(); err != nil {
					return err
				}
			}
			kc, _ := filepath.Abs(cf.kubeconfig)
			c, err := kind.New(cmd.Context(), cfg, kind.Options{Kubeconfig: kc, Log: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			more, _, closeAll, err := w.underlayMachines(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer closeAll()
			plan, err := c.UnderlayPlan(cmd.Context(), more...)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(plan)
		},
	}
	registerClusterLookup(cmd, &cf)
	cmd.Flags().StringVar(&w.inventory, "inventory", "", "inventory of Windows machines (YAML) joined through the underlay")
	return cmd
}
