package kwokspec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
)

func node(name, build string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{facts.LabelWindowsBuild: build}}}
}

func pod(node string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
}

// The level of a spec's evidence comes from where its pods went, never
// from the caller: SCH-03 and SCH-08 watch the scheduler place Windows pods
// on Linux nodes, and recorded windows-node on a hybrid cluster because
// their caller passed it (issue 28). A pod shows windows-node only where a
// real Windows node's kubelet ran it, on that node and of its build;
// placed elsewhere, left Pending, or on a simulated node, it shows the
// scheduler's decision.
func TestLevelComesFromWhereThePodsRan(t *testing.T) {
	real := &Windows{Nodes: []corev1.Node{node("win-a", "10.0.20348"), node("win-b", "10.0.17763")}}
	// SCH-03 and SCH-08: the Windows pods went to a Linux node.
	got := real.observed("", []*corev1.Pod{pod("lin-1", corev1.PodRunning), pod("lin-2", corev1.PodFailed)})
	if len(got) != 1 || got[0].Level != claims.Scheduler || !slices.Equal(got[0].Nodes, []string{"lin-1", "lin-2"}) {
		t.Errorf("pods placed on Linux nodes = %+v, want one scheduler record naming the Linux nodes", got)
	}
	// Pods a real Windows kubelet ran: one record per build, naming the nodes.
	got = real.observed("", []*corev1.Pod{pod("win-a", corev1.PodRunning), pod("win-b", corev1.PodSucceeded), pod("win-a", corev1.PodRunning)})
	if len(got) != 2 || got[0].Level != claims.WindowsNode || got[0].Build != "10.0.20348" || !slices.Equal(got[0].Nodes, []string{"win-a"}) ||
		got[1].Build != "10.0.17763" || !slices.Equal(got[1].Nodes, []string{"win-b"}) {
		t.Errorf("pods run on real Windows nodes of two builds = %+v, want one windows-node record per build", got)
	}
	// Bound to a Windows node that did not run it, and Pending: the scheduler's.
	got = real.observed("", []*corev1.Pod{pod("win-a", corev1.PodPending), pod("", corev1.PodPending)})
	if len(got) != 1 || got[0].Level != claims.Scheduler {
		t.Errorf("a pod bound but not run, and one Pending = %+v, want the scheduler's record alone", got)
	}
	// A partial look is partial where it was on Windows.
	for _, r := range real.observed("enforcement", []*corev1.Pod{pod("win-a", corev1.PodRunning)}) {
		if r.Partial != "enforcement" {
			t.Errorf("a partial look recorded %+v", r)
		}
	}
	// On simulated nodes, whatever kwok says the pods did: the scheduler's.
	sim := &Windows{Simulated: true, Nodes: []corev1.Node{node("kwok-a", "10.0.20348")}}
	got = sim.observed("", []*corev1.Pod{pod("kwok-a", corev1.PodRunning)})
	if len(got) != 1 || got[0].Level != claims.Scheduler || got[0].Build != "" {
		t.Errorf("pods on simulated nodes = %+v, want one scheduler record without build", got)
	}
}

// A property of the same rule, over random placements: a record is on a
// Windows node only when a pod ran there, and names only such nodes.
func TestNoRecordAboveWhatThePodsSaw(t *testing.T) {
	rnd := rand.New(rand.NewSource(28))
	nodes := []string{"win-a", "win-b", "lin-1", "kwok-x", ""}
	phases := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}
	for i := 0; i < 2000; i++ {
		w := &Windows{Nodes: []corev1.Node{node("win-a", "10.0.20348"), node("win-b", "10.0.20348")}, Simulated: rnd.Intn(4) == 0}
		var pods []*corev1.Pod
		ran := map[string]bool{}
		for range rnd.Intn(5) {
			p := pod(nodes[rnd.Intn(len(nodes))], phases[rnd.Intn(len(phases))])
			pods = append(pods, p)
			if !w.Simulated && w.Has(p.Spec.NodeName) && (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded) {
				ran[p.Spec.NodeName] = true
			}
		}
		for _, r := range w.observed("", pods) {
			if !r.Level.OnWindows() {
				continue
			}
			for _, n := range r.Nodes {
				if !ran[n] {
					t.Fatalf("case %d: %s record on %s, where no pod ran (pods %s)", i, r.Level, n, describe(pods))
				}
			}
			if len(r.Nodes) == 0 {
				t.Fatalf("case %d: a %s record naming no node", i, r.Level)
			}
		}
	}
}

func describe(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, fmt.Sprintf("%s:%s", p.Spec.NodeName, p.Status.Phase))
	}
	return fmt.Sprint(out)
}
