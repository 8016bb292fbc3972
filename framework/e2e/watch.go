package e2e

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/winconform/winconform/framework/verdicts"
)

// Waits on the API server watch the object instead of polling it: a
// condition is seen when the API server reports the change, not at the
// next tick of a fixed period (the e2e framework's pod waits poll every
// 2 s, which added up to 2 s to every pod a spec started or deleted).

// Watcher lists and watches one kind of object in one namespace: a typed
// client such as cs.CoreV1().Pods(ns) or cs.CoreV1().PersistentVolumeClaims(ns).
type Watcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Await watches the object called name through c, a client of cs, until
// cond holds for it, and returns it as last seen (also with an error; nil
// when it was never seen). It ends with cond's error, when the object is
// deleted, or after timeout. A condition that already holds returns at once.
func Await[T runtime.Object, L runtime.Object](ctx context.Context, cs kubernetes.Interface, c Watcher[L], name string, timeout time.Duration, cond func(T) (bool, error)) (T, error) {
	var last T
	_, err := until(ctx, cs, c, exampleOf[T](), name, timeout, nil, func(ev watch.Event) (bool, error) {
		o, ok := ev.Object.(T)
		if !ok || nameOf(o) != name {
			return false, nil
		}
		last = o
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("%s was deleted", name)
		}
		return cond(o)
	})
	return last, err
}

// AwaitGone watches, through c, a client of cs, until the object called
// name is gone (at once when there is none), or fails after timeout.
func AwaitGone[T runtime.Object, L runtime.Object](ctx context.Context, cs kubernetes.Interface, c Watcher[L], name string, timeout time.Duration) error {
	absent := func(store cache.Store) (bool, error) {
		for _, o := range store.List() {
			if nameOf(o) == name {
				return false, nil
			}
		}
		return true, nil
	}
	_, err := until(ctx, cs, c, exampleOf[T](), name, timeout, absent, func(ev watch.Event) (bool, error) {
		return ev.Type == watch.Deleted && nameOf(ev.Object) == name, nil
	})
	if err != nil {
		return fmt.Errorf("%s is still there: %w", name, err)
	}
	return nil
}

// until runs client-go's UntilWithSync on the objects called name (a field
// selector; conditions check the name too, as fake clients ignore
// selectors), bounded by timeout, and says so when the timeout ended it.
// cs says whether the server streams lists (fake clientsets do not).
func until[L runtime.Object](ctx context.Context, cs kubernetes.Interface, c Watcher[L], example runtime.Object, name string, timeout time.Duration, pre watchtools.PreconditionFunc, cond watchtools.ConditionFunc) (*watch.Event, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.Watch(ctx, o)
		},
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev, err := watchtools.UntilWithSync(wctx, cache.ToListWatcherWithWatchListSemantics(lw, cs), example, pre, cond)
	if err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return ev, fmt.Errorf("not within %s: %w", timeout, err)
	}
	return ev, err
}

// exampleOf is an empty object of type T (a pointer type), for the informer.
func exampleOf[T runtime.Object]() runtime.Object {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(runtime.Object)
}

func nameOf(o any) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	return m.GetName()
}

// PodDeleteTimeout bounds the wait for a deleted pod to be gone (upstream's
// e2epod.PodDeleteTimeout).
const PodDeleteTimeout = 5 * time.Minute

// AwaitPod watches pod name in namespace ns until cond holds (see Await).
func AwaitPod(ctx context.Context, cs kubernetes.Interface, ns, name string, timeout time.Duration, cond func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	return Await(ctx, cs, cs.CoreV1().Pods(ns), name, timeout, cond)
}

// PodReady is the condition of a pod that runs and is Ready; a pod that
// ended (Succeeded or Failed) never will, and ends the wait.
func PodReady(p *corev1.Pod) (bool, error) {
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		return false, fmt.Errorf("pod %s ended (%s): %s", p.Name, p.Status.Phase, PodState(p))
	}
	return p.Status.Phase == corev1.PodRunning && verdicts.Ready(p), nil
}

// PodEnded is the condition of a pod that Succeeded or Failed.
func PodEnded(p *corev1.Pod) (bool, error) {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
}

// DeletePod deletes pod with opts and waits, watching, until it is gone
// (up to timeout); a pod already gone is no error.
func DeletePod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, opts metav1.DeleteOptions, timeout time.Duration) error {
	client := cs.CoreV1().Pods(pod.Namespace)
	if err := client.Delete(ctx, pod.Name, opts); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	if err := AwaitGone[*corev1.Pod](ctx, cs, client, pod.Name, timeout); err != nil {
		return fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	return nil
}

// PodState is a pod's phase and its containers' states, for messages.
func PodState(p *corev1.Pod) string {
	if p == nil {
		return "no pod"
	}
	parts := []string{string(p.Status.Phase)}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		switch s := cs.State; {
		case s.Waiting != nil:
			parts = append(parts, fmt.Sprintf("%s waiting %s: %s", cs.Name, s.Waiting.Reason, s.Waiting.Message))
		case s.Terminated != nil:
			parts = append(parts, fmt.Sprintf("%s terminated %s (exit %d): %s", cs.Name, s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Message))
		case s.Running != nil:
			parts = append(parts, fmt.Sprintf("%s running (ready %v)", cs.Name, cs.Ready))
		}
	}
	return strings.Join(parts, "; ")
}
