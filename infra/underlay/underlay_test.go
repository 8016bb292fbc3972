package underlay

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

var (
	kindNet = Network{Cluster: "c1", Subnet: netip.MustParsePrefix("172.18.0.0/16"), Bridge: "br-kind",
		ControlPlane: netip.MustParseAddr("172.18.0.4"), PodSubnet: netip.MustParsePrefix("10.244.0.0/16"), Backend: "vxlan", VXLANPort: 4789}
	remoteNode = Machine{Name: "c1-remote", OS: Linux, Address: netip.MustParseAddr("192.168.80.2"), Shape: Routed, Via: netip.MustParseAddr("192.168.80.1")}
	lab        = Machine{Name: "win-a", OS: Windows, Address: netip.MustParseAddr("10.1.2.3"), Shape: Routed, Via: netip.MustParseAddr("10.1.0.1")}
	vm         = Machine{Name: "win-vm", OS: Windows, Address: netip.MustParseAddr("172.18.255.241"), Shape: SameHost}
)

func mustPlan(t *testing.T, n Network, ms ...Machine) Plan {
	t.Helper()
	p, err := NewPlan(n, ms)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A routed machine gets the kind host's rules, scoped to its address and
// the kind network, for the ports the cluster needs, both ways, and the
// nat RETURN; a same-host machine gets none, and no route.
func TestPlanRules(t *testing.T) {
	p := mustPlan(t, kindNet, remoteNode, vm)
	var purposes []string
	for _, r := range p.RulesOf(remoteNode.Name) {
		purposes = append(purposes, r.Purpose)
		spec := strings.Join(r.Spec("c1"), " ")
		in := strings.HasPrefix(spec, "-s 192.168.80.2/32 -d 172.18.0.0/16 ")
		out := strings.HasPrefix(spec, "-s 172.18.0.0/16 -d 192.168.80.2/32 ")
		if !in && !out {
			t.Errorf("rule %s is not scoped to the machine and the kind network: %s", r.Purpose, spec)
		}
		if !strings.Contains(spec, "--comment winconform-underlay:c1:c1-remote:"+r.Purpose+" ") {
			t.Errorf("rule %s carries no mark: %s", r.Purpose, spec)
		}
	}
	want := []string{"api-server", "kubelet", "vxlan-in", "vxlan-out", "nodeports-in-tcp", "nodeports-in-udp", "nodeports-out-tcp", "nodeports-out-udp", "established-in", "established-out", "keep-addresses"}
	if !slices.Equal(purposes, want) {
		t.Errorf("rules %v, want %v", purposes, want)
	}
	ports := map[string]string{"api-server": "--dport 6443", "kubelet": "--dport 10250", "vxlan-in": "udp --dport 4789", "vxlan-out": "udp --dport 4789", "nodeports-out-tcp": "tcp --dport 30000:32767"}
	for _, r := range p.RulesOf(remoteNode.Name) {
		if w, ok := ports[r.Purpose]; ok && !strings.Contains(strings.Join(r.Match, " "), w) {
			t.Errorf("rule %s: %v, want %s", r.Purpose, r.Match, w)
		}
	}
	if got := p.RulesOf(vm.Name); len(got) != 0 {
		t.Errorf("a same-host machine has rules: %v", got)
	}
	if got, want := p.RoutesOf(remoteNode.Name), []Route{{Machine: remoteNode.Name, Dest: kindNet.Subnet, Via: remoteNode.Via}}; !slices.Equal(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
	if len(p.RoutesOf(vm.Name)) != 0 {
		t.Errorf("a same-host machine gets a route")
	}
	nat := p.RulesOf(remoteNode.Name)[10]
	if got := nat.Command("c1", "-I"); got != "iptables -t nat -I POSTROUTING -s 172.18.0.0/16 -d 192.168.80.2/32 -m comment --comment winconform-underlay:c1:c1-remote:keep-addresses -j RETURN" {
		t.Errorf("the nat rule's command: %s", got)
	}
}

// Every machine the plan cannot serve is refused, naming it and what to set.
func TestPlanRefusals(t *testing.T) {
	hostGW := kindNet
	hostGW.Backend = "host-gw"
	noVia := remoteNode
	noVia.Via = netip.Addr{}
	viaKind := remoteNode
	viaKind.Via = netip.MustParseAddr("172.18.0.1")
	onKind := remoteNode
	onKind.Address = netip.MustParseAddr("172.18.0.9")
	offKind := vm
	offKind.Address = netip.MustParseAddr("10.9.9.9")
	v6 := remoteNode
	v6.Address = netip.MustParseAddr("fd00::2")
	badOS := remoteNode
	badOS.OS = "plan9"
	for _, c := range []struct {
		name string
		n    Network
		ms   []Machine
		want string
	}{
		{"host-gw routed", hostGW, []Machine{remoteNode}, "needs the vxlan back end"},
		{"no via", kindNet, []Machine{noVia}, "set the address of this host"},
		{"via on kind", kindNet, []Machine{viaKind}, "underlay.via 172.18.0.1 is on the kind network"},
		{"routed on kind", kindNet, []Machine{onKind}, "that is the same-host shape"},
		{"same-host off kind", kindNet, []Machine{offKind}, "is not on the kind network 172.18.0.0/16"},
		{"ipv6", kindNet, []Machine{v6}, "is not an IPv4 address"},
		{"os", kindNet, []Machine{badOS}, `OS "plan9"`},
		{"twice", kindNet, []Machine{remoteNode, remoteNode}, "listed twice"},
		{"shape", kindNet, []Machine{{Name: "x", OS: Linux, Address: remoteNode.Address, Shape: "tunnel"}}, `"tunnel" is not an underlay shape`},
	} {
		_, err := NewPlan(c.n, c.ms)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "machine ") && c.name != "host-gw" {
			t.Errorf("%s: the error does not name the machine: %v", c.name, err)
		}
	}
	// host-gw is fine for same-host machines, which share the kind network's L2.
	if _, err := NewPlan(hostGW, []Machine{vm}); err != nil {
		t.Errorf("host-gw with a same-host machine: %v", err)
	}
}

func TestParseMark(t *testing.T) {
	c, m, p, ok := parseMark(`-A DOCKER-USER -s 10.1.2.3/32 -d 172.18.0.0/16 -m comment --comment "winconform-underlay:c1:win-a:vxlan-in" -c 4 400 -j ACCEPT`)
	if !ok || c != "c1" || m != "win-a" || p != "vxlan-in" {
		t.Errorf("parseMark = %q %q %q %v", c, m, p, ok)
	}
	if _, _, _, ok := parseMark(`-A DOCKER-USER -m comment --comment "someone else's" -j ACCEPT`); ok {
		t.Errorf("a foreign comment parsed as a mark")
	}
}

func TestSplitRule(t *testing.T) {
	got, err := splitRule(`-A DOCKER-USER -s 10.0.0.1/32 -m comment --comment "a b \"c\"" -j ACCEPT`)
	want := []string{"-A", "DOCKER-USER", "-s", "10.0.0.1/32", "-m", "comment", "--comment", `a b "c"`, "-j", "ACCEPT"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("splitRule = %q, %v; want %q", got, err, want)
	}
	if _, err := splitRule(`-A X --comment "open`); err == nil {
		t.Errorf("an unbalanced quote parsed")
	}
}

// Without root the underlay is refused up front, saying why and the way
// out.
func TestCheckRoot(t *testing.T) {
	defer func(f func() int) { euid = f }(euid)
	euid = func() int { return 1000 }
	err := CheckRoot("remoteNodes: 1")
	if !errors.Is(err, ErrNotRoot) || !strings.Contains(err.Error(), "remoteNodes: 1 needs root on the kind host") || !strings.Contains(err.Error(), "underlay.shape: none") {
		t.Errorf("CheckRoot without root: %v", err)
	}
	euid = func() int { return 0 }
	if err := CheckRoot("x"); err != nil {
		t.Errorf("CheckRoot as root: %v", err)
	}
}
