package config

import (
	"strings"
	"testing"
	"time"
)

// The embedded cluster.yaml holds every default that depends on nothing,
// and only it; setDefaults fills only what depends on other fields. So a
// value written as zero is refused as written (never put back to a
// default), a file that leaves a field out gets the embedded value, and
// the back end decides the VNI and port.
func TestDefaultsComeFromOnePlace(t *testing.T) {
	parse := func(t *testing.T, yaml string) (*Cluster, error) {
		t.Helper()
		return Parse[Cluster]("cluster.yaml", []byte(yaml), nil)
	}
	embedded := DefaultCluster()
	if embedded.ReadyTimeout.Duration != 5*time.Minute || !embedded.LoadBalancer.On() || embedded.NodeImageBuild != BuildAuto ||
		embedded.CNI.Backend != VXLAN || embedded.CNI.VNI != WindowsVNI || embedded.CNI.Port != WindowsPort {
		t.Fatalf("the embedded default is %+v", embedded)
	}
	for _, tc := range []struct {
		name, yaml string
		check      func(*Cluster) bool
	}{
		{"left out: the embedded values", "name: a\n", func(c *Cluster) bool {
			return c.ReadyTimeout == embedded.ReadyTimeout && c.LoadBalancer.On() && c.NodeImageBuild == BuildAuto && c.CNI == embedded.CNI
		}},
		{"vxlan named: Windows flannel's VNI and port", "cni:\n  backend: vxlan\n", func(c *Cluster) bool {
			return c.CNI.VNI == WindowsVNI && c.CNI.Port == WindowsPort
		}},
		{"host-gw: no VNI, no port", "cni:\n  backend: host-gw\n", func(c *Cluster) bool {
			return c.CNI.Backend == HostGW && c.CNI.VNI == 0 && c.CNI.Port == 0
		}},
		{"a VNI of the file's own", "cni:\n  vni: 4097\n", func(c *Cluster) bool {
			return c.CNI.Backend == VXLAN && c.CNI.VNI == 4097 && c.CNI.Port == WindowsPort
		}},
		{"load balancer off", "loadBalancer:\n  enabled: false\n", func(c *Cluster) bool { return !c.LoadBalancer.On() }},
		{"a pool, still on", "loadBalancer:\n  addresses: 172.18.255.200-172.18.255.210\n", func(c *Cluster) bool { return c.LoadBalancer.On() }},
	} {
		c, err := parse(t, tc.yaml)
		if err != nil || !tc.check(c) {
			t.Errorf("%s: %+v, %v", tc.name, c, err)
		}
	}
	for _, tc := range []struct{ yaml, field string }{
		{"readyTimeout: 0s\n", "readyTimeout"},
		{"nodeImageBuild: \"\"\n", "nodeImageBuild"},
	} {
		if _, err := parse(t, tc.yaml); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q: %v, want a refusal naming %s (a zero written is not a default)", tc.yaml, err, tc.field)
		}
	}
}
