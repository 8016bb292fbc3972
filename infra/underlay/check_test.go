package underlay

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeSide is a machine whose answers the test sets.
type fakeSide struct {
	os      string
	hop     netip.Addr
	hopErr  error
	dialErr error
	peers   []netip.Addr
}

func (s *fakeSide) OS() string { return s.os }
func (s *fakeSide) NextHop(context.Context, netip.Addr) (netip.Addr, error) {
	return s.hop, s.hopErr
}
func (s *fakeSide) Dial(context.Context, netip.AddrPort, time.Duration) error { return s.dialErr }
func (s *fakeSide) Peers(context.Context, int) ([]netip.Addr, error)          { return s.peers, nil }
func (s *fakeSide) RouteCommand(r Route) string {
	return "add " + r.Dest.String() + " via " + r.Via.String()
}

type fakeKind struct{ dialErr error }

func (k fakeKind) Dial(context.Context, netip.AddrPort, time.Duration) error { return k.dialErr }
func (k fakeKind) Hold(ctx context.Context, _ netip.AddrPort, d time.Duration) error {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return nil
}

// fakePods "sends" VXLAN through the host's counters as pods would.
type fakePods struct {
	f        *fakeTables
	in, out  uint64
	fail     error
	machines []string
}

func (p *fakePods) Probe(_ context.Context, m Machine) (error, error, error) {
	p.machines = append(p.machines, m.Name)
	p.f.count(CommentPrefix+"c1:"+m.Name+":vxlan-in", p.in)
	p.f.count(CommentPrefix+"c1:"+m.Name+":vxlan-out", p.out)
	return p.fail, nil, nil
}

// healthy is a routed machine whose every rung passes.
func healthy(t *testing.T) (CheckEnv, *fakeTables, *fakeSide, *fakePods) {
	t.Helper()
	f := dockerHost()
	h, _ := newHost(t, f)
	p := mustPlan(t, kindNet, remoteNode)
	if _, err := h.Apply(p); err != nil {
		t.Fatal(err)
	}
	side := &fakeSide{os: Linux, hop: remoteNode.Via, peers: []netip.Addr{kindNet.ControlPlane}}
	pods := &fakePods{f: f, in: 5, out: 6}
	return CheckEnv{Plan: p, Host: h, Sides: map[string]Side{remoteNode.Name: side}, Kind: fakeKind{}, Pods: pods, Timeout: time.Second, Hold: 1500 * time.Millisecond}, f, side, pods
}

func rungs(r MachineReport) map[string]Rung {
	out := map[string]Rung{}
	for _, g := range r.Rungs {
		out[g.Name] = g
	}
	return out
}

func TestCheckHealthy(t *testing.T) {
	env, _, _, _ := healthy(t)
	rep := Check(context.Background(), env)
	if err := rep.Err(); err != nil {
		t.Fatalf("a healthy underlay fails: %v\n%s", err, rep)
	}
	for _, g := range rep.Machines[0].Rungs {
		if g.Result != RungOK {
			t.Errorf("rung %s: %s", g.Name, g.Result)
		}
	}
	if len(rep.Machines[0].Rungs) != len(Rungs) {
		t.Errorf("%d rungs reported, want %d", len(rep.Machines[0].Rungs), len(Rungs))
	}
}

