package runmark

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

var started = time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)

func TestMarkAndOf(t *testing.T) {
	r := Run{ID: "wc-261125180000-0a1b", Started: started}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "storage-1-windows-pv-claim", Labels: map[string]string{"app": "x"},
		CreationTimestamp: metav1.NewTime(started.Add(time.Minute))}}
	r.Mark(pv)
	if pv.Labels["app"] != "x" || pv.Labels[RunLabel] != r.ID || pv.Annotations[StartedAnnotation] != "2026-11-25T18:00:00Z" {
		t.Errorf("marked: %v %v", pv.Labels, pv.Annotations)
	}
	if id, created := Of(pv); id != r.ID || !created.Equal(started.Add(time.Minute)) {
		t.Errorf("Of: %s %v", id, created)
	}
	if !StartedOf(pv).Equal(started) {
		t.Errorf("StartedOf: %v", StartedOf(pv))
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{E2ERunLabel: "wc-1"}}}
	if id, _ := Of(ns); id != "wc-1" {
		t.Errorf("a namespace of the e2e framework's label only: %q", id)
	}
}

func TestNodeChangeIsRecordedAndUndone(t *testing.T) {
	admin := corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", Labels: map[string]string{"kubernetes.io/os": "windows"}}}
	a := Run{ID: "run-a", Started: started}
	b := Run{ID: "run-b", Started: started}
	if err := a.ChangeNode(n, []corev1.Taint{admin}, map[string]string{"winconform.io/probe": "on"}); err != nil {
		t.Fatal(err)
	}
	// b adds a taint the node has (a's): not b's, not recorded as b's.
	other := corev1.Taint{Key: "winconform.io/b", Effect: corev1.TaintEffectNoExecute}
	if err := b.ChangeNode(n, []corev1.Taint{admin, other}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.ChangeNode(n, nil, map[string]string{"kubernetes.io/os": "linux"}); err == nil || !strings.Contains(err.Error(), "already has the label kubernetes.io/os=windows") {
		t.Errorf("a label the node had was changed: %v", err)
	}
	changes := NodeChanges(n)
	if len(changes["run-b"].Taints) != 1 || changes["run-b"].Taints[0] != other || changes["run-a"].Labels["winconform.io/probe"] != "on" || !changes["run-a"].Started.Equal(started) {
		t.Errorf("records: %+v", changes)
	}
	if got := UndoNodeChange(n, "run-a"); !reflect.DeepEqual(got, []string{"label winconform.io/probe=on", "taint os=windows:NoSchedule"}) {
		t.Errorf("undone: %q", got)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0] != other || n.Labels["winconform.io/probe"] != "" || n.Labels["kubernetes.io/os"] != "windows" {
		t.Errorf("after run-a's undo: %v %v", n.Spec.Taints, n.Labels)
	}
	if _, ok := n.Annotations[NodeChangePrefix+"run-a"]; ok {
		t.Error("run-a's record stayed")
	}
	if got := UndoNodeChange(n, "run-b"); !reflect.DeepEqual(got, []string{"taint winconform.io/b:NoExecute"}) || n.Spec.Taints != nil || len(n.Annotations) != 0 {
		t.Errorf("run-b's undo: %q, %v %v", got, n.Spec.Taints, n.Annotations)
	}
	if UndoNodeChange(n, "run-c") != nil {
		t.Error("a run that changed nothing undid something")
	}
}

func TestBeatRenewsTheLease(t *testing.T) {
	cs := fake.NewSimpleClientset()
	r := Run{ID: "wc-261125180000-0a1b", Started: started}
	var log bytes.Buffer
	h, err := Beat(context.Background(), cs, r, HeartbeatOptions{DeadAfter: 40 * time.Millisecond, Interval: 10 * time.Millisecond, Holder: "test", Log: &log,
		Annotations: map[string]string{"winconform.io/report-dir": "/r"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	ctx := context.Background()
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, LeaseNamespace, metav1.GetOptions{}); err != nil || ns.Labels[PartOfLabel] != PartOf {
		t.Fatalf("the heartbeats' namespace: %v %v", ns, err)
	}
	l, err := cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != "test" || *l.Spec.LeaseDurationSeconds != 1 || l.Labels[RunLabel] != r.ID || !l.Spec.AcquireTime.Time.Equal(started) ||
		l.Annotations["winconform.io/report-dir"] != "/r" || !StartedOf(l).Equal(started) {
		t.Errorf("lease: %+v", l)
	}
	first := LastBeat(l)
	time.Sleep(60 * time.Millisecond)
	l, _ = cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{})
	if !LastBeat(l).After(first) {
		t.Errorf("not renewed: %v then %v", first, LastBeat(l))
	}
	if !Alive(l, 0, time.Now()) {
		t.Error("a lease just renewed is not alive")
	}
	// Deleted under it (a sweep that took it for dead): made again.
	if err := cs.CoordinationV1().Leases(LeaseNamespace).Delete(ctx, r.ID, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond)
	if _, err := cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{}); err != nil {
		t.Errorf("the heartbeat was not made again: %v", err)
	}
	h.Stop()
	l, _ = cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{})
	stopped := LastBeat(l)
	time.Sleep(30 * time.Millisecond)
	l, _ = cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{})
	if !LastBeat(l).Equal(stopped) {
		t.Error("renewed after Stop")
	}
	// End: the run is over, its Lease goes (and a second End is fine).
	if err := h.End(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{}); err == nil {
		t.Error("the Lease stayed after End")
	}
	if err := h.End(ctx); err != nil {
		t.Errorf("a second End: %v", err)
	}
	if _, err := Beat(context.Background(), cs, Run{ID: "Bad_ID"}, HeartbeatOptions{}); err == nil {
		t.Error("a bad run ID was recorded")
	}
}

