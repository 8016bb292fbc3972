package underlay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/winconform/winconform/config"
)

// FromInventory is an inventory machine as the underlay sees it: its
// node address (nodeIP, else its address, resolved), its shape (routed
// unless the inventory says otherwise) and, routed, the kind host's
// address it routes through (underlay.via, else this host's source address
// toward it, from the kernel's route to it).
func FromInventory(ctx context.Context, m config.Machine) (Machine, error) {
	shape, err := ShapeOf(m)
	if err != nil {
		return Machine{}, err
	}
	host := m.NodeIP
	if host == "" {
		host = m.Address
	}
	addr, err := resolveIPv4(ctx, host)
	if err != nil {
		return Machine{}, err
	}
	um := Machine{Name: m.Name, OS: Windows, Address: addr, Shape: shape}
	if shape != Routed {
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

// ShapeOf is how machine m reaches the kind network: its
// underlay.shape, routed when it sets none.
func ShapeOf(m config.Machine) (Shape, error) {
	if m.Underlay.Shape == "" {
		return Routed, nil
	}
	s, err := ParseShape(m.Underlay.Shape)
	if err != nil {
		return "", fmt.Errorf("underlay.shape: %w", err)
	}
	return s, nil
}

// Inventory is every machine of an inventory as the underlay sees it
// (FromInventory); a machine it cannot see is left out, and its error,
// naming source (the inventory's file) and the machine, joined into the
// error returned.
func Inventory(ctx context.Context, source string, ms []config.Machine) ([]Machine, error) {
	var out []Machine
	var errs []error
	for _, m := range ms {
		um, err := FromInventory(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: machine %s: %w", source, m.Name, err))
			continue
		}
		out = append(out, um)
	}
	return out, errors.Join(errs...)
}

// CheckRouted refuses, before any cluster work, machines of source (an
// inventory's file) that the harness could not give their underlay: a
// routed machine needs root (CheckRoot).
func CheckRouted(source string, ms []Machine) error {
	for _, m := range ms {
		if m.Shape == Routed {
			return CheckRoot(fmt.Sprintf("joining %s's machines through the routed underlay (machine %s)", source, m.Name))
		}
	}
	return nil
}