// Each broken part fails its own rung, naming what is missing and the
// command that fixes it; the rungs above are not tried.
func TestCheckNamesWhatIsMissing(t *testing.T) {
	for _, c := range []struct {
		name    string
		breakIt func(env *CheckEnv, f *fakeTables, s *fakeSide, p *fakePods)
		rung    string
		problem string
		fix     string
	}{
		{"a rule taken away", func(env *CheckEnv, f *fakeTables, _ *fakeSide, _ *fakePods) {
			r := env.Plan.RulesOf(remoteNode.Name)[2]
			_ = f.Delete(r.Table, r.Chain, r.Spec("c1")...)
		}, RungHost, "rule vxlan-in (filter DOCKER-USER) is missing", "iptables -t filter -I DOCKER-USER -s 192.168.80.2/32 -d 172.18.0.0/16 -p udp -m udp --dport 4789 -m comment --comment winconform-underlay:c1:c1-remote:vxlan-in -j ACCEPT"},
		{"no forwarding", func(env *CheckEnv, _ *fakeTables, _ *fakeSide, _ *fakePods) {
			_ = writeFile(env.Host.ForwardingFile, "0\n")
		}, RungHost, "does not forward IPv4", "sysctl -w net.ipv4.ip_forward=1"},
		{"the route through the lab's router", func(_ *CheckEnv, _ *fakeTables, s *fakeSide, _ *fakePods) {
			s.hop = netip.MustParseAddr("192.168.80.254")
		}, RungRoute, "through 192.168.80.254, not through the kind host 192.168.80.1", "on c1-remote: add 172.18.0.0/16 via 192.168.80.1"},
		{"no route", func(_ *CheckEnv, _ *fakeTables, s *fakeSide, _ *fakePods) {
			s.hop, s.hopErr = netip.Addr{}, ErrNoRoute
		}, RungRoute, "has no route to the kind network", "add 172.18.0.0/16 via 192.168.80.1"},
		{"the API server blocked past the host", func(_ *CheckEnv, _ *fakeTables, s *fakeSide, _ *fakePods) {
			s.dialErr = errors.New("timed out after 1s")
		}, RungAPIServer, "cannot open tcp to the API server at 172.18.0.4:6443", "rule api-server is in place"},
		{"the kubelet blocked", func(env *CheckEnv, _ *fakeTables, _ *fakeSide, _ *fakePods) {
			env.Kind = fakeKind{dialErr: errors.New("Connection refused")}
		}, RungKubelet, "cannot open tcp to c1-remote's kubelet at 192.168.80.2:10250", "rule kubelet is in place"},
		{"the kind host's address seen", func(_ *CheckEnv, _ *fakeTables, s *fakeSide, _ *fakePods) {
			s.peers = []netip.Addr{netip.MustParseAddr("192.168.80.1")}
		}, RungAddresses, "coming from 192.168.80.1, not from 172.18.0.4", "iptables -t nat -I POSTROUTING -s 172.18.0.0/16 -d 192.168.80.2/32 -m comment --comment winconform-underlay:c1:c1-remote:keep-addresses -j RETURN"},
		{"no VXLAN to the machine", func(_ *CheckEnv, _ *fakeTables, _ *fakeSide, p *fakePods) {
			p.out = 0
		}, RungVXLAN, "no VXLAN from the kind nodes to c1-remote passed the kind host's rule vxlan-out", ""},
		{"no VXLAN back", func(_ *CheckEnv, _ *fakeTables, _ *fakeSide, p *fakePods) {
			p.in = 0
		}, RungVXLAN, "no VXLAN from c1-remote reached the kind host's rule vxlan-in", "udp 4789 from 192.168.80.2 to 172.18.0.0/16"},
		{"pods", func(_ *CheckEnv, _ *fakeTables, _ *fakeSide, p *fakePods) {
			p.fail = errors.New("timeout")
		}, RungPods, "a pod on a kind node cannot reach a pod on c1-remote: timeout", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, f, s, p := healthy(t)
			c.breakIt(&env, f, s, p)
			rep := Check(context.Background(), env)
			g, failed := rep.Machines[0].Failed()
			if !failed || g.Name != c.rung {
				t.Fatalf("failed rung %+v, want %s\n%s", g, c.rung, rep)
			}
			if !strings.Contains(g.Problem, c.problem) || !strings.Contains(g.Fix, c.fix) {
				t.Errorf("rung %s: problem %q, fix %q; want them to say %q and %q", g.Name, g.Problem, g.Fix, c.problem, c.fix)
			}
			seen := false
			for _, r := range rep.Machines[0].Rungs {
				if seen && r.Result != RungNotTried {
					t.Errorf("rung %s above the failed one was %s", r.Name, r.Result)
				}
				seen = seen || r.Name == c.rung
			}
			if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "machine c1-remote") || !strings.Contains(err.Error(), c.rung) {
				t.Errorf("the error does not name the machine and the rung: %v", err)
			}
		})
	}
}

// A same-host machine (a VM on the kind bridge) climbs the same ladder: no
// rule to check, its kind network on-link.
func TestCheckSameHost(t *testing.T) {
	f := dockerHost()
	h, _ := newHost(t, f)
	p := mustPlan(t, kindNet, vm)
	side := &fakeSide{os: Windows, peers: []netip.Addr{kindNet.ControlPlane}}
	env := CheckEnv{Plan: p, Host: h, Sides: map[string]Side{vm.Name: side}, Kind: fakeKind{}, Pods: &fakePods{f: f}, Timeout: time.Second, Hold: 1500 * time.Millisecond}
	rep := Check(context.Background(), env)
	if err := rep.Err(); err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	if g := rungs(rep.Machines[0]); g[RungHost].Result != RungSkipped || g[RungVXLAN].Result != RungSkipped || g[RungPods].Result != RungOK {
		t.Errorf("same-host rungs:\n%s", rep)
	}
	side.hop = netip.MustParseAddr("10.0.0.1")
	rep = Check(context.Background(), env)
	if g, ok := rep.Machines[0].Failed(); !ok || g.Name != RungRoute || !strings.Contains(g.Fix, "br-kind") {
		t.Errorf("a same-host machine off the bridge: %+v", g)
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
