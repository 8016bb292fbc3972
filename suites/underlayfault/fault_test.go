// Package underlayfault holds the underlay's live fault test: on a kind cluster
// with remote nodes (make test's), one of the harness's rules is removed,
// the check must name it and the network matrix must fail exactly the
// cells whose path needs it; the rule put back, both pass again.
package underlayfault

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/underlaypods"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/underlay"
)

// The cluster the test runs on: its name, and its kubeconfig in KUBECONFIG;
// WINCONFORM_PROBE is the local probe, for the client and the server
// outside the cluster.
const clusterEnv = "WINCONFORM_UNDERLAY_CLUSTER"

// faults are the rules the test removes, one at a time, and the cells each
// must fail: no other cell may fail.
var faults = []struct {
	purpose string
	why     string
	// fails says whether a cell must fail; may, whether it may (what the
	// kernel does there is not the harness's to say).
	fails, may func(src netmatrix.Peer, t netmatrix.Target) bool
}{
	{
		purpose: "vxlan-out",
		why: "VXLAN from the kind nodes to the remote node is dropped: every path that crosses the underlay through the tunnel fails, " +
			"and only the node-level paths that do not use it pass (a node's own address from another node, a NodePort of a kind node from the remote node)",
		fails: throughTheTunnel,
	},
	{
		purpose: "keep-addresses",
		why: "the kind host masquerades the kind network's packets to the remote node: the remote node sees the kind host's address calling " +
			"where a kind node's own should be (the node-ip cells into it must fail), and its VXLAN arrives from the kind host's address; " +
			"where the rewrite breaks the outer UDP checksums of offloaded inner TCP and UDP (here: the remote kernel counts InCsumErrors, " +
			"flannel-io/flannel#1279), the tunnel's TCP and UDP paths fail too, its ICMP not: those cells may fail, and no other",
		fails: func(src netmatrix.Peer, t netmatrix.Target) bool {
			return t.Mode == netmatrix.NodeIP && t.Underlay && !src.Underlay
		},
		may: throughTheTunnel,
	},
}

// throughTheTunnel says whether a cell's path crosses the underlay through
// flannel's VXLAN tunnel: every crossing path but those between nodes' own
// addresses (a node's address from another node; a kind node's NodePort
// from the remote node, which the kind node answers from the kind
// network).
func throughTheTunnel(src netmatrix.Peer, t netmatrix.Target) bool {
	if !netmatrix.CrossesUnderlay(src, t) || src.Kind == netmatrix.Node && t.Mode == netmatrix.NodeIP {
		return false
	}
	return !(src.Kind == netmatrix.Node && src.Underlay && t.Mode == netmatrix.NodePort && !t.ViaUnderlay)
}

