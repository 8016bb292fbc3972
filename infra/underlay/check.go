package underlay

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// The check's rungs, in order. Each machine climbs them until one fails;
// the rungs above it are not tried.
const (
	RungHost      = "host rules"       // the kind host's rules are there, the nat RETURN ahead of Docker's MASQUERADE
	RungRoute     = "route"            // the machine routes the kind network through the kind host (or is on it)
	RungAPIServer = "API server"       // the machine reaches the API server in the control-plane node
	RungKubelet   = "kubelet"          // the control plane reaches the machine's kubelet
	RungAddresses = "tunnel endpoints" // the machine sees the kind nodes' own addresses, not the host's
	RungVXLAN     = "VXLAN"            // VXLAN passes the kind host both ways
	RungPods      = "pods"             // a pod on each side reaches the other
)

// Rungs lists the rungs in the order they are climbed.
var Rungs = []string{RungHost, RungRoute, RungAPIServer, RungKubelet, RungAddresses, RungVXLAN, RungPods}

// KindSide is the control-plane node, from which the check reaches the
// machines (LinuxSide through docker exec into the node).
type KindSide interface {
	Dial(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error
	Hold(ctx context.Context, addr netip.AddrPort, d time.Duration) error
}

// PodProber runs the pods rung: a pod on the machine's node and one on a
// kind node, each probing the other.
type PodProber interface {
	// Probe returns the error of each direction: out is the kind pod to the
	// machine's pod, back the machine's pod to the kind pod.
	Probe(ctx context.Context, m Machine) (out, back error, err error)
}

// CheckEnv is what the check needs.
type CheckEnv struct {
	Plan Plan
	// Host reads the kind host's rules; needed for routed machines.
	Host *Host
	// Sides are the machines, by name.
	Sides map[string]Side
	// Kind is the control-plane node.
	Kind KindSide
	// Pods runs the pods rung; nil leaves it (and VXLAN, which counts the
	// pods' packets) unchecked.
	Pods PodProber
	// Timeout bounds each connection the check opens (5 s when zero).
	Timeout time.Duration
	// Hold is how long the tunnel endpoints rung holds its connection
	// open at most (6 s when zero).
	Hold time.Duration
}

// Rung is one rung's outcome on one machine.
type Rung struct {
	Name string `json:"name"`
	// Result is ok, failed, skipped (does not apply to the shape, or nothing
	// to check it with) or not tried (a rung below failed).
	Result string `json:"result"`
	// Detail says what was seen; Problem what is wrong, naming the rule or
	// route; Fix the command that puts it right.
	Detail  string `json:"detail,omitempty"`
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// Rung results.
const (
	RungOK       = "ok"
	RungFailed   = "failed"
	RungSkipped  = "skipped"
	RungNotTried = "not tried"
)

// MachineReport is one machine's climb.
type MachineReport struct {
	Machine string `json:"machine"`
	OS      string `json:"os"`
	Shape   Shape  `json:"shape"`
	Rungs   []Rung `json:"rungs"`
}

// Failed returns the rung that failed, if any.
func (r MachineReport) Failed() (Rung, bool) {
	for _, g := range r.Rungs {
		if g.Result == RungFailed {
			return g, true
		}
	}
	return Rung{}, false
}

// Report is the check of every machine.
type Report struct {
	Machines []MachineReport `json:"machines"`
}

// Err names, per machine, the rung that failed, the problem and the fix.
func (r Report) Err() error {
	var errs []error
	for _, m := range r.Machines {
		if g, ok := m.Failed(); ok {
			msg := fmt.Sprintf("underlay check: machine %s (%s, %s): rung %q failed: %s", m.Machine, m.OS, m.Shape, g.Name, g.Problem)
			if g.Fix != "" {
				msg += "; fix: " + g.Fix
			}
			errs = append(errs, errors.New(msg))
		}
	}
	return errors.Join(errs...)
}

// String is the report as lines, one per rung.
func (r Report) String() string {
	var b strings.Builder
	for _, m := range r.Machines {
		fmt.Fprintf(&b, "underlay check of %s (%s, %s):\n", m.Machine, m.OS, m.Shape)
		for _, g := range m.Rungs {
			fmt.Fprintf(&b, "  %-16s %-9s %s", g.Name, g.Result, g.Detail)
			if g.Problem != "" {
				fmt.Fprintf(&b, " -- %s", g.Problem)
			}
			if g.Fix != "" {
				fmt.Fprintf(&b, "; fix: %s", g.Fix)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Check climbs the rungs for every machine of the plan, one machine after
// the other.
func Check(ctx context.Context, env CheckEnv) Report {
	if env.Timeout == 0 {
		env.Timeout = 5 * time.Second
	}
	if env.Hold == 0 {
		env.Hold = 6 * time.Second
	}
	var rep Report
	for _, m := range env.Plan.Machines {
		rep.Machines = append(rep.Machines, env.machine(ctx, m))
	}
	return rep
}

// climb records rungs in order and stops at the first that fails.
type climb struct {
	rep    MachineReport
	failed bool
}

func (c *climb) add(g Rung) bool {
	if c.failed {
		g = Rung{Name: g.Name, Result: RungNotTried}
	}
	c.rep.Rungs = append(c.rep.Rungs, g)
	if g.Result == RungFailed {
		c.failed = true
	}
	return !c.failed
}

func (env CheckEnv) machine(ctx context.Context, m Machine) MachineReport {
	c := &climb{rep: MachineReport{Machine: m.Name, OS: m.OS, Shape: m.Shape}}
	side := env.Sides[m.Name]
	cp := env.Plan.Network.ControlPlane
	if side == nil {
		c.add(Rung{Name: RungHost, Result: RungFailed, Problem: "the harness cannot reach the machine to check it"})
		return c.finish()
	}
	c.add(env.hostRung(m))
	if c.failed {
		return c.finish()
	}
	c.add(env.routeRung(ctx, m, side))
	if c.failed {
		return c.finish()
	}
	api := netip.AddrPortFrom(cp, APIServerPort)
	if err := side.Dial(ctx, api, env.Timeout); err != nil {
		c.add(Rung{Name: RungAPIServer, Result: RungFailed, Problem: fmt.Sprintf("%s cannot open tcp to the API server at %s: %v", m.Name, api, err),
			Fix: env.pathFix(m, "api-server", fmt.Sprintf("tcp %d from %s to %s", APIServerPort, m.Address, env.Plan.Network.Subnet))})
		return c.finish()
	}
	c.add(Rung{Name: RungAPIServer, Result: RungOK, Detail: "tcp to " + api.String()})
	kubelet := netip.AddrPortFrom(m.Address, KubeletPort)
	if err := env.Kind.Dial(ctx, kubelet, env.Timeout); err != nil {
		fix := env.pathFix(m, "kubelet", fmt.Sprintf("tcp %d from %s to %s", KubeletPort, env.Plan.Network.Subnet, m.Address))
		if m.OS == Windows {
			fix += "; on the machine, the kubelet's firewall rule (the join's firewall step) must allow tcp 10250"
		}
		c.add(Rung{Name: RungKubelet, Result: RungFailed, Problem: fmt.Sprintf("the control-plane node %s cannot open tcp to %s's kubelet at %s: %v", cp, m.Name, kubelet, err), Fix: fix})
		return c.finish()
	}
	c.add(Rung{Name: RungKubelet, Result: RungOK, Detail: "tcp from " + cp.String() + " to " + kubelet.String()})
	c.add(env.addressesRung(ctx, m, side, kubelet))
	if c.failed {
		return c.finish()
	}
	vxlan, pods := env.podRungs(ctx, m)
	c.add(vxlan)
	c.add(pods)
	return c.finish()
}

func (c *climb) finish() MachineReport {
	// Every rung appears, the ones not reached as not tried.
	for _, name := range Rungs[len(c.rep.Rungs):] {
		c.rep.Rungs = append(c.rep.Rungs, Rung{Name: name, Result: RungNotTried})
	}
	return c.rep
}

// pathFix says what to do about a path the host's rule purpose should let
// through: the rule, when it is missing; else what lies outside the
// harness's hands.
func (env CheckEnv) pathFix(m Machine, purpose, what string) string {
	if m.Shape == Routed {
		for _, r := range env.Plan.RulesOf(m.Name) {
			if r.Purpose == purpose {
				return fmt.Sprintf("the kind host's rule %s is in place (%s); what is between %s and the kind host must pass %s: the machine's own firewall, the lab's routers and firewalls", purpose, r.Command(env.Plan.Network.Cluster, "-C"), m.Name, what)
			}
		}
	}
	return fmt.Sprintf("the network between %s and the kind network must pass %s", m.Name, what)
}

func (env CheckEnv) hostRung(m Machine) Rung {
	if m.Shape != Routed {
		return Rung{Name: RungHost, Result: RungSkipped, Detail: fmt.Sprintf("no rule: the %s shape adds none", m.Shape)}
	}
	if env.Host == nil {
		return Rung{Name: RungHost, Result: RungFailed, Problem: "the kind host's rules cannot be read"}
	}
	if on, err := env.Host.Forwarding(); err != nil || !on {
		return Rung{Name: RungHost, Result: RungFailed, Problem: fmt.Sprintf("the kind host does not forward IPv4 (net.ipv4.ip_forward is off: %v)", err), Fix: "sysctl -w net.ipv4.ip_forward=1"}
	}
	probs, err := env.Host.Missing(env.Plan, m.Name)
	if err != nil {
		return Rung{Name: RungHost, Result: RungFailed, Problem: "reading the kind host's rules: " + err.Error()}
	}
	if len(probs) > 0 {
		var what, fixes []string
		for _, p := range probs {
			what = append(what, fmt.Sprintf("the kind host's rule %s (%s %s) is %s: without it, %s", p.Rule.Purpose, p.Rule.Table, p.Rule.Chain, p.What, p.Rule.Why))
			fixes = append(fixes, p.Fix)
		}
		return Rung{Name: RungHost, Result: RungFailed, Problem: strings.Join(what, "; "), Fix: strings.Join(fixes, "; ")}
	}
	return Rung{Name: RungHost, Result: RungOK, Detail: fmt.Sprintf("%d rules in DOCKER-USER and nat POSTROUTING", len(env.Plan.RulesOf(m.Name)))}
}

func (env CheckEnv) routeRung(ctx context.Context, m Machine, side Side) Rung {
	n := env.Plan.Network
	hop, err := side.NextHop(ctx, n.ControlPlane)
	if err != nil && !errors.Is(err, ErrNoRoute) {
		return Rung{Name: RungRoute, Result: RungFailed, Problem: fmt.Sprintf("cannot read %s's route to the kind network: %v", m.Name, err)}
	}
	switch m.Shape {
	case Routed:
		routes := env.Plan.RoutesOf(m.Name)
		fix := ""
		for _, r := range routes {
			fix = side.RouteCommand(r)
		}
		if err != nil {
			return Rung{Name: RungRoute, Result: RungFailed, Problem: fmt.Sprintf("%s has no route to the kind network %s (%v): it needs one through the kind host %s", m.Name, n.Subnet, err, m.Via), Fix: "on " + m.Name + ": " + fix}
		}
		if hop != m.Via {
			via := "on-link"
			if hop.IsValid() {
				via = "through " + hop.String()
			}
			return Rung{Name: RungRoute, Result: RungFailed, Problem: fmt.Sprintf("%s sends packets for the kind network %s %s, not through the kind host %s: the harness's route is missing", m.Name, n.Subnet, via, m.Via), Fix: "on " + m.Name + ": " + fix}
		}
		return Rung{Name: RungRoute, Result: RungOK, Detail: fmt.Sprintf("%s through %s", n.Subnet, hop)}
	case SameHost:
		if err != nil || hop.IsValid() {
			return Rung{Name: RungRoute, Result: RungFailed, Problem: fmt.Sprintf("%s does not reach the kind network %s on its own link (next hop %v, %v): a same-host machine is on the kind network's bridge", m.Name, n.Subnet, hop, err),
				Fix: "attach the machine to the kind network's bridge " + n.Bridge + " with an address of " + n.Subnet.String()}
		}
		return Rung{Name: RungRoute, Result: RungOK, Detail: "on the kind network's bridge"}
	default:
		if err != nil {
			return Rung{Name: RungRoute, Result: RungFailed, Problem: fmt.Sprintf("%s has no route to the kind network %s: %v", m.Name, n.Subnet, err), Fix: "give " + m.Name + " a route to " + n.Subnet.String()}
		}
		return Rung{Name: RungRoute, Result: RungOK, Detail: fmt.Sprintf("next hop %v", hop)}
	}
}

// addressesRung holds a connection from the control-plane node to the
// machine's kubelet and asks the machine whom it sees at the other end:
// the control-plane node's own address, or the kind host's (Docker's
// MASQUERADE, which the nat RETURN is there to skip).
func (env CheckEnv) addressesRung(ctx context.Context, m Machine, side Side, kubelet netip.AddrPort) Rung {
	cp := env.Plan.Network.ControlPlane
	hold := env.Hold
	holdCtx, stopHold := context.WithCancel(ctx)
	defer stopHold()
	var wg sync.WaitGroup
	var holdErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := env.Kind.Hold(holdCtx, kubelet, hold)
		if holdCtx.Err() == nil {
			holdErr = err // not the check's own stop
		}
	}()
	var peers []netip.Addr
	var err error
	deadline := time.Now().Add(hold - time.Second)
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return Rung{Name: RungAddresses, Result: RungFailed, Problem: ctx.Err().Error()}
		case <-time.After(700 * time.Millisecond):
		}
		peers, err = side.Peers(ctx, KubeletPort)
		if (err == nil && slices.Contains(peers, cp)) || time.Now().After(deadline) {
			break
		}
	}
	stopHold()
	wg.Wait()
	if err != nil {
		return Rung{Name: RungAddresses, Result: RungFailed, Problem: fmt.Sprintf("asking %s whom it sees connected to its kubelet: %v", m.Name, err)}
	}
	if slices.Contains(peers, cp) {
		return Rung{Name: RungAddresses, Result: RungOK, Detail: fmt.Sprintf("%s sees the control-plane node as %s, its own address", m.Name, cp)}
	}
	if holdErr != nil {
		return Rung{Name: RungAddresses, Result: RungFailed, Problem: fmt.Sprintf("the control-plane node could not hold a connection to %s: %v", kubelet, holdErr)}
	}
	var others []string
	for _, p := range peers {
		if !env.Plan.Network.Subnet.Contains(p) {
			others = append(others, p.String())
		}
	}
	prob := fmt.Sprintf("%s sees the control-plane node's connection to its kubelet coming from %s, not from %s: the kind host masquerades the kind network's packets to it, so flannel's tunnel endpoints (the nodes' own addresses) do not match what arrives",
		m.Name, strings.Join(others, ", "), cp)
	if len(others) == 0 {
		prob = fmt.Sprintf("%s saw no connection to its kubelet from %s (it sees %v)", m.Name, cp, peers)
	}
	fix := ""
	if m.Shape == Routed {
		for _, r := range env.Plan.RulesOf(m.Name) {
			if r.Table == NATTable {
				fix = r.Command(env.Plan.Network.Cluster, "-I")
			}
		}
	} else {
		fix = "no NAT may sit between the kind network and " + m.Name
	}
	return Rung{Name: RungAddresses, Result: RungFailed, Problem: prob, Fix: fix}
}

// podRungs run the pods rung and read, around it, the packets the host's
// VXLAN rules passed.
func (env CheckEnv) podRungs(ctx context.Context, m Machine) (Rung, Rung) {
	if env.Pods == nil {
		return Rung{Name: RungVXLAN, Result: RungSkipped, Detail: "no pods to send traffic through the tunnel"},
			Rung{Name: RungPods, Result: RungSkipped, Detail: "no pods asked for"}
	}
	routed := m.Shape == Routed && env.Host != nil
	var before map[string]uint64
	if routed {
		before, _ = env.Host.Counters(env.Plan, m.Name)
	}
	out, back, err := env.Pods.Probe(ctx, m)
	if err != nil {
		return Rung{Name: RungVXLAN, Result: RungSkipped, Detail: "the pods did not start"},
			Rung{Name: RungPods, Result: RungFailed, Problem: err.Error()}
	}
	vx := Rung{Name: RungVXLAN, Result: RungSkipped, Detail: fmt.Sprintf("no rule to count: the %s shape adds none (the pods rung crosses the tunnel)", m.Shape)}
	if routed {
		after, cerr := env.Host.Counters(env.Plan, m.Name)
		in, outN := after["vxlan-in"]-before["vxlan-in"], after["vxlan-out"]-before["vxlan-out"]
		switch {
		case cerr != nil:
			vx = Rung{Name: RungVXLAN, Result: RungFailed, Problem: "reading the kind host's counters: " + cerr.Error()}
		case outN == 0:
			vx = Rung{Name: RungVXLAN, Result: RungFailed, Problem: fmt.Sprintf("no VXLAN from the kind nodes to %s passed the kind host's rule vxlan-out while the pods probed each other: the kind nodes' flannel does not send to %s as a tunnel endpoint (its node's flannel.alpha.coreos.com/public-ip annotation)", m.Name, m.Address)}
		case in == 0:
			vx = Rung{Name: RungVXLAN, Result: RungFailed, Problem: fmt.Sprintf("no VXLAN from %s reached the kind host's rule vxlan-in while the pods probed each other: the machine's flannel does not send to the kind nodes, or something between it and the kind host drops udp %d", m.Name, env.Plan.Network.VXLANPort),
				Fix: env.pathFix(m, "vxlan-in", fmt.Sprintf("udp %d from %s to %s", env.Plan.Network.VXLANPort, m.Address, env.Plan.Network.Subnet))}
		default:
			vx = Rung{Name: RungVXLAN, Result: RungOK, Detail: fmt.Sprintf("%d packets to %s, %d back, through the kind host", outN, m.Name, in)}
		}
	}
	if vx.Result == RungFailed {
		return vx, Rung{Name: RungPods, Result: RungNotTried}
	}
	if out != nil || back != nil {
		var what []string
		if out != nil {
			what = append(what, "a pod on a kind node cannot reach a pod on "+m.Name+": "+out.Error())
		}
		if back != nil {
			what = append(what, "a pod on "+m.Name+" cannot reach a pod on a kind node: "+back.Error())
		}
		return vx, Rung{Name: RungPods, Result: RungFailed, Problem: strings.Join(what, "; ")}
	}
	return vx, Rung{Name: RungPods, Result: RungOK, Detail: "both ways"}
}
