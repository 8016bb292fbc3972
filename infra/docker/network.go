package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// ReservedNetwork is a bridge network whose containers take their
// addresses from the lower half of its subnet only (Docker's --ip-range),
// which leaves the upper half to addresses the harness hands out itself:
// MetalLB's pool (infra/metallb: a /28 of the upper half) and the VMs that
// join the network's bridge (infra/vms/libvirt: the top /28). Docker's
// allocator knows nothing of those, so without the range a container made
// later could take one of their addresses.
type ReservedNetwork struct {
	Subnet, IPRange netip.Prefix
	Gateway         netip.Addr
}

// EnsureReservedNetwork makes the bridge network name with its ip-range
// when it does not exist (opts are `docker network create` options such as
// kind's -o com.docker.network.bridge.enable_ip_masquerade=true), and
// returns its addressing. Docker chooses the subnet: the network is made
// once plainly, its subnet read, and made again with the same subnet and
// the range. An existing network is left as it is (its range cannot be
// changed while it exists), and its addressing returned.
func (c *Client) EnsureReservedNetwork(ctx context.Context, name string, opts ...string) (ReservedNetwork, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if n, err := c.inspectIPv4(ctx, name); err == nil {
		return n, nil
	}
	if err := c.Run(ctx, append(append([]string{"network", "create", "--driver", "bridge"}, opts...), name)...); err != nil {
		return ReservedNetwork{}, fmt.Errorf("making Docker network %s: %w", name, err)
	}
	n, err := c.inspectIPv4(ctx, name)
	if err != nil {
		return n, err
	}
	if err := c.Run(ctx, "network", "rm", name); err != nil {
		return n, fmt.Errorf("making Docker network %s again with an ip-range: %w", name, err)
	}
	n.IPRange = netip.PrefixFrom(n.Subnet.Addr(), n.Subnet.Bits()+1)
	args := []string{"network", "create", "--driver", "bridge", "--subnet", n.Subnet.String(), "--ip-range", n.IPRange.String()}
	if n.Gateway.IsValid() {
		args = append(args, "--gateway", n.Gateway.String())
	}
	if err := c.Run(ctx, append(append(args, opts...), name)...); err != nil {
		return n, fmt.Errorf("making Docker network %s with ip-range %s: %w", name, n.IPRange, err)
	}
	return c.inspectIPv4(ctx, name)
}

// inspectIPv4 reads a network's IPv4 subnet, gateway and ip-range.
func (c *Client) inspectIPv4(ctx context.Context, name string) (ReservedNetwork, error) {
	out, err := c.Output(ctx, nil, "network", "inspect", "--format", "{{json .IPAM.Config}}", name)
	if err != nil {
		return ReservedNetwork{}, err
	}
	var cfg []struct{ Subnet, Gateway, IPRange string }
	if err := json.Unmarshal(out, &cfg); err != nil {
		return ReservedNetwork{}, fmt.Errorf("docker network inspect %s: %w", name, err)
	}
	for _, c := range cfg {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(c.Subnet))
		if err != nil || !pfx.Addr().Is4() {
			continue
		}
		n := ReservedNetwork{Subnet: pfx.Masked()}
		n.Gateway, _ = netip.ParseAddr(c.Gateway)
		n.IPRange, _ = netip.ParsePrefix(c.IPRange)
		if pfx.Bits() > 30 {
			return n, fmt.Errorf("Docker network %s: its subnet %s is too small to reserve half of it", name, pfx)
		}
		return n, nil
	}
	return ReservedNetwork{}, fmt.Errorf("Docker network %s has no IPv4 subnet", name)
}
