package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/infra/windows"
)

// underlayMachines are --inventory's machines as the underlay sees them,
// with a Windows side for each (underlay.WindowsMachines); none without an
// inventory. closeAll closes the connections.
func (w *windowsFlags) underlayMachines(ctx context.Context, log io.Writer) ([]underlay.Machine, map[string]underlay.Side, func(), error) {
	if w == nil || w.inventory == "" {
		return nil, map[string]underlay.Side{}, func() {}, nil
	}
	inv, err := w.machines()
	if err != nil {
		return nil, nil, nil, err
	}
	out, sides, err := underlay.WindowsMachines(ctx, w.inventory, inv, log)
	return out, sides, func() {}, err
}

// inventoryUnderlay is the whole inventory as the underlay sees it
// (underlay.Inventory: all its machines, whichever --machine selects: the
// host's rules are the cluster's, and applying a plan removes the rules of
// machines it lacks).
func (w *windowsFlags) inventoryUnderlay(ctx context.Context) ([]underlay.Machine, error) {
	if w.inventory == "" {
		return nil, nil
	}
	inv, err := w.load()
	if err != nil {
		return nil, err
	}
	return underlay.Inventory(ctx, w.inventory, inv.Machines)
}

// precheckUnderlay refuses, before any cluster work, an inventory whose
// routed machines the harness could not give their underlay
// (underlay.CheckRouted).
func (w *windowsFlags) precheckUnderlay(ctx context.Context) error {
	ms, err := w.inventoryUnderlay(ctx)
	if err != nil {
		return err
	}
	return underlay.CheckRouted(w.inventory, ms)
}

// joinUnderlay makes the kind host's side of the underlay for the
// inventory's machines (with the cluster's remote nodes', so that none is
// taken away), and returns each machine's routes for the join's
// underlay-route step. Without the machine in the plan (drop), its rules
// go: what reset does.
func (w *windowsFlags) joinUnderlay(ctx context.Context, cf *clusterFlags, log io.Writer, drop map[string]bool) (map[string][]windows.UnderlayRoute, error) {
	c, ms, full, err := w.underlayPlan(ctx, cf, log)
	if c == nil || err != nil {
		return nil, err
	}
	var kept []underlay.Machine
	for _, m := range ms {
		if !drop[m.Name] {
			kept = append(kept, m)
		}
	}
	plan, err := c.UnderlayPlan(ctx, kept...)
	if err != nil {
		return nil, err
	}
	routes := underlay.JoinRoutes(full)
	if !full.Needed() && os.Geteuid() != 0 {
		return routes, nil // nothing to add, and no rule this process could read
	}
	host, err := underlay.NewHost()
	if err != nil {
		return nil, err
	}
	changes, err := host.Apply(plan)
	for _, ch := range changes {
		fmt.Fprintf(log, "underlay: %s\n", ch)
	}
	return routes, err
}

// underlayRoutes are the inventory's machines' routes, by machine, without
// touching the host (what reset removes).
func (w *windowsFlags) underlayRoutes(ctx context.Context, cf *clusterFlags, log io.Writer) (map[string][]windows.UnderlayRoute, error) {
	c, _, plan, err := w.underlayPlan(ctx, cf, log)
	if c == nil || err != nil {
		return nil, err
	}
	return underlay.JoinRoutes(plan), nil
}

// underlayPlan is the local cluster, the inventory's machines joined
// through the underlay, and the plan for all of them; no cluster when the
// inventory has no such machine.
func (w *windowsFlags) underlayPlan(ctx context.Context, cf *clusterFlags, log io.Writer) (*kind.Cluster, []underlay.Machine, underlay.Plan, error) {
	ms, err := w.inventoryUnderlay(ctx)
	if err != nil || len(ms) == 0 {
		return nil, nil, underlay.Plan{}, err
	}
	cfg, err := cf.load()
	if err != nil {
		return nil, nil, underlay.Plan{}, err
	}
	opts := kindOptions(abs(cf.kubeconfig))
	opts.Log = log
	c, err := kind.New(ctx, cfg, opts)
	if err != nil {
		return nil, nil, underlay.Plan{}, err
	}
	plan, err := c.UnderlayPlan(ctx, ms...)
	if err != nil {
		return nil, nil, underlay.Plan{}, err
	}
	return c, ms, plan, nil
}
