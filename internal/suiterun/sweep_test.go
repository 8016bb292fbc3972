package suiterun

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/winconform/winconform/internal/runmark"
)

var now = time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)

// meta is an object of run id made at created (and its start annotation).
func objMeta(name, id string, created time.Time) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}
	runmark.Run{ID: id, Started: created.Add(-time.Minute)}.Mark(&m)
	return m
}

func lease(id string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	r := metav1.NewMicroTime(renewed)
	l := &coordinationv1.Lease{ObjectMeta: objMeta(id, id, renewed.Add(-time.Hour)),
		Spec: coordinationv1.LeaseSpec{RenewTime: &r, LeaseDurationSeconds: &seconds}}
	l.Namespace = runmark.LeaseNamespace
	return l
}

func namespace(name, id string, created time.Time) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: objMeta(name, id, created)}
	ns.Labels[runmark.E2ERunLabel] = id
	return ns
}

// realNode is a node of the cluster that runs dead and live changed.
func realNode(t *testing.T) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", Labels: map[string]string{"kubernetes.io/os": "windows"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node.kubernetes.io/admin", Effect: corev1.TaintEffectNoExecute}}}}
	dead := runmark.Run{ID: "wc-20261125t170000-0000dead", Started: now.Add(-time.Hour)}
	if err := dead.ChangeNode(n, []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}, map[string]string{"winconform.io/probe": "on"}); err != nil {
		t.Fatal(err)
	}
	live := runmark.Run{ID: "wc-20261125t175900-00001ive", Started: now.Add(-time.Minute)}
	if err := live.ChangeNode(n, []corev1.Taint{{Key: "winconform.io/drain", Effect: corev1.TaintEffectNoSchedule}}, nil); err != nil {
		t.Fatal(err)
	}
	return n
}

const (
	dead      = "wc-20261125t170000-0000dead"
	live      = "wc-20261125t175900-00001ive"
	oldNoBeat = "wc-20261125t160000-000001d0"
	newNoBeat = "wc-20261125t175930-0000young"
	self      = "wc-20261125t175800-00005e1f"
	patient   = "wc-20261125t174000-0pa71e17"
)

// cluster is a cluster where dead runs, live runs and this run left things.
func cluster(t *testing.T) *fake.Clientset {
	upstream := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-upstream-1", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
		Labels: map[string]string{runmark.E2ERunLabel: "0b7e4d6a-7d1c-4c55-9a3f-3f1c5c1a0a77"}}}
	// A namespace of a run of an older harness: the e2e label only.
	older := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage-329", CreationTimestamp: metav1.NewTime(now.Add(-3 * time.Hour)),
		Labels: map[string]string{runmark.E2ERunLabel: oldNoBeat}}}
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runmark.LeaseNamespace, Labels: map[string]string{runmark.PartOfLabel: runmark.PartOf}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", CreationTimestamp: metav1.NewTime(now.Add(-48 * time.Hour))}},
		upstream, older,
		// dead: its heartbeat stopped 5 minutes ago.
		lease(dead, now.Add(-5*time.Minute), 120),
		namespace("storage-4821", dead, now.Add(-50*time.Minute)),
		&corev1.PersistentVolume{ObjectMeta: objMeta("storage-4821-windows-pv-claim", dead, now.Add(-49*time.Minute)),
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain}},
		&rbacv1.ClusterRole{ObjectMeta: objMeta("winconform-gmsa-identity-1", dead, now.Add(-48*time.Minute))},
		&nodev1.RuntimeClass{ObjectMeta: objMeta("winconform-hyperv-limitations-2", dead, now.Add(-47*time.Minute))},
		&corev1.Node{ObjectMeta: objMeta("wc-sched-abc-17763", dead, now.Add(-46*time.Minute))},
		// live: renewed 10 seconds ago.
		lease(live, now.Add(-10*time.Second), 120),
		namespace("storage-77", live, now.Add(-40*time.Second)),
		&corev1.PersistentVolume{ObjectMeta: objMeta("storage-77-windows-pv-claim", live, now.Add(-30*time.Second))},
		// A run that said it may be silent 10 minutes, silent 5: alive.
		lease(patient, now.Add(-5*time.Minute), 600),
		&rbacv1.ClusterRole{ObjectMeta: objMeta("winconform-gmsa-patient", patient, now.Add(-20*time.Minute))},
		// No heartbeat, newest object 30 seconds old: alive.
		&nodev1.RuntimeClass{ObjectMeta: objMeta("winconform-young", newNoBeat, now.Add(-30*time.Second))},
		// This run: never swept, though its heartbeat is old.
		lease(self, now.Add(-time.Hour), 120),
		namespace("networking-5", self, now.Add(-time.Hour)),
		realNode(t),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kind-worker"}},
	}
	return fake.NewSimpleClientset(objs...)
}

