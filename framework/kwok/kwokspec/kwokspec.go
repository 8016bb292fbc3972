// Package kwokspec gives an Ordered spec container the Windows nodes its
// scheduler- and API-level specs run on: the cluster's real Windows nodes
// when it has them, else nodes that kwok simulates for the container's
// lifetime (started in BeforeAll, stopped by DeferCleanup, also when a spec
// fails or the run is interrupted).
//
// Simulated nodes carry the documented taint os=windows:NoSchedule and the
// simulator's isolation taint (framework/kwok), so that only pods built with
// Tolerate (this container's) land on them; other suites running on the same
// cluster at the same time never do.
package kwokspec

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/kwok"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/skips"
)

// DefaultBuilds are the builds of the simulated nodes: Windows Server 2019
// and 2022, so that specs can tell nodes apart by build.
var DefaultBuilds = []string{"10.0.17763", "10.0.20348"}

// StopTimeout bounds the simulator's cleanup.
const StopTimeout = 3 * time.Minute

// Windows is the set of Windows nodes a container's specs use.
type Windows struct {
	// Nodes are the Windows nodes, as the API server had them at setup.
	Nodes []corev1.Node
	// Simulated says the nodes are kwok's.
	Simulated bool
	// Sim is the simulator (nil for real nodes).
	Sim *kwok.Sim
	// Requested maps each simulated node to the build the harness gave it.
	Requested map[string]string

	skip   *skips.Reason
	detail string
	// notReady is set when the cluster has real Windows nodes, none Ready.
	notReady string
}

// Setup finds the Windows nodes, or simulates one node per build (at least
// one; DefaultBuilds when none is given) with kwok (--kwok-binary), whose
// simulator prefix names: each container's Setup in a run needs its own
// prefix, for its simulator's taint and nodes are its alone (kwok refuses a
// second of the same name). Call it from BeforeAll. When neither is
// possible it returns an empty set whose Require skips with the reason.
func Setup(ctx context.Context, prefix string, builds ...string) *Windows {
	cs, err := framework.LoadClientset()
	framework.ExpectNoError(err, "connecting to the cluster")
	fs, err := facts.Get(ctx, cs)
	framework.ExpectNoError(err, "discovering the cluster's facts")
	// Real nodes first: a cluster with real Windows nodes is never given
	// simulated ones, also when its real ones are not Ready.
	if real := fs.Select(facts.Query{OS: "windows", Real: true}); len(real) > 0 {
		w := &Windows{}
		var notReady []string
		for _, n := range real {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			framework.ExpectNoError(err, "reading Windows node %s", n.Name)
			fn := facts.FromNode(node)
			if !fn.Ready {
				notReady = append(notReady, fmt.Sprintf("%s (%s)", n.Name, fn.Condition))
				continue
			}
			w.Nodes = append(w.Nodes, *node)
		}
		if len(w.Nodes) == 0 {
			w.notReady = fmt.Sprintf("the cluster's Windows nodes are not Ready: %s", strings.Join(notReady, "; "))
		}
		framework.Logf("Windows nodes: %v (real); not Ready: %v", w.Names(), notReady)
		return w
	}
	if e2e.Options.KwokBinary == "" {
		return &Windows{skip: &skips.NoWindowsNode, detail: "and no --kwok-binary was given to simulate one"}
	}
	if len(builds) == 0 {
		builds = DefaultBuilds
	}
	sim, err := kwok.Start(ctx, kwok.Options{RunID: e2e.Options.RunID, Name: prefix, Binary: e2e.Options.KwokBinary, Kubeconfig: framework.TestContext.KubeConfig, Client: cs, Labels: e2e.RunLabels(), Annotations: e2e.RunAnnotations()})
	framework.ExpectNoError(err, "starting kwok to simulate Windows nodes")
	ginkgo.DeferCleanup(func(ctx context.Context) error {
		framework.Logf("stopping kwok (simulator %s) and deleting its nodes %v", sim.ID(), sim.Nodes())
		return sim.Stop(ctx)
	}, ginkgo.NodeTimeout(StopTimeout))
	w := &Windows{Simulated: true, Sim: sim, Requested: map[string]string{}}
	for _, b := range builds {
		n, err := sim.AddWindowsNode(ctx, b, ospod.WindowsTaint)
		framework.ExpectNoError(err, "simulating Windows node %s (build %s)", sim.NodeName(b), b)
		w.Nodes = append(w.Nodes, *n)
		w.Requested[n.Name] = b
	}
	framework.Logf("Windows nodes: %v, simulated by kwok (simulator %s, pods from %s, log %s)", w.Names(), sim.ID(), kwok.DefaultCIDR, sim.LogPath())
	return w
}

// Require skips the spec when there are no Windows nodes and fails it when
// the cluster's real ones are not Ready. It records no evidence: the spec
// records what it observed (Observe, ObserveNodes, ObserveControlPlane),
// and the level comes from that, never from the caller.
func (w *Windows) Require() {
	if w == nil {
		skips.Skip(skips.NoWindowsNode, "the Windows nodes were not set up")
	}
	if w.skip != nil {
		skips.Skip(*w.skip, w.detail)
	}
	if w.notReady != "" {
		framework.Failf("%s", w.notReady)
	}
}