func TestAlive(t *testing.T) {
	now := started.Add(time.Hour)
	secs := int32(120)
	renewed := metav1.NewMicroTime(now.Add(-3 * time.Minute))
	lease := leaseAt(renewed, &secs)
	if Alive(lease, time.Minute, now) {
		t.Error("silent 3m, duration 2m, --older-than 1m: alive")
	}
	if !Alive(lease, 5*time.Minute, now) {
		t.Error("silent 3m, --older-than 5m: dead")
	}
	long := int32(600)
	if !Alive(leaseAt(renewed, &long), time.Minute, now) {
		t.Error("silent 3m of the 10m it said it could be: dead")
	}
	never := leaseAt(metav1.MicroTime{}, nil)
	never.Spec.RenewTime = nil
	never.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	if Alive(never, time.Minute, now) || !LastBeat(never).Equal(now.Add(-time.Hour)) {
		t.Error("a lease never renewed, made an hour ago: alive")
	}
}

func leaseAt(renewed metav1.MicroTime, secs *int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &renewed, LeaseDurationSeconds: secs}}
}

// A run ID whose heartbeat another invocation keeps alive is refused: a
// second `winconform e2e --run-id` of a live run's ID would sweep that
// run's namespaces as its own. The run's own processes (the same claim)
// renew it; a dead run's heartbeat is taken over; of two invocations that
// claim at once, one wins.
func TestClaimRefusesALiveRunsID(t *testing.T) {
	ctx := context.Background()
	r := Run{ID: "wc-261125180000-0a1b", Started: started}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage-329"}}
	r.Mark(ns)
	cs := fake.NewSimpleClientset(ns)
	first, err := Claim(ctx, cs, r, "token-1", HeartbeatOptions{Holder: "winconform e2e ci/1", Annotations: map[string]string{"winconform.io/report-dir": "/r1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	_, err = Claim(ctx, cs, r, "token-2", HeartbeatOptions{Holder: "winconform e2e ci/2"})
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Holder != "winconform e2e ci/1" || !strings.Contains(err.Error(), "/r1") || !strings.Contains(err.Error(), "another --run-id") {
		t.Fatalf("a second invocation of a live run's ID: %v, want *InUseError naming the holder, its report and the fix", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "storage-329", metav1.GetOptions{}); err != nil {
		t.Errorf("the live run's namespace: %v", err)
	}
	again, err := Claim(ctx, cs, r, "token-1", HeartbeatOptions{Holder: "e2e.test ci/3"})
	if err != nil {
		t.Errorf("the same invocation's claim: %v", err)
	} else {
		again.Stop()
	}
	// Dead: its last beat older than its duration. Taken over.
	l, _ := cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{})
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	l.Spec.RenewTime = &old
	first.Stop()
	if _, err := cs.CoordinationV1().Leases(LeaseNamespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	taker, err := Claim(ctx, cs, r, "token-2", HeartbeatOptions{Holder: "winconform e2e ci/2"})
	if err != nil {
		t.Fatalf("a dead run's ID: %v", err)
	}
	defer taker.Stop()
	l, _ = cs.CoordinationV1().Leases(LeaseNamespace).Get(ctx, r.ID, metav1.GetOptions{})
	if l.Annotations[ClaimAnnotation] != "token-2" || *l.Spec.HolderIdentity != "winconform e2e ci/2" {
		t.Errorf("the dead run's Lease after the take-over: %v %s", l.Annotations, *l.Spec.HolderIdentity)
	}
	// Two at once, on a fresh ID: one claim wins.
	r2 := Run{ID: "wc-261125180000-0a1c", Started: started}
	errs := make(chan error, 2)
	for _, tok := range []string{"a", "b"} {
		go func() {
			h, err := Claim(ctx, cs, r2, tok, HeartbeatOptions{Holder: tok})
			if err == nil {
				defer h.Stop()
			}
			errs <- err
		}()
	}
	won := 0
	for range 2 {
		if err := <-errs; err == nil {
			won++
		} else if !errors.As(err, &inUse) {
			t.Errorf("the losing claim: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of two simultaneous claims won, want one", won)
	}
}
