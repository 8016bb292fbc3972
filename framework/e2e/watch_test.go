package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/test/e2e/framework"
)

const ns = "watched"

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
}

func ready(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

// setStatus waits until pod name exists, then, after delay, replaces its
// status with what change makes of it; it returns when it did.
func setStatus(t *testing.T, cs kubernetes.Interface, name string, delay time.Duration, change func(*corev1.Pod) *corev1.Pod) <-chan time.Time {
	done := make(chan time.Time, 1)
	go func() {
		ctx := context.Background()
		for {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				time.Sleep(delay)
				if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, change(p), metav1.UpdateOptions{}); err != nil {
					t.Errorf("updating pod %s: %v", name, err)
				}
				done <- time.Now()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return done
}

// A pod that turns Ready is seen as soon as the API server reports it, not
// at the next tick of a polling period: the suite's framework polls every
// 2 s (its Poll timeout, which it makes Eventually's default), which added
// up to 2 s to each pod a spec started.
func TestTryStartSeesReadyWhenItHappens(t *testing.T) {
	gomega.SetDefaultEventuallyPollingInterval(2 * time.Second) // as framework.AfterReadingAllFlags does
	defer gomega.SetDefaultEventuallyPollingInterval(10 * time.Millisecond)
	cs := fake.NewClientset()
	f := &framework.Framework{ClientSet: cs, Namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}
	turned := setStatus(t, cs, "web", 300*time.Millisecond, ready)
	got, err := TryStart(context.Background(), f, pod("web"))
	seen := time.Now()
	if err != nil {
		t.Fatalf("TryStart: %v", err)
	}
	if ok, _ := PodReady(got); !ok {
		t.Errorf("TryStart returned pod %s, not Ready: %s", got.Name, PodState(got))
	}
	if lag := seen.Sub(<-turned); lag > 500*time.Millisecond {
		t.Errorf("TryStart saw the pod Ready %s after it turned Ready; want under 500ms", lag.Round(time.Millisecond))
	}
}

func TestAwaitPod(t *testing.T) {
	ctx := context.Background()

	t.Run("a condition that holds returns at once", func(t *testing.T) {
		cs := fake.NewClientset(ready(pod("up")))
		start := time.Now()
		got, err := AwaitPod(ctx, cs, ns, "up", time.Minute, PodReady)
		if err != nil || got == nil || got.Name != "up" {
			t.Fatalf("AwaitPod = %v, %v", got, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %s", d)
		}
	})

	t.Run("other pods' changes do not count", func(t *testing.T) {
		// The fake client ignores the name's field selector, as a
		// server that did not apply it would.
		cs := fake.NewClientset(ready(pod("other")), pod("mine"))
		got, err := AwaitPod(ctx, cs, ns, "mine", 300*time.Millisecond, PodReady)
		if err == nil {
			t.Fatalf("AwaitPod returned %s (%s) for another pod's readiness", got.Name, PodState(got))
		}
		if got == nil || got.Name != "mine" {
			t.Errorf("last seen = %v, want pod mine", got)
		}
	})

	t.Run("a timeout says so and returns the pod as last seen", func(t *testing.T) {
		cs := fake.NewClientset(pod("slow"))
		got, err := AwaitPod(ctx, cs, ns, "slow", 200*time.Millisecond, PodReady)
		if err == nil || !strings.Contains(err.Error(), "not within 200ms") {
			t.Errorf("error = %v, want one naming the timeout", err)
		}
		if got == nil || got.Status.Phase != corev1.PodPending {
			t.Errorf("last seen = %v, want the Pending pod", got)
		}
	})

	t.Run("a pod that ended stops the wait for Ready", func(t *testing.T) {
		cs := fake.NewClientset(pod("crash"))
		setStatus(t, cs, "crash", 0, func(p *corev1.Pod) *corev1.Pod {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "probe", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}}
			return p
		})
		start := time.Now()
		_, err := AwaitPod(ctx, cs, ns, "crash", time.Minute, PodReady)
		if err == nil || !strings.Contains(err.Error(), "ended (Failed)") || !strings.Contains(err.Error(), "probe terminated Error (exit 2)") {
			t.Errorf("error = %v, want the pod's end and its container's state", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %s: a Failed pod must end the wait", d)
		}
	})

	t.Run("a deleted pod ends the wait", func(t *testing.T) {
		cs := fake.NewClientset(pod("gone"))
		go func() {
			time.Sleep(200 * time.Millisecond)
			_ = cs.CoreV1().Pods(ns).Delete(ctx, "gone", metav1.DeleteOptions{})
		}()
		_, err := AwaitPod(ctx, cs, ns, "gone", time.Minute, PodReady)
		if err == nil || !strings.Contains(err.Error(), "gone was deleted") {
			t.Errorf("error = %v, want one saying the pod was deleted", err)
		}
	})
}

func TestDeletePod(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(pod("victim"))
	start := time.Now()
	if err := DeletePod(ctx, cs, pod("victim"), metav1.DeleteOptions{}, time.Minute); err != nil {
		t.Fatalf("DeletePod: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("DeletePod took %s for a pod the server removes at once", d)
	}
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "victim", metav1.GetOptions{}); err == nil {
		t.Error("the pod is still there")
	}
	if err := DeletePod(ctx, cs, pod("victim"), metav1.DeleteOptions{}, time.Minute); err != nil {
		t.Errorf("DeletePod of a pod already gone: %v", err)
	}
}

func TestAwaitGone(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(pod("lingers"), pod("leaves"))
	pods := cs.CoreV1().Pods(ns)
	if err := AwaitGone[*corev1.Pod](ctx, cs, pods, "never-was", time.Minute); err != nil {
		t.Errorf("AwaitGone of a pod that is not there: %v", err)
	}
	err := AwaitGone[*corev1.Pod](ctx, cs, pods, "lingers", 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "lingers is still there: not within 200ms") {
		t.Errorf("AwaitGone of a pod that stays: %v", err)
	}
	deleted := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		deleted <- time.Now()
		_ = pods.Delete(ctx, "leaves", metav1.DeleteOptions{})
	}()
	if err := AwaitGone[*corev1.Pod](ctx, cs, pods, "leaves", time.Minute); err != nil {
		t.Fatalf("AwaitGone: %v", err)
	}
	if lag := time.Since(<-deleted); lag > 500*time.Millisecond {
		t.Errorf("AwaitGone saw the deletion %s after it", lag)
	}
}