// RequireReal is Require for a spec that needs real Windows nodes: it
// skips on simulated ones, what saying what needs a kubelet.
func (w *Windows) RequireReal(what string) {
	if w != nil && w.skip == nil && w.notReady == "" && w.Simulated {
		skips.Skip(skips.SimulatedOnly, fmt.Sprintf("%d simulated Windows node(s); %s", len(w.Nodes), what))
	}
	w.Require()
}

// Observe records what the spec saw happen to pods (as last read from the
// API server). A pod that a real Windows node's kubelet ran (Running or
// Succeeded) was observed on that node: windows-node, of the node's build.
// Every other pod, left Pending, placed on a Linux node or on a simulated
// one, or bound to a node that did not run it, shows only what the
// scheduler and the controllers decided: scheduler.
func (w *Windows) Observe(pods ...*corev1.Pod) {
	evidence.AddRecords(w.observed("", pods)...)
}

// ObservePartial is Observe for a spec that, on real Windows nodes, sees
// only part of its claim: why names the part it does not see (SCH-10's
// acceptance spec sees no enforcement, say). Its result there shows
// nothing; it supports the claim.
func (w *Windows) ObservePartial(why string, pods ...*corev1.Pod) {
	evidence.AddRecords(w.observed(why, pods)...)
}

// observed are the records of pods (Observe).
func (w *Windows) observed(partial string, pods []*corev1.Pod) []evidence.Record {
	var ran, placed []evidence.On
	others := 0
	for _, p := range pods {
		node := p.Spec.NodeName
		switch {
		case node == "":
			others++
		case !w.Simulated && w.Has(node) && (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded):
			if !slices.ContainsFunc(ran, func(o evidence.On) bool { return o.Name == node }) {
				ran = append(ran, evidence.On{Name: node, Build: w.Builds()[node]})
			}
		default:
			others++
			if !slices.ContainsFunc(placed, func(o evidence.On) bool { return o.Name == node }) {
				placed = append(placed, evidence.On{Name: node})
			}
		}
	}
	var out []evidence.Record
	if len(ran) > 0 {
		out = evidence.Records(claims.WindowsNode, "real Windows node(s) whose kubelet ran the spec's pods:", partial, ran)
	}
	if others > 0 || len(pods) == 0 {
		out = append(out, evidence.Records(claims.Scheduler, "the scheduler's placement of the spec's pods:", "", placed)...)
	}
	return out
}

// ObserveNodes records that the spec observed the Windows nodes named (all
// when none is) themselves: their kubelet-set labels, their kubelets'
// admission. On real nodes that is windows-node, of each node's build; on
// simulated ones, whose labels the harness set, scheduler.
func (w *Windows) ObserveNodes(names ...string) {
	var on []evidence.On
	for _, n := range w.on() {
		if len(names) == 0 || slices.Contains(names, n.Name) {
			on = append(on, n)
		}
	}
	if w.Simulated {
		evidence.AddRecords(evidence.Records(claims.Scheduler, "simulated Windows nodes (kwok):", "", on)...)
		return
	}
	evidence.AddRecords(evidence.Records(claims.WindowsNode, "real Windows node(s):", "", on)...)
}

// ObserveControlPlane records that the spec observed what the control
// plane (the scheduler, a controller) decided about the Windows nodes, and
// nothing a Windows kubelet did: scheduler, real nodes or simulated.
func (w *Windows) ObserveControlPlane(what string) {
	evidence.AddRecords(evidence.Records(claims.Scheduler, what+", about Windows nodes", "", w.on())...)
}

func (w *Windows) on() []evidence.On {
	out := make([]evidence.On, len(w.Nodes))
	for i, n := range w.Nodes {
		out[i] = evidence.On{Name: n.Name, Build: n.Labels[facts.LabelWindowsBuild]}
	}
	return out
}

// Mark records, when the nodes are simulated, that the spec ran on them
// and why that is enough for what it checks.
func (w *Windows) Mark(why string) {
	if w != nil && w.Simulated {
		e2e.MarkSimulated(why)
	}
}

// Names lists the nodes' names.
func (w *Windows) Names() []string {
	var out []string
	for _, n := range w.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// Has says whether name is one of the Windows nodes.
func (w *Windows) Has(name string) bool {
	for _, n := range w.Nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

// Builds maps each node to its node.kubernetes.io/windows-build label.
func (w *Windows) Builds() map[string]string {
	out := map[string]string{}
	for _, n := range w.Nodes {
		out[n.Name] = n.Labels[facts.LabelWindowsBuild]
	}
	return out
}

// DistinctBuilds lists the builds of the nodes, sorted.
func (w *Windows) DistinctBuilds() []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range w.Builds() {
		if b != "" && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}

// Tolerations are what a pod needs to land on the simulated nodes beyond
// the documented os=windows taint: the simulator's isolation taint (none
// for real nodes).
func (w *Windows) Tolerations() []corev1.Toleration {
	if w == nil || w.Sim == nil {
		return nil
	}
	return []corev1.Toleration{w.Sim.Toleration()}
}

// Tolerate is the ospod option that adds Tolerations.
func (w *Windows) Tolerate() ospod.Option {
	return func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, w.Tolerations()...) }
}

// Refresh reads the nodes again from the API server.
func (w *Windows) Refresh(ctx context.Context, cs kubernetes.Interface) {
	for i, n := range w.Nodes {
		got, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		framework.ExpectNoError(err, "reading Windows node %s", n.Name)
		w.Nodes[i] = *got
	}
}
