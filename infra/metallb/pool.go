package metallb

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Pool is a range of IPv4 addresses MetalLB hands out, First to Last inclusive.
type Pool struct {
	First, Last netip.Addr
}

// String writes the pool as MetalLB's IPAddressPool takes it: a CIDR when
// the range is exactly one, else first-last.
func (p Pool) String() string {
	if pfx, ok := p.prefix(); ok {
		return pfx.String()
	}
	return p.First.String() + "-" + p.Last.String()
}

// prefix is the CIDR that covers exactly the pool, if there is one.
func (p Pool) prefix() (netip.Prefix, bool) {
	for bits := 32; bits >= 0; bits-- {
		pfx := netip.PrefixFrom(p.First, bits).Masked()
		if pfx.Addr() != p.First {
			break
		}
		last := lastAddr(pfx)
		if last == p.Last {
			return pfx, true
		}
		if p.Last.Less(last) {
			break
		}
	}
	return netip.Prefix{}, false
}

// Size is the number of addresses in the pool.
func (p Pool) Size() uint64 { return toUint(p.Last) - toUint(p.First) + 1 }

func (p Pool) overlaps(q Pool) bool { return !p.Last.Less(q.First) && !q.Last.Less(p.First) }

// Contains reports whether a is in the pool.
func (p Pool) Contains(a netip.Addr) bool {
	return a.Is4() && !a.Less(p.First) && !p.Last.Less(a)
}

// ParsePool reads "172.18.255.200-172.18.255.250" or "172.18.255.192/28".
// Only IPv4: the local cluster is single-stack IPv4.
func ParsePool(s string) (Pool, error) {
	s = strings.TrimSpace(s)
	const example = "write a range such as 172.18.255.200-172.18.255.250 or a CIDR such as 172.18.255.192/28"
	if s == "" {
		return Pool{}, errors.New("empty: " + example)
	}
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil || !pfx.Addr().Is4() {
			return Pool{}, fmt.Errorf("%q is not an IPv4 CIDR: %s", s, example)
		}
		if pfx.Masked() != pfx {
			return Pool{}, fmt.Errorf("%q has host bits set: the network is %s", s, pfx.Masked())
		}
		return Pool{First: pfx.Addr(), Last: lastAddr(pfx)}, nil
	}
	first, last, ok := strings.Cut(s, "-")
	if !ok {
		return Pool{}, fmt.Errorf("%q is neither a range nor a CIDR: %s", s, example)
	}
	a, errA := netip.ParseAddr(strings.TrimSpace(first))
	b, errB := netip.ParseAddr(strings.TrimSpace(last))
	if errA != nil || errB != nil || !a.Is4() || !b.Is4() {
		return Pool{}, fmt.Errorf("%q is not a range of IPv4 addresses: %s", s, example)
	}
	if b.Less(a) {
		return Pool{}, fmt.Errorf("%q ends before it starts", s)
	}
	return Pool{First: a, Last: b}, nil
}

// Network is what the harness needs to know of the Docker network the
// cluster's nodes are on (kind's network, "kind").
type Network struct {
	Name    string
	Subnet  netip.Prefix // the IPv4 subnet
	Gateway netip.Addr   // the host's address on it; may be invalid when Docker does not say
	// IPRange is the part of Subnet Docker hands to containers; invalid when
	// it is the whole subnet.
	IPRange netip.Prefix
	// Containers are the IPv4 addresses of the containers on the network, by name.
	Containers map[string]netip.Addr
}

// ParseNetwork reads the output of `docker network inspect NAME` (a JSON
// array of one network) and keeps its IPv4 facts.
func ParseNetwork(data []byte) (Network, error) {
	var nets []struct {
		Name string
		IPAM struct {
			Config []struct{ Subnet, Gateway, IPRange string }
		}
		Containers map[string]struct{ Name, IPv4Address string }
	}
	if err := json.Unmarshal(data, &nets); err != nil {
		return Network{}, fmt.Errorf("docker network inspect: %w", err)
	}
	if len(nets) != 1 {
		return Network{}, fmt.Errorf("docker network inspect: %d networks, want 1", len(nets))
	}
	in := nets[0]
	n := Network{Name: in.Name, Containers: map[string]netip.Addr{}}
	for _, c := range in.IPAM.Config {
		pfx, err := netip.ParsePrefix(c.Subnet)
		if err != nil || !pfx.Addr().Is4() {
			continue // the IPv6 subnet kind adds
		}
		n.Subnet = pfx.Masked()
		if gw, err := netip.ParseAddr(c.Gateway); err == nil {
			n.Gateway = gw
		}
		if r, err := netip.ParsePrefix(c.IPRange); err == nil && r.Addr().Is4() && r.Masked() != n.Subnet {
			n.IPRange = r.Masked()
		}
		break
	}
	if !n.Subnet.IsValid() {
		return Network{}, fmt.Errorf("docker network %s has no IPv4 subnet", in.Name)
	}
	for id, c := range in.Containers {
		pfx, err := netip.ParsePrefix(c.IPv4Address)
		if err != nil {
			continue
		}
		name := c.Name
		if name == "" {
			name = id
		}
		n.Containers[name] = pfx.Addr()
	}
	return n, nil
}

