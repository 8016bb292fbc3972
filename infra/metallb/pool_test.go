package metallb

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePool(t *testing.T) {
	for _, tc := range []struct {
		in          string
		first, last string
		str         string
		size        uint64
	}{
		{"172.18.255.200-172.18.255.250", "172.18.255.200", "172.18.255.250", "172.18.255.200-172.18.255.250", 51},
		{" 172.18.255.200 - 172.18.255.200 ", "172.18.255.200", "172.18.255.200", "172.18.255.200/32", 1},
		{"172.18.255.192/28", "172.18.255.192", "172.18.255.207", "172.18.255.192/28", 16},
		{"172.18.255.192-172.18.255.207", "172.18.255.192", "172.18.255.207", "172.18.255.192/28", 16},
		{"172.18.255.193-172.18.255.208", "172.18.255.193", "172.18.255.208", "172.18.255.193-172.18.255.208", 16},
		{"10.0.0.0/8", "10.0.0.0", "10.255.255.255", "10.0.0.0/8", 1 << 24},
	} {
		p, err := ParsePool(tc.in)
		if err != nil {
			t.Errorf("ParsePool(%q): %v", tc.in, err)
			continue
		}
		if p.First.String() != tc.first || p.Last.String() != tc.last {
			t.Errorf("ParsePool(%q) = %s..%s, want %s..%s", tc.in, p.First, p.Last, tc.first, tc.last)
		}
		if p.String() != tc.str || p.Size() != tc.size {
			t.Errorf("ParsePool(%q): String %q Size %d, want %q %d", tc.in, p, p.Size(), tc.str, tc.size)
		}
		// What String writes parses back to the same pool.
		if back, err := ParsePool(p.String()); err != nil || back != p {
			t.Errorf("round trip of %q: %v, %v", p, back, err)
		}
	}
	for in, want := range map[string]string{
		"":                              "empty",
		"172.18.255.200":                "neither a range nor a CIDR",
		"172.18.255.250-172.18.255.200": "ends before it starts",
		"172.18.255.200-fd00::1":        "not a range of IPv4 addresses",
		"fd00::/120":                    "not an IPv4 CIDR",
		"172.18.255.201/28":             "host bits set: the network is 172.18.255.192/28",
		"172.18.255.0/33":               "not an IPv4 CIDR",
		"a-b":                           "not a range of IPv4 addresses",
	} {
		_, err := ParsePool(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePool(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}

// kindNetwork is `docker network inspect kind` as Docker 20.10 prints it,
// with two clusters' nodes on it.
const kindNetwork = `[{
  "Name": "kind", "Driver": "bridge", "EnableIPv6": true,
  "IPAM": {"Driver": "default", "Options": {}, "Config": [
    {"Subnet": "fc00:f853:ccd:e793::/64", "Gateway": "fc00:f853:ccd:e793::1"},
    {"Subnet": "172.18.0.0/16", "Gateway": "172.18.0.1"}
  ]},
  "Containers": {
    "0a1b": {"Name": "wc-lb-control-plane", "IPv4Address": "172.18.0.3/16", "IPv6Address": "fc00:f853:ccd:e793::3/64"},
    "2c3d": {"Name": "wc-lb-worker", "IPv4Address": "172.18.0.2/16", "IPv6Address": "fc00:f853:ccd:e793::2/64"},
    "4e5f": {"Name": "other-control-plane", "IPv4Address": "172.18.0.7/16", "IPv6Address": ""}
  }
}]`

func mustNetwork(t *testing.T, data string) Network {
	t.Helper()
	n, err := ParseNetwork([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestParseNetwork(t *testing.T) {
	n := mustNetwork(t, kindNetwork)
	if n.Name != "kind" || n.Subnet.String() != "172.18.0.0/16" || n.Gateway.String() != "172.18.0.1" || n.IPRange.IsValid() {
		t.Errorf("network = %+v", n)
	}
	want := map[string]string{"wc-lb-control-plane": "172.18.0.3", "wc-lb-worker": "172.18.0.2", "other-control-plane": "172.18.0.7"}
	if len(n.Containers) != len(want) {
		t.Errorf("containers = %v", n.Containers)
	}
	for name, a := range want {
		if n.Containers[name].String() != a {
			t.Errorf("container %s = %s, want %s", name, n.Containers[name], a)
		}
	}
	withRange := strings.Replace(kindNetwork, `"Gateway": "172.18.0.1"`, `"Gateway": "172.18.0.1", "IPRange": "172.18.0.0/24"`, 1)
	if n := mustNetwork(t, withRange); n.IPRange.String() != "172.18.0.0/24" {
		t.Errorf("IPRange = %s", n.IPRange)
	}
	for doc, want := range map[string]string{
		`[]`: "0 networks",
		`{}`: "docker network inspect",
		`[{"Name": "v6", "IPAM": {"Config": [{"Subnet": "fd00::/64"}]}}]`: "docker network v6 has no IPv4 subnet",
	} {
		if _, err := ParseNetwork([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseNetwork(%s) = %v, want %q", doc, err, want)
		}
	}
}

func TestDefaultPool(t *testing.T) {
	n := mustNetwork(t, kindNetwork)
	p, err := DefaultPool(n, n.Containers["wc-lb-control-plane"])
	if err != nil {
		t.Fatal(err)
	}
	// Offset 3 in the network: the fourth /28 below the top one.
	if p.String() != "172.18.255.176/28" || p.Size() != BlockSize {
		t.Errorf("pool for control plane 172.18.0.3 = %s (%d addresses), want 172.18.255.176/28", p, p.Size())
	}
	if err := n.Check(p); err != nil {
		t.Errorf("the default pool fails its own check: %v", err)
	}
	// Another cluster on the same network gets another pool; the same one
	// gets the same pool every time.
	other, err := DefaultPool(n, n.Containers["other-control-plane"])
	if err != nil {
		t.Fatal(err)
	}
	if other == p || other.overlaps(p) {
		t.Errorf("two clusters share addresses: %s and %s", p, other)
	}
	if again, _ := DefaultPool(n, n.Containers["wc-lb-control-plane"]); again != p {
		t.Errorf("the pool moved: %s then %s", p, again)
	}
	// Every control-plane address of a /16 gives a pool in its upper half,
	// clear of the broadcast address; neighbours never share one.
	upper := netip.MustParseAddr("172.18.128.0")
	seen := map[Pool]netip.Addr{}
	for a := netip.MustParseAddr("172.18.0.2"); a.Less(netip.MustParseAddr("172.18.8.0")); a = a.Next() {
		q, err := DefaultPool(Network{Name: "kind", Subnet: n.Subnet, Gateway: n.Gateway}, a)
		if err != nil {
			t.Fatalf("anchor %s: %v", a, err)
		}
		if q.First.Less(upper) || q.Contains(netip.MustParseAddr("172.18.255.255")) {
			t.Fatalf("anchor %s: pool %s is not in the upper half below the broadcast address", a, q)
		}
		if prev, dup := seen[q]; dup && toUint(a)-toUint(prev) < 2047 {
			t.Fatalf("anchors %s and %s share the pool %s", prev, a, q)
		}
		seen[q] = a
	}
}

func TestDefaultPoolPassesOverBusyBlocks(t *testing.T) {
	n := mustNetwork(t, kindNetwork)
	// A container sits in the block the anchor picks: the next one is taken.
	n.Containers["squatter"] = netip.MustParseAddr("172.18.255.180")
	p, err := DefaultPool(n, n.Containers["wc-lb-control-plane"])
	if err != nil {
		t.Fatal(err)
	}
	if p.String() != "172.18.255.160/28" {
		t.Errorf("pool = %s, want the next block down, 172.18.255.160/28", p)
	}
}

func TestDefaultPoolSmallNetworks(t *testing.T) {
	small := Network{Name: "tiny", Subnet: netip.MustParsePrefix("192.168.5.0/27"), Containers: map[string]netip.Addr{}}
	_, err := DefaultPool(small, netip.MustParseAddr("192.168.5.2"))
	if err == nil || !strings.Contains(err.Error(), "192.168.5.0/27") || !strings.Contains(err.Error(), "loadBalancer.addresses") {
		t.Errorf("a /27: %v, want an error naming the network and the field to set", err)
	}
	// A /24 has 7 blocks in its upper half (the top one holds the broadcast).
	n24 := Network{Name: "lab", Subnet: netip.MustParsePrefix("192.168.5.0/24"), Gateway: netip.MustParseAddr("192.168.5.1"),
		Containers: map[string]netip.Addr{"cp": netip.MustParseAddr("192.168.5.2")}}
	p, err := DefaultPool(n24, netip.MustParseAddr("192.168.5.2"))
	if err != nil || p.String() != "192.168.5.192/28" {
		t.Errorf("a /24 = %s, %v; want 192.168.5.192/28", p, err)
	}
	if _, err := DefaultPool(n24, netip.MustParseAddr("10.0.0.2")); err == nil || !strings.Contains(err.Error(), "192.168.5.0/24") {
		t.Errorf("an anchor outside the network: %v", err)
	}
	// Every upper block busy: no pool, and the error says what to do.
	for i := 0; i < 8; i++ {
		n24.Containers[string(rune('a'+i))] = netip.AddrFrom4([4]byte{192, 168, 5, byte(128 + 16*i + 1)})
	}
	if _, err := DefaultPool(n24, netip.MustParseAddr("192.168.5.2")); err == nil || !strings.Contains(err.Error(), "loadBalancer.addresses") {
		t.Errorf("a full network: %v", err)
	}
}

func TestCheck(t *testing.T) {
	n := mustNetwork(t, kindNetwork)
	for pool, want := range map[string][]string{
		"172.18.255.200-172.18.255.250": nil,
		"172.18.200.0/24":               nil,
		"10.0.0.1-10.0.0.5":             {"outside", `Docker network "kind" (172.18.0.0/16, addresses 172.18.0.1-172.18.255.254)`, "such as 172.18.255.224/28"},
		"172.18.255.250-172.19.0.10":    {"outside", "172.18.0.0/16"},
		"172.18.0.2-172.18.0.10":        {"overlaps the node addresses", "172.18.0.0/16", "wc-lb-worker has 172.18.0.2", "nodes hold 172.18.0.2-172.18.0.7"},
		"172.18.0.7/32":                 {"overlaps the node addresses", "other-control-plane has 172.18.0.7"},
		"172.18.0.0/30":                 {"network address 172.18.0.0", "172.18.0.0/16"},
		"172.18.0.1-172.18.0.1":         {"gateway (this host) 172.18.0.1", "172.18.0.0/16"},
		"172.18.255.240/28":             {"broadcast address 172.18.255.255", "172.18.0.0/16"},
	} {
		p, err := ParsePool(pool)
		if err != nil {
			t.Fatal(err)
		}
		err = n.Check(p)
		if want == nil {
			if err != nil {
				t.Errorf("Check(%s): %v", pool, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Check(%s) accepted it", pool)
			continue
		}
		if !strings.HasPrefix(err.Error(), "loadBalancer.addresses: "+p.String()) {
			t.Errorf("Check(%s) = %q: does not name the field and the pool", pool, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Check(%s) = %q, want it to say %q", pool, err, w)
			}
		}
	}
	n.IPRange = netip.MustParsePrefix("172.18.0.0/17")
	if err := n.Check(Pool{First: netip.MustParseAddr("172.18.127.250"), Last: netip.MustParseAddr("172.18.128.5")}); err == nil ||
		!strings.Contains(err.Error(), "172.18.0.0/17, the range Docker gives containers") {
		t.Errorf("a pool overlapping the container range: %v", err)
	}
	if err := n.Check(Pool{First: netip.MustParseAddr("172.18.128.0"), Last: netip.MustParseAddr("172.18.128.5")}); err != nil {
		t.Errorf("a pool just above the container range: %v", err)
	}
}
