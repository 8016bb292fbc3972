package kind

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/metallb"
)

func TestChoosePool(t *testing.T) {
	n := metallb.Network{
		Name: "kind", Subnet: netip.MustParsePrefix("172.18.0.0/16"), Gateway: netip.MustParseAddr("172.18.0.1"),
		Containers: map[string]netip.Addr{
			"wc-lb-control-plane": netip.MustParseAddr("172.18.0.5"),
			"wc-lb-worker":        netip.MustParseAddr("172.18.0.4"),
		},
	}
	cfg := DefaultConfig()
	cfg.Name = "wc-lb"
	p, err := choosePool(cfg, n)
	if err != nil || p.String() != "172.18.255.144/28" {
		t.Errorf("default pool = %s, %v; want the /28 that follows from 172.18.0.5", p, err)
	}
	cfg.Name = "absent"
	if _, err := choosePool(cfg, n); err == nil || !strings.Contains(err.Error(), "absent-control-plane") {
		t.Errorf("a cluster whose control plane is not on the network: %v", err)
	}
	cfg.LoadBalancer.Addresses = "172.18.255.200-172.18.255.250"
	if p, err := choosePool(cfg, n); err != nil || p.String() != cfg.LoadBalancer.Addresses {
		t.Errorf("configured pool = %s, %v", p, err)
	}
	for addrs, want := range map[string]string{
		"172.18.0.4-172.18.0.20": "overlaps the node addresses",
		"192.168.0.0/28":         "outside",
	} {
		cfg.LoadBalancer.Addresses = addrs
		_, err := choosePool(cfg, n)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "172.18.0.0/16") {
			t.Errorf("pool %s: %v, want an error saying %q with the network's range", addrs, err, want)
		}
	}
}

func TestLoadBalancerImages(t *testing.T) {
	if loadBalancerImages(true) != metallb.LocalImages() || loadBalancerImages(false) != metallb.UpstreamImages() {
		t.Error("a local node image must use the images it carries, an upstream one the published images")
	}
	if !metallb.LocalImages().Local || metallb.UpstreamImages().Local {
		t.Error("Local marks the images built here")
	}
}

func TestSamePool(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"172.18.255.192/28", "172.18.255.192-172.18.255.207", true},
		{"172.18.255.192/28", "172.18.255.192/28", true},
		{"172.18.255.192/28", "172.18.255.192-172.18.255.206", false},
		{"172.18.255.192/28", "", false},
		{"junk", "junk", false},
	} {
		if got := samePool(tc.a, tc.b); got != tc.same {
			t.Errorf("samePool(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}
