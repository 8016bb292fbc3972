package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/inventory"
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
		um, err := underlayMachine(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: machine %s: %w", w.inventory, m.Name, err))
			continue
		}
		conn, err := windowsConn(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := windows.Identify(ctx, conn); err != nil && !transportError(err) {
			fmt.Fprintf(log, "underlay: machine %s left out: it does not answer as Windows (%v)\n", m.Name, err)
			continue
		}
		out = append(out, um)
		sides[m.Name] = underlay.WindowsSide{Exec: conn}
	}
	return out, sides, func() {}, errors.Join(errs...)
}

func windowsConn(m inventory.Machine) (*remote.WinRM, error) {
	return remote.NewWinRM(windows.RemoteConfig(m))
}

// underlayMachine is an inventory machine as the underlay sees it: its
// node address (nodeIP, else its address, resolved), its shape (routed
// unless the inventory says otherwise) and, routed, the kind host's
// address it routes through (underlay.via, else this host's source address
// toward it, from the kernel's route to it).
func underlayMachine(ctx context.Context, m inventory.Machine) (underlay.Machine, error) {
	shape := underlay.Routed
	if m.Underlay.Shape != "" {
		s, err := underlay.ParseShape(m.Underlay.Shape)
		if err != nil {
			return underlay.Machine{}, fmt.Errorf("underlay.shape: %w", err)
		}
		shape = s
	}
	host := m.NodeIP
	if host == "" {
		host = m.Address
	}
	addr, err := resolveIPv4(ctx, host)
	if err != nil {
		return underlay.Machine{}, err
	}
	um := underlay.Machine{Name: m.Name, OS: underlay.Windows, Address: addr, Shape: shape}
	if shape != underlay.Routed {
		return um, nil
	}
	if m.Underlay.Via != "" {
		um.Via, err = netip.ParseAddr(m.Underlay.Via)
		return um, err
	}
	um.Via, err = sourceToward(addr)
	if err != nil {
		return um, fmt.Errorf("finding this host's address toward %s for the machine's route (set underlay.via): %w", addr, err)
	}
	return um, nil
}

// sourceToward is the address this host sends from to addr: the source of
// the kernel's route to it (netlink's RTM_GETROUTE, as ip route get).
func sourceToward(addr netip.Addr) (netip.Addr, error) {
	routes, err := netlink.RouteGet(net.IP(addr.AsSlice()))
	if err != nil {
		return netip.Addr{}, err
	}
	for _, r := range routes {
		if a, ok := netip.AddrFromSlice(r.Src); ok && a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	return netip.Addr{}, errors.New("the route to it has no source address")
}

func resolveIPv4(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("resolving %s to its IPv4 address for the underlay: %v", host, err)
	}
	return addrs[0].Unmap(), nil
}

// transportError says whether err is WinRM failing to reach the machine
// (which the check then reports), rather than the machine's answer.
func transportError(err error) bool {
	for _, e := range []error{remote.ErrAuth, remote.ErrUnreachable, remote.ErrTLS, remote.ErrTimeout, remote.ErrConnLost} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
