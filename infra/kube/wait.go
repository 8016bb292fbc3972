package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/internal/text"
)

// Readiness is what a cluster must show before the harness uses it.
type Readiness struct {
	Nodes      int      // at least this many nodes, all Ready
	Namespaces []string // every pod, DaemonSet and Deployment here Ready
}

// WaitReady polls until r holds or timeout passes. The error then lists what
// was still not ready at the last look, with the reasons Kubernetes gave.
func WaitReady(ctx context.Context, cs kubernetes.Interface, r Readiness, timeout time.Duration) error {
	var last []string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		problems, err := NotReady(ctx, cs, r)
		if err != nil {
			// The API server may still be settling. A call cut short by the
			// deadline itself says nothing: keep what the last look saw.
			if ctx.Err() == nil || len(last) == 0 {
				last = []string{"the API server did not answer: " + err.Error()}
			}
			return false, nil
		}
		last = problems
		return len(problems) == 0, nil
	})
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return fmt.Errorf("not Ready within %s: %s", timeout, strings.Join(last, "; "))
}

// NotReady describes each way in which the cluster does not yet meet r.
func NotReady(ctx context.Context, cs kubernetes.Interface, r Readiness) ([]string, error) {
	var problems []string
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if len(nodes.Items) < r.Nodes {
		problems = append(problems, fmt.Sprintf("%d of %d nodes registered", len(nodes.Items), r.Nodes))
	}
	for _, n := range nodes.Items {
		if c := nodeCondition(n, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
			problems = append(problems, "node "+n.Name+" "+describeCondition(c))
		}
	}
	for _, ns := range r.Namespaces {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded || PodReady(&p) {
				continue
			}
			// A failed pod of a controller is replaced by it; the controller's own count below says whether it was.
			if p.Status.Phase == corev1.PodFailed && len(p.OwnerReferences) > 0 {
				continue
			}
			problems = append(problems, fmt.Sprintf("pod %s/%s %s", ns, p.Name, DescribePod(&p)))
		}
		dss, err := cs.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, ds := range dss.Items {
			// A DaemonSet for nodes the cluster does not have (Windows) wants no pods and is fine.
			if ds.Status.NumberReady < ds.Status.DesiredNumberScheduled {
				problems = append(problems, fmt.Sprintf("daemonset %s/%s %d/%d ready", ns, ds.Name, ds.Status.NumberReady, ds.Status.DesiredNumberScheduled))
			}
		}
		deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, d := range deps.Items {
			want := int32(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.ReadyReplicas < want {
				problems = append(problems, fmt.Sprintf("deployment %s/%s %d/%d ready", ns, d.Name, d.Status.ReadyReplicas, want))
			}
		}
	}
	sort.Strings(problems)
	return problems, nil
}

func nodeCondition(n corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func describeCondition(c *corev1.NodeCondition) string {
	if c == nil {
		return "has no Ready condition yet"
	}
	return fmt.Sprintf("NotReady (%s: %s)", c.Reason, c.Message)
}

// PodReady reports whether p's Ready condition is true.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// DescribePod says why p is not Ready, in Kubernetes' own words: the phase,
// then the first container that is waiting or has terminated, or the
// scheduling condition of a pod that has no node.
func DescribePod(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil {
			return fmt.Sprintf("%s (container %s waiting: %s %s)", s, cs.Name, w.Reason, text.FirstLine(w.Message))
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("%s (container %s exited %d: %s %s)", s, cs.Name, t.ExitCode, t.Reason, text.FirstLine(t.Message))
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("%s (unschedulable: %s)", s, text.FirstLine(c.Message))
		}
	}
	return s + " (not ready)"
}
