package libvirt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/metallb"
)

// dockerBridge is what the provider needs of a Docker network: its Linux
// bridge, its addressing and its containers.
type dockerBridge struct {
	metallb.Network
	Bridge string
}

// inspectDockerNetwork asks Docker for the network name (docker network
// inspect), for its bridge: com.docker.network.bridge.name when the network
// sets one, else br-<the ID's first 12 digits>, Docker's own name for a
// user-defined bridge network.
func inspectDockerNetwork(ctx context.Context, name string) (dockerBridge, error) {
	d, err := docker.New()
	if err != nil {
		return dockerBridge{}, err
	}
	out, err := d.Output(ctx, nil, "network", "inspect", name)
	if err != nil {
		return dockerBridge{}, err
	}
	return parseDockerNetwork(out)
}

func parseDockerNetwork(out []byte) (dockerBridge, error) {
	n, err := metallb.ParseNetwork(out)
	if err != nil {
		return dockerBridge{}, err
	}
	var raw []struct {
		ID      string `json:"Id"`
		Driver  string
		Options map[string]string
	}
	if err := json.Unmarshal(out, &raw); err != nil || len(raw) != 1 {
		return dockerBridge{}, fmt.Errorf("docker network inspect: %v", err)
	}
	if raw[0].Driver != "bridge" {
		return dockerBridge{}, fmt.Errorf("Docker network %s is a %s network, not a bridge: VMs attach only to a bridge", n.Name, raw[0].Driver)
	}
	br := raw[0].Options["com.docker.network.bridge.name"]
	if br == "" && len(raw[0].ID) >= 12 {
		br = "br-" + raw[0].ID[:12]
	}
	return dockerBridge{Network: n, Bridge: br}, nil
}

// vmBlockSize is the default block's size: the top /28 of the network.
const vmBlockSize = 16

// vmBlock returns the block of the network the VMs take their addresses
// from: the configured one, else the network's top /28 without its
// broadcast address. MetalLB's default pool (metallb.DefaultPool) is a /28
// of the upper half that is never the top one (which holds the broadcast
// address), and kind's nodes take theirs from the range Docker hands
// containers; the block is checked against both: it must lie outside that
// range (so Docker never gives a later container one of its addresses: the
// network needs an ip-range), hold no container, and not the network's
// network, gateway or broadcast address.
func vmBlock(n dockerBridge, configured string) (metallb.Pool, error) {
	var p metallb.Pool
	if configured != "" {
		var err error
		if p, err = metallb.ParsePool(configured); err != nil {
			return p, err
		}
	} else {
		if n.Subnet.Bits() > 32-6 {
			return p, fmt.Errorf("Docker network %s (%s) is too small for a block of VM addresses: set libvirt.addresses", n.Name, n.Subnet)
		}
		last := lastAddr(n.Subnet)
		first := last
		for i := 0; i < vmBlockSize-1; i++ {
			first = first.Prev()
		}
		p = metallb.Pool{First: first, Last: last.Prev()}
	}
	if !n.IPRange.IsValid() {
		return p, fmt.Errorf("Docker network %s hands containers every address of %s (it has no ip-range), so a container made later could take a VM's address %s: "+
			"make the network with an ip-range that leaves the VM block out (docker network create --subnet %s --ip-range %s ...; winconform up does this for the kind network it makes), or set libvirt.network to use a libvirt network instead",
			n.Name, n.Subnet, p, n.Subnet, lowerHalf(n.Subnet))
	}
	if err := n.Check(p); err != nil {
		return p, fmt.Errorf("%s", trimLB(err))
	}
	return p, nil
}

// trimLB drops the MetalLB field name from a pool check's message.
func trimLB(err error) string {
	const pfx = "loadBalancer.addresses: "
	s := err.Error()
	if len(s) > len(pfx) && s[:len(pfx)] == pfx {
		return s[len(pfx):]
	}
	return s
}

// lowerHalf is the lower half of a subnet: the ip-range the harness gives
// the kind network (LowerHalf).
func lowerHalf(p netip.Prefix) netip.Prefix {
	return netip.PrefixFrom(p.Masked().Addr(), p.Bits()+1)
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= uint32(1)<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// addresses lists a block's addresses in order.
func addresses(p metallb.Pool) []netip.Addr {
	var out []netip.Addr
	for a := p.First; ; a = a.Next() {
		out = append(out, a)
		if a == p.Last || len(out) > 1<<16 {
			return out
		}
	}
}