func TestRemovedRuleFailsExactlyItsCells(t *testing.T) {
	name := os.Getenv(clusterEnv)
	if name == "" {
		t.Skipf("set %s (and KUBECONFIG) to a kind cluster made with remoteNodes, as make test does", clusterEnv)
	}
	kubeconfig := os.Getenv("KUBECONFIG")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := images.FromEnv(); err != nil {
		t.Fatal(err)
	}
	cfg := kind.DefaultConfig()
	cfg.Name = name
	c, err := kind.New(ctx, cfg, kind.Options{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := c.UnderlayPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Machines) == 0 {
		t.Fatalf("cluster %s has no remote node: make it with remoteNodes: 1", name)
	}
	host, err := underlay.NewHost()
	if err != nil {
		t.Fatal(err)
	}
	// Whatever happens, the underlay is whole again afterwards.
	t.Cleanup(func() {
		if _, err := host.Apply(plan); err != nil {
			t.Errorf("putting the underlay back: %v", err)
		}
	})
	sides, cp, err := c.UnderlaySides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	env := underlay.CheckEnv{Plan: plan, Host: host, Sides: sides, Kind: cp, Pods: &underlaypods.Prober{Config: restCfg, Clientset: cs}}
	if err := underlay.Check(ctx, env).Err(); err != nil {
		t.Fatalf("the underlay fails its check before any fault: %v", err)
	}
	fs, err := facts.Discover(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	log := &testLog{t: t}
	dep, err := netmatrix.Deploy(ctx, netmatrix.Env{Config: restCfg, Clientset: cs, Facts: fs, Kubeconfig: kubeconfig,
		ClusterDomain: "cluster.local", ProbeBinary: os.Getenv("WINCONFORM_PROBE"), Log: log,
		Labels: map[string]string{"winconform.io/test": "underlay-fault"}})
	t.Cleanup(func() { _ = dep.Cleanup(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	machine := plan.Machines[0].Name
	for _, f := range faults {
		t.Run("without "+f.purpose, func(t *testing.T) {
			var rule underlay.Rule
			for _, r := range plan.RulesOf(machine) {
				if r.Purpose == f.purpose {
					rule = r
				}
			}
			if rule.Purpose == "" {
				t.Fatalf("the plan has no rule %s for %s", f.purpose, machine)
			}
			cmd := rule.Command(plan.Network.Cluster, "-D")
			if err := host.Tables.Delete(rule.Table, rule.Chain, rule.Spec(plan.Network.Cluster)...); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			t.Logf("fault: %s (%s)", cmd, f.why)
			// The flows the kernel already tracks keep the NAT decision of
			// their first packet: forgotten, each path decides anew.
			if err := host.ForgetMasqueraded(plan, machine); err != nil {
				t.Fatal(err)
			}

			// The check names the rule and the command that puts it back.
			rep := underlay.Check(ctx, underlay.CheckEnv{Plan: plan, Host: host, Sides: sides, Kind: cp})
			t.Logf("the check without %s:\n%s", f.purpose, rep)
			g, failed := rep.Machines[0].Failed()
			fix := rule.Command(plan.Network.Cluster, "-I")
			if !failed || g.Name != underlay.RungHost || !strings.Contains(g.Problem, "rule "+f.purpose+" ") || g.Fix != fix {
				t.Errorf("the check does not name the missing rule: failed rung %+v; want rung %q naming %s, fix %q", g, underlay.RungHost, f.purpose, fix)
			}

			// The matrix fails exactly the cells that need the rule.
			dep.Matrix.Run(ctx, log)
			wrong := compare(dep.Matrix, f.fails, f.may)
			for _, w := range wrong {
				t.Error(w)
			}
			failing, mayFail := 0, 0
			for _, cell := range dep.Matrix.Cells() {
				src, tg := dep.Matrix.Peers(cell)
				if !cell.Verdict.Fails(false) {
					continue
				}
				failing++
				if !f.fails(src, tg) {
					mayFail++
				}
			}
			if failing == 0 {
				t.Errorf("no cell failed without %s", f.purpose)
			}
			t.Logf("without %s: %d of %d cells failed (%d that must, %d that may), no cell that does not cross the underlay", f.purpose, failing, len(dep.Matrix.Cells()), failing-mayFail, mayFail)

			// Put back: the check and every cell pass again.
			changes, err := host.Apply(plan)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != 1 || changes[0].Op != "added" || !strings.Contains(changes[0].Rule, rule.Mark(plan.Network.Cluster)) {
				t.Errorf("putting the underlay back changed %v, want the one rule %s added", changes, f.purpose)
			}
			if err := underlay.Check(ctx, env).Err(); err != nil {
				t.Errorf("with %s back, the check still fails: %v", f.purpose, err)
			}
			dep.Matrix.Run(ctx, log)
			for _, w := range compare(dep.Matrix, nil, nil) {
				t.Errorf("with %s back: %s", f.purpose, w)
			}
		})
	}
}

// compare lists the cells that did not fail where fails says they must,
// and those that failed where neither fails nor may allows it (nil: none).
func compare(m *netmatrix.Matrix, fails, may func(netmatrix.Peer, netmatrix.Target) bool) []string {
	var out []string
	for _, cell := range m.Cells() {
		src, tg := m.Peers(cell)
		must := fails != nil && fails(src, tg)
		allowed := must || may != nil && may(src, tg)
		got := cell.Verdict.Fails(false)
		switch {
		case must && !got:
			out = append(out, fmt.Sprintf("cell should fail but did not: %s", cell.Describe()))
		case !allowed && got:
			out = append(out, fmt.Sprintf("cell should pass but failed: %s", cell.Describe()))
		}
	}
	return out
}

// testLog writes the matrix's table into the test's log.
type testLog struct{ t *testing.T }

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
