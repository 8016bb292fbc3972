// Package underlay makes, checks and removes the network path between a
// kind cluster's nodes and the machines the harness joins to it from
// outside kind's Docker network.
//
// kind's nodes live on a Docker bridge network that no other host reaches,
// Docker drops forwarded traffic into it that no published port asks for,
// and it masquerades what leaves it for another network. flannel's VXLAN
// back end advertises each node's own address as its tunnel endpoint, so a
// machine outside that network needs three things from the kind host: its
// packets forwarded into the kind network (and back) for the ports that
// matter, a route to the kind network through the kind host, and the kind
// nodes' packets arriving from their own addresses, not the host's. Two
// shapes exist:
//
//   - SameHost: the machine is attached to the kind network's bridge itself
//     (a VM on the kind host); nothing is added, the path is checked.
//   - Routed: the machine is elsewhere (a lab machine, a cloud VM, another
//     Docker network); the kind host forwards between the two networks
//     through rules in Docker's DOCKER-USER chain scoped to the machine's
//     address and the ports that matter, a nat RETURN ahead of Docker's
//     MASQUERADE keeps the kind nodes' addresses, and the machine gets a
//     route to the kind network through the kind host.
//
// Everything the harness adds carries a mark: an iptables comment
// "winconform-underlay:<cluster>:..." on the host, route protocol
// LinuxRouteProtocol on a Linux machine, route metric WindowsRouteMetric on
// a Windows one. Remove and Sweep find what they remove by that mark, so a
// run that was interrupted or killed leaves nothing the next one does not
// take away.
package underlay

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
)

// Shape is how a machine reaches the kind network.
type Shape string

// The shapes.
const (
	// Routed: the machine routes to the kind network through the kind host,
	// which forwards between the two (the default for inventory machines).
	Routed Shape = "routed"
	// SameHost: the machine is on the kind network's own bridge (a VM the
	// harness made on the kind host).
	SameHost Shape = "same-host"
	// None: the network between the machine and the kind nodes is someone
	// else's to make; the harness adds nothing and only checks the path.
	None Shape = "none"
)

// ParseShape reads a shape as the inventory and the VM file write it.
func ParseShape(s string) (Shape, error) {
	switch Shape(s) {
	case Routed, SameHost, None:
		return Shape(s), nil
	}
	return "", fmt.Errorf("%q is not an underlay shape: use %s (the machine routes to the kind network through the kind host), %s (a VM on the kind network's own bridge) or %s (the network is made by others; the harness only checks it)", s, Routed, SameHost, None)
}

// The OSes of machines.
const (
	Linux   = "linux"
	Windows = "windows"
)

// Ports the underlay forwards, by what uses them.
const (
	// APIServerPort is the port the API server listens on in the
	// control-plane node (kubeadm's default; kind publishes another one on
	// the host), which the kubernetes Service's endpoint names.
	APIServerPort = 6443
	// KubeletPort is the kubelet's port, which the API server calls back
	// (logs, exec, port-forward, metrics).
	KubeletPort = 10250
	// NodePortFirst and NodePortLast bound the Service NodePort range
	// (the API server's default --service-node-port-range).
	NodePortFirst = 30000
	NodePortLast  = 32767
)

// Marks of what the harness adds.
const (
	// CommentPrefix starts the comment of every iptables rule the underlay
	// adds: winconform-underlay:<cluster>:<machine>:<purpose>.
	CommentPrefix = "winconform-underlay:"
	// LinuxRouteProtocol is the route protocol (ip route ... proto) of the
	// routes the harness adds on a Linux machine. The kernel leaves
	// protocols above 4 to routing daemons; 211 is none of those iproute2
	// names in /etc/iproute2/rt_protos.
	LinuxRouteProtocol = 211
	// WindowsRouteMetric is the route metric of the routes the harness adds
	// on a Windows machine: the join's (nodeconfig.UnderlayRouteMetric).
	WindowsRouteMetric = nodeconfig.UnderlayRouteMetric
)

// Machine is one machine joined through the underlay.
type Machine struct {
	// Name is the machine's node name.
	Name string `json:"name"`
	// OS is linux or windows.
	OS string `json:"os"`
	// Address is the node's address: its tunnel endpoint, and where the
	// control plane reaches its kubelet.
	Address netip.Addr `json:"address"`
	Shape   Shape      `json:"shape"`
	// Via is the kind host's address the machine routes the kind network
	// through (Routed only).
	Via netip.Addr `json:"via,omitzero"`
}

// Network is the kind side of the underlay.
type Network struct {
	// Cluster is the kind cluster's name: the mark of its rules.
	Cluster string `json:"cluster"`
	// Subnet is the Docker network kind's nodes are on.
	Subnet netip.Prefix `json:"subnet"`
	// Bridge is that network's bridge device on the host (br-<id>).
	Bridge string `json:"bridge,omitempty"`
	// ControlPlane is the control-plane node's address on it.
	ControlPlane netip.Addr `json:"controlPlane"`
	// PodSubnet is the cluster's pod network.
	PodSubnet netip.Prefix `json:"podSubnet"`
	// Backend is flannel's back end (vxlan or host-gw) and VXLANPort its
	// UDP port.
	Backend   string `json:"backend"`
	VXLANPort int    `json:"vxlanPort,omitempty"`
}