// state is what the cluster holds of what runs can leave.
func state(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	out, err := Footprint(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSweepDeadTakesOnlyDeadRuns(t *testing.T) {
	cs := cluster(t)
	before := state(t, cs)
	var log strings.Builder
	rep, err := SweepDead(context.Background(), cs, SweepOptions{OlderThan: 2 * time.Minute, Except: self, Now: now, Wait: 5 * time.Second, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(runs []RunSwept) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got, want := ids(rep.Dead), []string{oldNoBeat, dead}; !reflect.DeepEqual(got, want) {
		t.Errorf("dead runs %v, want %v", got, want)
	}
	if got, want := ids(rep.Live), []string{patient, live, newNoBeat}; !reflect.DeepEqual(got, want) {
		t.Errorf("live runs %v, want %v", got, want)
	}
	var removed []string
	for _, l := range rep.Dead[1].Left {
		if !l.Deleted {
			t.Errorf("%s not deleted", l)
		}
		removed = append(removed, l.String())
	}
	want := []string{"clusterrole winconform-gmsa-identity-1", "namespace storage-4821",
		"node label win-1 winconform.io/probe=on", "node taint win-1 os=windows:NoSchedule", "node wc-sched-abc-17763",
		"persistentvolume storage-4821-windows-pv-claim", "runtimeclass winconform-hyperv-limitations-2"}
	if !reflect.DeepEqual(removed, want) {
		t.Errorf("removed of the dead run:\n%q\nwant\n%q", removed, want)
	}
	if got := rep.Dead[0].Left; len(got) != 1 || got[0].String() != "namespace storage-329" {
		t.Errorf("the older harness's dead run: %v", got)
	}
	if rep.Removed() != 8 {
		t.Errorf("Removed() = %d, want 8", rep.Removed())
	}
	after := state(t, cs)
	var gone []string
	for _, b := range before {
		if !slices.Contains(after, b) {
			gone = append(gone, b)
		}
	}
	wantGone := []string{"clusterrole winconform-gmsa-identity-1", "heartbeat " + dead, "namespace storage-329", "namespace storage-4821",
		"node wc-sched-abc-17763", "node-change win-1 " + dead, "node-label wc-sched-abc-17763 " + runmark.RunLabel + "=" + dead,
		"node-label win-1 winconform.io/probe=on", "node-taint win-1 os=windows:NoSchedule",
		"persistentvolume storage-4821-windows-pv-claim", "runtimeclass winconform-hyperv-limitations-2"}
	if !reflect.DeepEqual(gone, wantGone) {
		t.Errorf("gone from the cluster:\n%q\nwant\n%q", gone, wantGone)
	}
	if len(after) != len(before)-len(gone) {
		t.Errorf("the sweep added to the cluster: %q", after)
	}
	for _, l := range []string{"run " + dead + ": dead (heartbeat stopped 5m0s ago, at 2026-11-25T17:55:00Z); removed clusterrole",
		"run " + oldNoBeat + ": dead (no heartbeat; its newest object is 3h0m0s old); removed namespace storage-329",
		"run " + live + ": alive (heartbeat 10s ago); left alone",
		"run " + newNoBeat + ": alive (no heartbeat, but its newest object is 30s old, younger than 2m0s); left alone"} {
		if !strings.Contains(log.String(), l) {
			t.Errorf("the log lacks %q:\n%s", l, log.String())
		}
	}
	// A second sweep finds nothing more of the dead.
	again, err := SweepDead(context.Background(), cs, SweepOptions{OlderThan: 2 * time.Minute, Except: self, Now: now, Wait: time.Second})
	if err != nil || len(again.Dead) != 0 {
		t.Errorf("a second sweep: %+v, %v", again.Dead, err)
	}
}

func TestSweepDeadDryRunRemovesNothing(t *testing.T) {
	cs := cluster(t)
	before := state(t, cs)
	rep, err := SweepDead(context.Background(), cs, SweepOptions{OlderThan: 2 * time.Minute, Except: self, Now: now, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if after := state(t, cs); !reflect.DeepEqual(before, after) {
		t.Errorf("a dry run changed the cluster:\nbefore %q\nafter  %q", before, after)
	}
	if rep.Removed() != 8 || !rep.DryRun {
		t.Errorf("a dry run lists %d things (want the 8 a sweep removes): %+v", rep.Removed(), rep.Dead)
	}
	for _, d := range rep.Dead {
		for _, l := range d.Left {
			if l.Deleted {
				t.Errorf("a dry run says it deleted %s", l)
			}
		}
	}
	if lines := strings.Join(rep.Lines(), "\n"); !strings.Contains(lines, "would remove clusterrole winconform-gmsa-identity-1") {
		t.Errorf("a dry run's lines: %s", lines)
	}
}

// The rule's one knob: a longer --older-than keeps a silent run.
func TestSweepDeadOlderThan(t *testing.T) {
	cs := cluster(t)
	rep, err := SweepDead(context.Background(), cs, SweepOptions{OlderThan: 6 * time.Hour, Except: self, Now: now})
	if err != nil || len(rep.Dead) != 0 {
		t.Errorf("with --older-than 6h nothing is dead: %+v, %v", rep.Dead, err)
	}
	if _, err := SweepDead(context.Background(), cs, SweepOptions{OlderThan: -time.Minute}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("a negative --older-than: %v", err)
	}
}

// A run's own sweep takes back its node changes and its heartbeat too.
func TestSweepOwnRunTakesNodeChangesAndHeartbeat(t *testing.T) {
	cs := cluster(t)
	left, err := Sweep(context.Background(), cs, dead, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 7 {
		t.Errorf("left: %v", left)
	}
	if _, err := cs.CoordinationV1().Leases(runmark.LeaseNamespace).Get(context.Background(), dead, metav1.GetOptions{}); err == nil {
		t.Error("the run's heartbeat is still there")
	}
	n, _ := cs.CoreV1().Nodes().Get(context.Background(), "win-1", metav1.GetOptions{})
	if _, ok := runmark.NodeChanges(n)[live]; !ok || len(n.Spec.Taints) != 2 {
		t.Errorf("another run's change to the node went too: %v %v", n.Spec.Taints, n.Annotations)
	}
}
