package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
)

// underlayMachines are the inventory's machines as the underlay sees them
// (none without an inventory), with a Windows side for each, reached over
// WinRM; closeAll closes the connections.
//
// A machine that answers WinRM but not as Windows (the harness's simulated
// machines behind the WS-Management stand-in: windows.Identify) has no
// network of its own to check, and is left out, said in log.
func (w *windowsFlags) underlayMachines(ctx context.Context, log io.Writer) ([]underlay.Machine, map[string]underlay.Side, func(), error) {
	sides := map[string]underlay.Side{}
	if w == nil || w.inventory == "" {
		return nil, sides, func() {}, nil
	}
	inv, err := w.machines()
	if err != nil {
		return nil, nil, nil, err
	}
	var out []underlay.Machine
	var errs []error
	for _, m := range inv {
		um, err := underlay.FromInventory(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: machine %s: %w", w.inventory, m.Name, err))
			continue
		}
		conn, err := windowsConn(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := windows.Identify(ctx, conn); err != nil && !remote.Unreached(err) {
			fmt.Fprintf(log, "underlay: machine %s left out: it does not answer as Windows (%v)\n", m.Name, err)
			continue
		}
		out = append(out, um)
		sides[m.Name] = underlay.WindowsSide{Exec: conn}
	}
	return out, sides, func() {}, errors.Join(errs...)
}

func windowsConn(m config.Machine) (*remote.WinRM, error) {
	return remote.NewWinRM(windows.RemoteConfig(m))
}

// inventoryUnderlay is the whole inventory as the underlay sees it (all
// its machines, whichever --machine selects: the host's rules are the
// cluster's, and applying a plan removes the rules of machines it lacks).
func (w *windowsFlags) inventoryUnderlay(ctx context.Context) ([]underlay.Machine, error) {
	if w.inventory == "" {
		return nil, nil
	}
	inv, err := w.load()
	if err != nil {
		return nil, err
	}
	var out []underlay.Machine
	var errs []error
	for _, m := range inv.Machines {
		um, err := underlay.FromInventory(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: machine %s: %w", w.inventory, m.Name, err))
			continue
		}
		out = append(out, um)
	}
	return out, errors.Join(errs...)
}

// precheckUnderlay refuses, before any cluster work, an inventory whose
// routed machines the harness could not give their underlay: without
// root, or with a plan that cannot be (a host-gw cluster).
func (w *windowsFlags) precheckUnderlay(ctx context.Context) error {
	ms, err := w.inventoryUnderlay(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Shape == underlay.Routed {
			return underlay.CheckRoot(fmt.Sprintf("joining %s's machines through the routed underlay (machine %s)", w.inventory, m.Name))
		}
	}
	return nil
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
	routes := routesByMachine(full)
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
	return routesByMachine(plan), nil
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

// routesByMachine are plan's routes as the join's underlay-route step
// takes them, by machine.
func routesByMachine(plan underlay.Plan) map[string][]windows.UnderlayRoute {
	routes := map[string][]windows.UnderlayRoute{}
	for _, r := range plan.Routes {
		routes[r.Machine] = append(routes[r.Machine], windows.UnderlayRoute{Destination: r.Dest.String(), NextHop: r.Via.String()})
	}
	return routes
}
