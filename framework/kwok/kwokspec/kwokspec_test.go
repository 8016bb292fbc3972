package kwokspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
)

func node(name, build string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{facts.LabelWindowsBuild: build}}}
}

// On real Windows nodes a spec records the level it observed there, which
// its caller names (a spec that watched only the scheduler's decisions
// does not show a claim about the kubelet), one record per Windows build;
// a spec that saw part of its claim records that part as partial. On
// simulated nodes the result is the real control plane's (scheduler),
// whatever the caller asked.
func TestRecordsAtTheCallersLevelWithTheBuilds(t *testing.T) {
	real := &Windows{Nodes: []corev1.Node{node("win-a", "10.0.20348"), node("win-b", "10.0.17763")}}
	got := real.records(claims.Scheduler, "")
	if len(got) != 1 || got[0].Level != claims.Scheduler || got[0].Partial != "" {
		t.Errorf("records(scheduler) on real nodes = %+v, want one scheduler record", got)
	}
	got = real.records(claims.WindowsNode, "")
	if len(got) != 2 || got[0].Build != "10.0.20348" || got[1].Build != "10.0.17763" || got[0].Level != claims.WindowsNode {
		t.Errorf("records(windows-node) on real nodes of two builds = %+v, want one windows-node record per build", got)
	}
	got = real.records(claims.WindowsNode, "enforcement of the limits")
	for _, r := range got {
		if r.Partial != "enforcement of the limits" {
			t.Errorf("a partial look recorded %+v, want it partial", r)
		}
	}
	sim := &Windows{Simulated: true, Nodes: []corev1.Node{node("kwok-a", "10.0.20348")}}
	got = sim.records(claims.WindowsNode, "")
	if len(got) != 1 || got[0].Level != claims.Scheduler || got[0].Build != "" {
		t.Errorf("records on simulated nodes = %+v, want one scheduler record without build", got)
	}
}
