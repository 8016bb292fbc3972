package scheduling

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/internal/text"
)

const (
	linux   = string(corev1.Linux)
	windows = string(corev1.Windows)

	// scheduleTimeout bounds the wait for the scheduler to place (or give up on) a pod.
	scheduleTimeout = time.Minute
	// pendingFor is how long an unschedulable pod must stay unbound once
	// the scheduler said so: long enough for a retry after its first
	// backoff (kube-scheduler's podInitialBackoffSeconds, 1 s by default)
	// with a read after it; a pod the scheduler can place is bound in that
	// time.
	pendingFor = 2500 * time.Millisecond
	// kubeletTimeout bounds the wait for a kubelet to act on a pod.
	kubeletTimeout = 2 * time.Minute
)

// createPod creates p in the spec's namespace and returns it as stored.
func createPod(ctx context.Context, f *framework.Framework, p *corev1.Pod) *corev1.Pod {
	got, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err, "creating pod %s", p.Name)
	return got
}

// waitScheduled waits until the scheduler binds the pod, and returns it.
func waitScheduled(ctx context.Context, cs kubernetes.Interface, ns, name string) *corev1.Pod {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, scheduleTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pod = p
		return p.Spec.NodeName != "", nil
	})
	framework.ExpectNoError(err, "pod %s was not scheduled within %s: %s", name, scheduleTimeout, scheduledCondition(pod).Message)
	return pod
}

// waitUnschedulable waits until the scheduler reports the pod Unschedulable,
// checks that it stays unbound for pendingFor, and returns the condition.
func waitUnschedulable(ctx context.Context, cs kubernetes.Interface, ns, name string) corev1.PodCondition {
	var cond corev1.PodCondition
	var nodeName string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, scheduleTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		nodeName = p.Spec.NodeName
		if nodeName != "" {
			return false, fmt.Errorf("pod %s was scheduled to %s", name, nodeName)
		}
		cond = scheduledCondition(p)
		return cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable, nil
	})
	framework.ExpectNoError(err, "pod %s was not reported Unschedulable (condition %+v)", name, cond)
	ginkgo.By(fmt.Sprintf("pod %s is Unschedulable: %s; checking it stays unbound for %s", name, cond.Message, pendingFor))
	deadline := time.Now().Add(pendingFor)
	for time.Now().Before(deadline) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		if p.Spec.NodeName != "" {
			framework.Failf("pod %s was scheduled to %s after being Unschedulable", name, p.Spec.NodeName)
		}
		select {
		case <-ctx.Done():
			framework.Failf("interrupted: %v", ctx.Err())
		case <-time.After(time.Second):
		}
	}
	return cond
}

// scheduledCondition is the pod's PodScheduled condition.
func scheduledCondition(p *corev1.Pod) corev1.PodCondition {
	if p != nil {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				return c
			}
		}
	}
	return corev1.PodCondition{Type: corev1.PodScheduled, Message: "no PodScheduled condition yet"}
}

// nodeOS is the kubernetes.io/os label of the node.
func nodeOS(ctx context.Context, cs kubernetes.Interface, name string) string {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	framework.ExpectNoError(err, "reading node %s", name)
	return n.Labels[facts.LabelOS]
}

// realNodes lists the Ready nodes of os that run a kubelet (skipping the
// spec when there are none), as the API server has them now.
func realNodes(ctx context.Context, f *framework.Framework, os string) []corev1.Node {
	fs := e2e.Facts(ctx, f)
	e2e.Nodes(fs, os, 1)
	var out []corev1.Node
	for _, n := range fs.Select(facts.Query{OS: os, Real: true, Ready: true}) {
		node, err := f.ClientSet.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		out = append(out, *node)
	}
	return out
}

// tainted says whether every node carries the documented os=windows:NoSchedule taint.
func tainted(nodes []corev1.Node) bool {
	for _, n := range nodes {
		if !hasTaint(n, ospod.WindowsTaint) {
			return false
		}
	}
	return len(nodes) > 0
}

func hasTaint(n corev1.Node, t corev1.Taint) bool {
	for _, have := range n.Spec.Taints {
		if have.Key == t.Key && have.Value == t.Value && have.Effect == t.Effect {
			return true
		}
	}
	return false
}

// withoutToleration removes the tolerations of key.
func withoutToleration(key string) ospod.Option {
	return func(p *corev1.Pod) {
		var keep []corev1.Toleration
		for _, t := range p.Spec.Tolerations {
			if t.Key != key {
				keep = append(keep, t)
			}
		}
		p.Spec.Tolerations = keep
	}
}

// unsteered removes the pod's node selector and tolerations, then adds tolerations.
func unsteered(tolerations ...corev1.Toleration) ospod.Option {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = nil
		p.Spec.Tolerations = append([]corev1.Toleration(nil), tolerations...)
	}
}

// preferOS adds a preferred (not required) node affinity for os.
func preferOS(os string) ospod.Option {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 100,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: facts.LabelOS, Operator: corev1.NodeSelectorOpIn, Values: []string{os},
				}}},
			}},
		}}
	}
}

// tolerateControlPlane lets the pod onto control-plane nodes too, so that
// only its node selector decides between Linux nodes and Windows nodes.
func tolerateControlPlane() ospod.Option {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{
			Key: facts.LabelControlPlane, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
}

// waitKubeletVerdict waits until the pod's phase is Failed (a kubelet
// rejected it) or it runs, and returns it.
func waitKubeletVerdict(ctx context.Context, cs kubernetes.Interface, ns, name string) *corev1.Pod {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, time.Second, kubeletTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pod = p
		return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded, nil
	})
	framework.ExpectNoError(err, "no kubelet admitted or rejected pod %s within %s (phase %s)", name, kubeletTimeout, phase(pod))
	return pod
}

func phase(p *corev1.Pod) string {
	if p == nil {
		return "unknown"
	}
	return string(p.Status.Phase)
}

// waitEvent waits for an event of reason about the pod and returns its message.
func waitEvent(ctx context.Context, cs kubernetes.Interface, ns, pod, reason string) (string, error) {
	var msg string
	var seen []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, e := range evs.Items {
			seen = append(seen, e.Reason)
			if e.Reason == reason {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("no %s event for pod %s (events seen: %v): %w", reason, pod, seen, err)
	}
	return msg, nil
}

// containerState describes the first container's state, for logs.
func containerState(p *corev1.Pod) string {
	if p == nil || len(p.Status.ContainerStatuses) == 0 {
		return "no container status"
	}
	s := p.Status.ContainerStatuses[0].State
	switch {
	case s.Waiting != nil:
		return "waiting: " + s.Waiting.Reason + " " + text.FirstLine(s.Waiting.Message)
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated: %s (exit %d)", s.Terminated.Reason, s.Terminated.ExitCode)
	}
	return "unknown"
}