// Route is one route a machine gets: to Dest through Via.
type Route struct {
	Machine string       `json:"machine"`
	Dest    netip.Prefix `json:"dest"`
	Via     netip.Addr   `json:"via"`
}

// Plan is what the underlay is for a cluster and its machines: the host's
// rules and each machine's routes.
type Plan struct {
	Network  Network   `json:"network"`
	Machines []Machine `json:"machines"`
	Rules    []Rule    `json:"rules"`
	Routes   []Route   `json:"routes"`
}

// NewPlan checks the network and the machines and makes the plan. Every
// problem is named with the machine and what to set.
func NewPlan(n Network, machines []Machine) (Plan, error) {
	var errs []error
	if !n.Subnet.IsValid() || !n.Subnet.Addr().Is4() {
		errs = append(errs, fmt.Errorf("the kind network's subnet %v is not an IPv4 prefix", n.Subnet))
	}
	if n.Cluster == "" || strings.Contains(n.Cluster, ":") {
		errs = append(errs, fmt.Errorf("cluster name %q cannot mark rules", n.Cluster))
	}
	if n.Backend != "vxlan" && n.Backend != "host-gw" {
		errs = append(errs, fmt.Errorf("flannel back end %q: the underlay knows vxlan and host-gw", n.Backend))
	}
	if n.Backend == "vxlan" && n.VXLANPort == 0 {
		n.VXLANPort = 4789
	}
	p := Plan{Network: n}
	seen := map[string]bool{}
	for _, m := range machines {
		if err := n.checkMachine(m); err != nil {
			errs = append(errs, fmt.Errorf("machine %s: %w", m.Name, err))
			continue
		}
		if seen[m.Name] {
			errs = append(errs, fmt.Errorf("machine %s is listed twice", m.Name))
			continue
		}
		seen[m.Name] = true
		p.Machines = append(p.Machines, m)
		if m.Shape != Routed {
			continue
		}
		p.Rules = append(p.Rules, n.rules(m)...)
		p.Routes = append(p.Routes, Route{Machine: m.Name, Dest: n.Subnet, Via: m.Via})
	}
	return p, errors.Join(errs...)
}

func (n Network) checkMachine(m Machine) error {
	if m.Name == "" || strings.Contains(m.Name, ":") {
		return fmt.Errorf("name %q cannot mark rules", m.Name)
	}
	if m.OS != Linux && m.OS != Windows {
		return fmt.Errorf("OS %q: want %s or %s", m.OS, Linux, Windows)
	}
	if !m.Address.IsValid() || !m.Address.Is4() {
		return fmt.Errorf("address %v is not an IPv4 address (the underlay is IPv4, as kind's network and flannel's VXLAN here are)", m.Address)
	}
	switch m.Shape {
	case Routed:
		if n.Backend == "host-gw" {
			return fmt.Errorf("flannel's host-gw back end routes pods through each node's address as a next hop, which only works among nodes on one L2 network: a routed machine needs the vxlan back end (cni.backend: vxlan), or the same-host shape")
		}
		if n.Subnet.Contains(m.Address) {
			return fmt.Errorf("its address %s is on the kind network %s itself: that is the %s shape, not %s", m.Address, n.Subnet, SameHost, Routed)
		}
		if !m.Via.IsValid() || !m.Via.Is4() {
			return fmt.Errorf("no kind host address to route through (underlay.via): set the address of this host that the machine reaches")
		}
		if n.Subnet.Contains(m.Via) {
			return fmt.Errorf("underlay.via %s is on the kind network %s: give the kind host's address on the machine's network", m.Via, n.Subnet)
		}
	case SameHost:
		if !n.Subnet.Contains(m.Address) {
			return fmt.Errorf("its address %s is not on the kind network %s: a same-host machine is attached to the kind network's bridge (libvirt: network kind); for a machine elsewhere use the %s shape", m.Address, n.Subnet, Routed)
		}
	case None:
	default:
		_, err := ParseShape(string(m.Shape))
		return err
	}
	return nil
}

// RoutesOf returns the routes of machine name.
func (p Plan) RoutesOf(name string) []Route {
	var out []Route
	for _, r := range p.Routes {
		if r.Machine == name {
			out = append(out, r)
		}
	}
	return out
}

// RulesOf returns the rules of machine name.
func (p Plan) RulesOf(name string) []Rule {
	var out []Rule
	for _, r := range p.Rules {
		if r.Machine == name {
			out = append(out, r)
		}
	}
	return out
}

// Needed says whether the plan changes the host (a routed machine).
func (p Plan) Needed() bool { return len(p.Rules) > 0 }

// euid is the process's effective user ID (a test's stand-in).
var euid = os.Geteuid

// ErrNotRoot is the refusal of a host change without root.
var ErrNotRoot = errors.New("not root")

// CheckRoot refuses, naming why and the fix, when this process cannot
// change the host's firewall and routes. what says who asks.
func CheckRoot(what string) error {
	if euid() == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s needs root on the kind host: the underlay adds iptables rules (Docker's DOCKER-USER chain, a nat RETURN) and routes, and checks them; run the harness as root (sudo -E), or give the machines underlay.shape: none and make the path yourself", ErrNotRoot, what)
}
