package runmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/winconform/winconform/internal/runid"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// DefaultDeadAfter is how long a run's heartbeat may be silent before the
// run counts as dead (its Lease's leaseDurationSeconds).
const DefaultDeadAfter = 2 * time.Minute

// HeartbeatOptions tune Beat.
type HeartbeatOptions struct {
	// DeadAfter is the Lease's duration: silent this long, the run is dead
	// (DefaultDeadAfter).
	DeadAfter time.Duration
	// Interval is the time between renewals (a quarter of DeadAfter, at
	// most 15 seconds).
	Interval time.Duration
	// Holder names who renews it (default: host/pid).
	Holder string
	// Annotations go on the Lease beside the run's start (where its
	// report goes, say).
	Annotations map[string]string
	// Log gets a line when renewing fails, and when it works again.
	Log io.Writer
}

// Heartbeat is a run's record in the cluster while it runs: a Lease in
// LeaseNamespace named by the run's ID, whose renewTime is renewed every
// Interval, so that a later run can tell it alive (Alive).
type Heartbeat struct {
	cancel context.CancelFunc
	done   chan struct{}
	cs     kubernetes.Interface
	id     string
}

// Beat records run r in the cluster and keeps renewing its Lease in the
// background until Stop, also after ctx is cancelled (an interrupted run
// still cleans up, and is alive while it does). The first write must
// succeed.
func Beat(ctx context.Context, cs kubernetes.Interface, r Run, o HeartbeatOptions) (*Heartbeat, error) {
	if err := runid.Check(r.ID); err != nil {
		return nil, err
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = DefaultDeadAfter
	}
	if o.Interval <= 0 {
		o.Interval = min(15*time.Second, o.DeadAfter/4)
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := renew(ctx, cs, r, o); err != nil {
		return nil, fmt.Errorf("recording run %s in the cluster (Lease %s/%s): %w", r.ID, LeaseNamespace, r.ID, err)
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &Heartbeat{cancel: cancel, done: make(chan struct{}), cs: cs, id: r.ID}
	go func() {
		defer close(h.done)
		t := time.NewTicker(o.Interval)
		defer t.Stop()
		failing := false
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
			}
			err := renew(bg, cs, r, o)
			switch {
			case err != nil && bg.Err() == nil && !failing:
				failing = true
				fmt.Fprintf(o.Log, "winconform: the heartbeat of run %s failed (%v): silent for %s, the run counts as dead and its objects may be swept\n", r.ID, err, o.DeadAfter)
			case err == nil && failing:
				failing = false
				fmt.Fprintf(o.Log, "winconform: the heartbeat of run %s is renewed again\n", r.ID)
			}
		}
	}()
	return h, nil
}

// ClaimAnnotation names the invocation that claimed a run's Lease (a
// random token): a run's own processes renew it, another invocation of the
// run's ID is refused while it is alive.
const ClaimAnnotation = "winconform.io/claim"

// InUseError is a run ID whose heartbeat another invocation keeps alive.
type InUseError struct {
	ID, Holder string
	LastBeat   time.Time
	// ReportDir is where that run reports (its Lease's annotation).
	ReportDir string
}

func (e *InUseError) Error() string {
	where := ""
	if e.ReportDir != "" {
		where = ", reporting to " + e.ReportDir
	}
	return fmt.Sprintf("run %s is live: its heartbeat (Lease %s/%s) was renewed %s by %s%s; its namespaces and node changes carry that ID, and this run's cleanup would remove them: pick another --run-id, or wait until it ends",
		e.ID, LeaseNamespace, e.ID, e.LastBeat.UTC().Format(time.RFC3339), e.Holder, where)
}

