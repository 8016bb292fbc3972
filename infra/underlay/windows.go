package underlay

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
)

// WindowsMachines are an inventory's machines ms (read from source, its
// file) as the underlay sees them (FromInventory), each with a Windows
// side reached over WinRM, by machine name. A machine it cannot see is
// left out, its error joined into the error returned.
//
// A machine that answers WinRM but not as Windows (the harness's simulated
// machines behind the WS-Management stand-in: windows.Identify) has no
// network of its own to check, and is left out, said in log.
func WindowsMachines(ctx context.Context, source string, ms []config.Machine, log io.Writer) ([]Machine, map[string]Side, error) {
	seen, err := Inventory(ctx, source, ms)
	errs := []error{err}
	byName := map[string]config.Machine{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	sides := map[string]Side{}
	var out []Machine
	for _, um := range seen {
		conn, err := remote.NewWinRM(windows.RemoteConfig(byName[um.Name]))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := windows.Identify(ctx, conn); err != nil && !remote.Unreached(err) {
			fmt.Fprintf(log, "underlay: machine %s left out: it does not answer as Windows (%v)\n", um.Name, err)
			continue
		}
		out = append(out, um)
		sides[um.Name] = WindowsSide{Exec: conn}
	}
	return out, sides, errors.Join(errs...)
}

// JoinRoutes are plan's routes as the join's underlay-route step
// (infra/windows) takes them, by machine.
func JoinRoutes(plan Plan) map[string][]windows.UnderlayRoute {
	routes := map[string][]windows.UnderlayRoute{}
	for _, r := range plan.Routes {
		routes[r.Machine] = append(routes[r.Machine], windows.UnderlayRoute{Destination: r.Dest.String(), NextHop: r.Via.String()})
	}
	return routes
}