// describe names the network and its range, as every error about a pool does.
func (n Network) describe() string {
	return fmt.Sprintf("Docker network %q (%s, addresses %s-%s)", n.Name, n.Subnet,
		n.Subnet.Addr().Next(), lastAddr(n.Subnet).Prev())
}

// BlockSize is the size of a default pool: a /28, plenty for the Services of
// a test run.
const BlockSize = 16

// DefaultPool picks a pool for a cluster whose control-plane node has address
// anchor: a /28 in the upper half of the network, away from the node
// addresses Docker hands out from the bottom, at a place that follows from
// the anchor, so that clusters sharing the network (kind puts every cluster
// on one) get different pools. A block that holds any container's address is
// passed over.
func DefaultPool(n Network, anchor netip.Addr) (Pool, error) {
	bits := n.Subnet.Bits()
	if !n.Subnet.Addr().Is4() || bits > 32-6 {
		return Pool{}, fmt.Errorf("the %s is too small for a default address pool (at least a /26 is needed): set loadBalancer.addresses", n.describe())
	}
	if !n.Subnet.Contains(anchor) {
		return Pool{}, fmt.Errorf("the control-plane address %s is not in the %s", anchor, n.describe())
	}
	top := toUint(lastAddr(n.Subnet)) + 1 // one past the broadcast address
	blocks := (uint64(1) << (32 - bits)) / 2 / BlockSize
	offset := toUint(anchor) - toUint(n.Subnet.Addr())
	// Block 0, the top one, holds the broadcast address: blocks 1..blocks-1.
	start := 1 + offset%(blocks-1)
	for i := uint64(0); i < blocks-1; i++ {
		b := 1 + (start-1+i)%(blocks-1)
		p := Pool{First: fromUint(top - (b+1)*BlockSize), Last: fromUint(top - b*BlockSize - 1)}
		if n.Check(p) == nil {
			return p, nil
		}
	}
	return Pool{}, fmt.Errorf("no free /28 in the upper half of the %s: set loadBalancer.addresses", n.describe())
}

// Check refuses a pool that is not inside the network, that holds its
// network, broadcast or gateway address, that overlaps the range Docker
// hands containers, or that holds a container's (a node's) address.
func (n Network) Check(p Pool) error {
	if !n.Subnet.Contains(p.First) || !n.Subnet.Contains(p.Last) {
		return fmt.Errorf("loadBalancer.addresses: %s is outside the %s: use addresses of that network away from the nodes', such as %s",
			p, n.describe(), n.example())
	}
	reserved := map[string]netip.Addr{"network address": n.Subnet.Addr(), "broadcast address": lastAddr(n.Subnet)}
	if n.Gateway.IsValid() {
		reserved["gateway (this host)"] = n.Gateway
	}
	for _, what := range byAddress(reserved) {
		if p.Contains(reserved[what]) {
			return fmt.Errorf("loadBalancer.addresses: %s holds the %s %s of the %s", p, what, reserved[what], n.describe())
		}
	}
	if n.IPRange.IsValid() && p.overlaps(Pool{First: n.IPRange.Addr(), Last: lastAddr(n.IPRange)}) {
		return fmt.Errorf("loadBalancer.addresses: %s overlaps %s, the range Docker gives containers on the %s: use addresses outside it",
			p, n.IPRange, n.describe())
	}
	for _, name := range byAddress(n.Containers) {
		if a := n.Containers[name]; p.Contains(a) {
			return fmt.Errorf("loadBalancer.addresses: %s overlaps the node addresses on the %s: %s has %s, and the nodes hold %s: use addresses away from them, such as %s",
				p, n.describe(), name, a, n.nodeSpan(), n.example())
		}
	}
	return nil
}

// nodeSpan is the lowest and highest container address on the network.
func (n Network) nodeSpan() string {
	var lo, hi netip.Addr
	for _, a := range n.Containers {
		if !lo.IsValid() || a.Less(lo) {
			lo = a
		}
		if !hi.IsValid() || hi.Less(a) {
			hi = a
		}
	}
	if lo == hi {
		return lo.String()
	}
	return lo.String() + "-" + hi.String()
}

// example is a pool the error messages can suggest: the second /28 from the top.
func (n Network) example() string {
	if n.Subnet.Bits() > 32-6 {
		return "addresses at the top of " + n.Subnet.String()
	}
	top := toUint(lastAddr(n.Subnet)) + 1
	return Pool{First: fromUint(top - 2*BlockSize), Last: fromUint(top - BlockSize - 1)}.String()
}

// byAddress lists m's names in the order of their addresses (then names).
func byAddress(m map[string]netip.Addr) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c := m[keys[i]].Compare(m[keys[j]]); c != 0 {
			return c < 0
		}
		return keys[i] < keys[j]
	})
	return keys
}

func lastAddr(p netip.Prefix) netip.Addr {
	p = p.Masked()
	return fromUint(toUint(p.Addr()) | (uint64(1)<<(32-p.Bits()) - 1))
}

func toUint(a netip.Addr) uint64 {
	b := a.As4()
	return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
}

func fromUint(v uint64) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