// Claim records run r in the cluster and keeps it renewed, as Beat does,
// once it has made sure that no other live invocation has the run's ID:
// it makes the run's Lease, claimed with token; a Lease of that ID that
// exists, is alive and carries another claim is refused (*InUseError); a
// dead one is taken over (its run's objects are then this run's to sweep).
// Two invocations that claim at once: one makes the Lease, the other finds
// it alive.
func Claim(ctx context.Context, cs kubernetes.Interface, r Run, token string, o HeartbeatOptions) (*Heartbeat, error) {
	if err := runid.Check(r.ID); err != nil {
		return nil, err
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = DefaultDeadAfter
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	anns := map[string]string{ClaimAnnotation: token}
	for k, v := range o.Annotations {
		anns[k] = v
	}
	o.Annotations = anns
	if err := claim(ctx, cs, r, token, o); err != nil {
		return nil, err
	}
	return Beat(ctx, cs, r, o)
}

// claim makes the run's Lease claimed with token, or takes over a dead one.
func claim(ctx context.Context, cs kubernetes.Interface, r Run, token string, o HeartbeatOptions) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	leases := cs.CoordinationV1().Leases(LeaseNamespace)
	for attempt := 0; attempt < 3; attempt++ {
		l, err := leases.Get(ctx, r.ID, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			err := create(ctx, cs, r, o)
			if err == nil {
				return nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return err
			}
			continue // another made it meanwhile: read whose it is
		case err != nil:
			return fmt.Errorf("reading run %s's heartbeat (Lease %s/%s): %w", r.ID, LeaseNamespace, r.ID, err)
		}
		switch {
		case l.Annotations[ClaimAnnotation] == token:
			return nil
		case Alive(l, o.DeadAfter, time.Now()):
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return &InUseError{ID: r.ID, Holder: holder, LastBeat: LastBeat(l), ReportDir: l.Annotations["winconform.io/report-dir"]}
		}
		// Dead: take it over, unless another took it first (the update
		// names the version read).
		now := metav1.NewMicroTime(time.Now())
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		for k, v := range o.Annotations {
			l.Annotations[k] = v
		}
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime = &o.Holder, &now, &metav1.MicroTime{Time: r.Started}
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("taking over the dead run %s's heartbeat: %w", r.ID, err)
		}
	}
	return fmt.Errorf("run %s's heartbeat (Lease %s/%s) changed hands while it was claimed: another invocation of the run's ID is starting; pick another --run-id", r.ID, LeaseNamespace, r.ID)
}

// Stop stops renewing (the Lease stays until the run's sweep removes it).
func (h *Heartbeat) Stop() {
	if h == nil {
		return
	}
	h.cancel()
	<-h.done
}

// End stops renewing and removes the Lease: the run is over and left
// nothing (a run that may have left something leaves its Lease to its
// sweep instead).
func (h *Heartbeat) End(ctx context.Context) error {
	if h == nil {
		return nil
	}
	h.Stop()
	err := h.cs.CoordinationV1().Leases(LeaseNamespace).Delete(ctx, h.id, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// renew sets the Lease's renewTime to now, making it (and its namespace)
// when it is not there.
func renew(ctx context.Context, cs kubernetes.Interface, r Run, o HeartbeatOptions) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	now := metav1.NewMicroTime(time.Now())
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"renewTime": now, "holderIdentity": o.Holder}})
	if err != nil {
		return err
	}
	leases := cs.CoordinationV1().Leases(LeaseNamespace)
	_, err = leases.Patch(ctx, r.ID, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	err = create(ctx, cs, r, o)
	if apierrors.IsAlreadyExists(err) {
		_, err = leases.Patch(ctx, r.ID, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	return err
}

// create makes run r's Lease (and its namespace when it is not there),
// renewed now.
func create(ctx context.Context, cs kubernetes.Interface, r Run, o HeartbeatOptions) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: LeaseNamespace, Labels: map[string]string{PartOfLabel: PartOf}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	now := metav1.NewMicroTime(time.Now())
	secs := int32((o.DeadAfter + time.Second - 1) / time.Second)
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: r.ID, Namespace: LeaseNamespace, Annotations: o.Annotations},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &o.Holder, LeaseDurationSeconds: &secs,
			AcquireTime: &metav1.MicroTime{Time: r.Started}, RenewTime: &now},
	}
	r.Mark(l)
	_, err := cs.CoordinationV1().Leases(LeaseNamespace).Create(ctx, l, metav1.CreateOptions{})
	return err
}

// LastBeat is the last sign of life of l's run: its renewTime, else its
// acquireTime, else when it was made.
func LastBeat(l *coordinationv1.Lease) time.Time {
	switch {
	case l.Spec.RenewTime != nil:
		return l.Spec.RenewTime.Time
	case l.Spec.AcquireTime != nil:
		return l.Spec.AcquireTime.Time
	}
	return l.CreationTimestamp.Time
}

// Alive says whether l's run is alive at now: its last beat is no older
// than olderThan, nor than the Lease's own duration, whichever is longer
// (a run is never taken for dead sooner than it said it could be silent).
func Alive(l *coordinationv1.Lease, olderThan time.Duration, now time.Time) bool {
	limit := olderThan
	if d := l.Spec.LeaseDurationSeconds; d != nil && time.Duration(*d)*time.Second > limit {
		limit = time.Duration(*d) * time.Second
	}
	return now.Sub(LastBeat(l)) <= limit
}
