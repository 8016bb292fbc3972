package underlay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
)

// WindowsSide is a Windows machine, over WinRM: its routes and connections
// as the NetTCPIP module's cmdlets report them. Its route to the kind
// network is the join's underlay-route step (infra/windows), from the same
// plan.
type WindowsSide struct{ Exec remote.Exec }

// OS is windows.
func (WindowsSide) OS() string { return Windows }

// RouteCommand is the command that adds r as the join's underlay-route
// step does: a persistent route without an interface (route -p add: the
// registry's PersistentRoutes), which Windows puts back on the adapter that
// reaches the kind host whenever it rebuilds the route table, as when
// flannel's External HNS network moves the host's address to vEthernet (a
// route bound to the physical adapter would then be inactive), with the
// harness's metric.
func (WindowsSide) RouteCommand(r Route) string {
	mask := net.IP(net.CIDRMask(r.Dest.Bits(), 32)).String()
	return fmt.Sprintf("route -p add %s mask %s %s metric %d", r.Dest.Masked().Addr(), mask, r.Via, WindowsRouteMetric)
}

// run runs a short script and returns its key=value lines.
func (s WindowsSide) run(ctx context.Context, what, script string) (map[string][]string, error) {
	res, err := s.Exec.RunPS(ctx, "underlay check: "+what, script)
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return parseKeyValues(res.Stdout), nil
}

func parseKeyValues(out string) map[string][]string {
	kv := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if ok {
			kv[k] = append(kv[k], v)
		}
	}
	return kv
}

// NextHop asks Find-NetRoute, which returns the source address it would use
// and the route it would take (MSFT_NetRoute, whose NextHop is 0.0.0.0 for
// an on-link destination); it fails when no route leads there.
func (s WindowsSide) NextHop(ctx context.Context, addr netip.Addr) (netip.Addr, error) {
	script := fmt.Sprintf(`$ErrorActionPreference = 'Stop'
try {
    $r = @(Find-NetRoute -RemoteIPAddress '%s' | Where-Object { $null -ne $_.PSObject.Properties['NextHop'] }) | Select-Object -First 1
    if ($null -eq $r) { 'noroute=no route' } else { 'nexthop=' + $r.NextHop }
} catch { 'noroute=' + $_.Exception.Message }`, addr)
	kv, err := s.run(ctx, "route to "+addr.String(), script)
	if err != nil {
		return netip.Addr{}, err
	}
	return windowsNextHop(kv, addr)
}

func windowsNextHop(kv map[string][]string, addr netip.Addr) (netip.Addr, error) {
	if msg := kv["noroute"]; len(msg) > 0 {
		return netip.Addr{}, fmt.Errorf("%w to %s (Find-NetRoute: %s)", ErrNoRoute, addr, msg[0])
	}
	hops := kv["nexthop"]
	if len(hops) == 0 {
		return netip.Addr{}, errors.New("Find-NetRoute printed no route")
	}
	hop, err := netip.ParseAddr(hops[0])
	if err != nil {
		return netip.Addr{}, fmt.Errorf("Find-NetRoute's next hop %q: %w", hops[0], err)
	}
	if hop.IsUnspecified() {
		return netip.Addr{}, nil // on-link
	}
	return hop, nil
}

// Dial connects with .NET's TcpClient, bounded by timeout.
func (s WindowsSide) Dial(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error {
	script := fmt.Sprintf(`$c = New-Object System.Net.Sockets.TcpClient
try {
    $t = $c.ConnectAsync('%s', %d)
    if ($t.Wait(%d)) { 'dial=ok' } else { 'dial=timed out after %s' }
} catch {
    $e = $_.Exception; while ($null -ne $e.InnerException) { $e = $e.InnerException }
    'dial=' + $e.Message
} finally { $c.Dispose() }`, addr.Addr(), addr.Port(), timeout.Milliseconds(), timeout)
	kv, err := s.run(ctx, "connect to "+addr.String(), script)
	if err != nil {
		return err
	}
	if r := kv["dial"]; len(r) == 0 || r[0] != "ok" {
		if len(r) == 0 {
			return errors.New("the connection test printed nothing")
		}
		return errors.New(r[0])
	}
	return nil
}

// Peers asks Get-NetTCPConnection for the established connections to port.
func (s WindowsSide) Peers(ctx context.Context, port int) ([]netip.Addr, error) {
	script := fmt.Sprintf(`Get-NetTCPConnection -LocalPort %d -State Established -ErrorAction SilentlyContinue | ForEach-Object { 'peer=' + $_.RemoteAddress }`, port)
	kv, err := s.run(ctx, fmt.Sprintf("connections to port %d", port), script)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, p := range kv["peer"] {
		a, err := netip.ParseAddr(p)
		if err != nil {
			return nil, fmt.Errorf("Get-NetTCPConnection's remote address %q: %w", p, err)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}
