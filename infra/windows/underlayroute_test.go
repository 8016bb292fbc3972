package windows_test

import (
	"context"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// The kind network as the routed underlay's plan gives it to the join, and
// the kind host the lab machine reaches it through (on its own LAN, beside
// its default gateway 192.0.2.1).
var kindRoute = windows.UnderlayRoute{Destination: "172.18.0.0/16", NextHop: "192.0.2.10"}

// TestJoinGivesARoutedMachineItsRouteToTheKindNetwork joins a lab machine
// of the routed underlay: the join gives it a route to the kind network
// through the kind host, with the harness's metric (211, its mark),
// persistent without an interface (route -p add), so that it outlives
// HNS's virtual switch: flannel's External network moves the host's
// address to vEthernet and takes the adapter's routes away, Windows puts
// the registry's persistent routes back on the adapter that reaches their
// gateway, and a route bound to the physical adapter stays inactive
// (Microsoft KB2966111; the simulated machine models all three, routes.go).
// Before, the step bound the route with New-NetRoute -InterfaceAlias: with
// the data saying so, this test fails at the virtual switch, the route
// gone. A second join changes nothing; reset removes the route by its
// metric.
func TestJoinGivesARoutedMachineItsRouteToTheKindNetwork(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	opts := windows.JoinOptions{UnderlayRoutes: []windows.UnderlayRoute{kindRoute}}
	rep, err := r.join(opts)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if st, _ := rep.Step(windows.StepUnderlayRoute); !st.Changed || st.Skipped {
		t.Errorf("underlay-route on a machine without the route: %+v", st)
	}
	if st, _ := rep.Step(windows.StepUnderlayRoute); st.Status["via"] != "Ethernet via 192.0.2.10" {
		t.Errorf("underlay-route's status %v, want the route on the adapter that reaches the kind host", st.Status)
	}
	order := map[string]int{}
	for i, s := range rep.Order {
		order[s] = i
	}
	if order[windows.StepUnderlayRoute] > order[windows.StepKubeadmJoin] {
		t.Errorf("underlay-route runs after kubeadm-join: %v", rep.Order)
	}
	if got, want := r.sim.Route(kindRoute.Destination), "Ethernet via 192.0.2.10 metric 211 persistent"; got != want {
		t.Errorf("after the join, the route to the kind network is %q, want %q", got, want)
	}
	// flanneld on the joined node: its External network puts HNS's
	// virtual switch on the adapter, then its overlay network; the
	// Containers feature has its nat network.
	for _, n := range []string{"External", "flannel.4096", "nat"} {
		r.sim.AddHNSNetwork(n)
	}
	if r.sim.Route("0.0.0.0/0") != "vEthernet (Ethernet) via 192.0.2.1" {
		t.Fatal("the simulated machine put no virtual switch on the adapter: the test shows nothing")
	}
	if got, want := r.sim.Route(kindRoute.Destination), "vEthernet (Ethernet) via 192.0.2.10 metric 211 persistent"; got != want {
		t.Errorf("after HNS's virtual switch, the route to the kind network is %q, want %q", got, want)
	}
	rep, err = r.join(opts)
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	if st, _ := rep.Step(windows.StepUnderlayRoute); st.Changed || st.Skipped {
		t.Errorf("a second join: changed %t, skipped %t; want the route left as it is", st.Changed, st.Skipped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rrep, err := windows.Reset(ctx, r.machine, r.exec, r.cluster, windows.ResetOptions{Timeouts: testTimeouts(), UnderlayRoutes: opts.UnderlayRoutes})
	if err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if st := stepOf(rrep.Steps, windows.StepUnderlayUnroute); st == nil || !st.Changed {
		t.Errorf("reset's underlay-unroute: %+v, want the route removed", st)
	}
	if got := r.sim.Route(kindRoute.Destination); got != "" {
		t.Errorf("after reset, the route to the kind network is %q, want none", got)
	}
}

// A machine on the kind network's own bridge (a VM on the kind host) gets
// no route: the step is skipped, saying why.
func TestJoinGivesASameHostMachineNoRoute(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if st, _ := rep.Step(windows.StepUnderlayRoute); !st.Skipped || st.SkipReason == "" {
		t.Errorf("underlay-route without routes: %+v", st)
	}
	if got := r.sim.Route(kindRoute.Destination); got != "" {
		t.Errorf("a same-host machine got a route: %q", got)
	}
}

func stepOf(steps []windows.StepReport, name string) *windows.StepReport {
	for i := range steps {
		if steps[i].Name == name {
			return &steps[i]
		}
	}
	return nil
}
