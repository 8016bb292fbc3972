package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/winconform/winconform/internal/text"
)

func node(name string, cond *corev1.NodeCondition) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if cond != nil {
		n.Status.Conditions = []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			*cond,
		}
	}
	return n
}

func readyNode(name string) *corev1.Node {
	return node(name, &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"})
}

func readyPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

func daemonSet(ns, name string, ready, desired int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status:     appsv1.DaemonSetStatus{DesiredNumberScheduled: desired, NumberReady: ready},
	}
}

func deployment(ns, name string, replicas *int32, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DeploymentSpec{Replicas: replicas},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: ready},
	}
}

var readiness = Readiness{Nodes: 2, Namespaces: []string{"kube-system", "kube-flannel"}}

// healthy is a cluster that meets readiness.
func healthy() []runtime.Object {
	succeeded := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "job-abc"},
		Status:     corev1.PodStatus{Phase: corev1.PodSucceeded},
	}
	// Not ready, but in a namespace nobody waits for.
	elsewhere := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crashing"},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	return []runtime.Object{
		readyNode("wc-control-plane"), readyNode("wc-worker"),
		readyPod("kube-system", "coredns-1"), readyPod("kube-system", "etcd-wc-control-plane"),
		readyPod("kube-flannel", "kube-flannel-ds-a"), succeeded, elsewhere,
		daemonSet("kube-flannel", "kube-flannel-ds", 2, 2),
		daemonSet("kube-system", "kube-proxy", 2, 2),
		deployment("kube-system", "coredns", ptr.To(int32(2)), 2),
		deployment("kube-system", "defaulted", nil, 1),
		deployment("kube-system", "scaled-down", ptr.To(int32(0)), 0),
		daemonSet("default", "ignored", 0, 3),
	}
}

func TestNotReadyHealthyCluster(t *testing.T) {
	cs := fake.NewClientset(healthy()...)
	problems, err := NotReady(context.Background(), cs, readiness)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("healthy cluster has problems: %q", problems)
	}
	// More nodes than needed is fine.
	problems, err = NotReady(context.Background(), cs, Readiness{Nodes: 1})
	if err != nil || len(problems) != 0 {
		t.Errorf("Nodes: 1 on two nodes: %q, %v", problems, err)
	}
}

func TestNotReadyReportsEachProblem(t *testing.T) {
	notReady := node("wc-worker", &corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
	})
	pulling := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns-66bc-x"},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "coredns", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "ImagePullBackOff", Message: "Back-off pulling image \"registry.k8s.io/coredns/coredns:v1.12.1\"\nmore detail",
				}}},
			},
		},
	}
	cs := fake.NewClientset(
		readyNode("wc-control-plane"), notReady,
		pulling, readyPod("kube-flannel", "kube-flannel-ds-a"),
		daemonSet("kube-flannel", "kube-flannel-ds", 1, 2),
		deployment("kube-system", "coredns", ptr.To(int32(1)), 0),
	)
	problems, err := NotReady(context.Background(), cs, Readiness{Nodes: 3, Namespaces: readiness.Namespaces})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2 of 3 nodes registered",
		"daemonset kube-flannel/kube-flannel-ds 1/2 ready",
		"deployment kube-system/coredns 0/1 ready",
		"node wc-worker NotReady (KubeletNotReady: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized)",
		`pod kube-system/coredns-66bc-x Pending (container coredns waiting: ImagePullBackOff Back-off pulling image "registry.k8s.io/coredns/coredns:v1.12.1")`,
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems =\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
	if !slices.IsSorted(problems) {
		t.Error("problems are not sorted")
	}
}

func TestNotReadyEdgeCases(t *testing.T) {
	cs := fake.NewClientset(
		readyNode("a"),
		node("b", nil), // just registered: no conditions yet
		node("c", &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}),
		// wants no pods, as a Windows-only DaemonSet on a cluster without Windows nodes: fine
		daemonSet("kube-system", "windows-only", 0, 0),
		deployment("kube-system", "defaulted", nil, 0),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "no-conditions"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "failed-job"}, Status: corev1.PodStatus{Phase: corev1.PodFailed}},
		// a failed pod its controller replaces is counted by the controller, not by itself
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "evicted",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: "u"}}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}},
	)
	problems, err := NotReady(context.Background(), cs, Readiness{Nodes: 3, Namespaces: []string{"kube-system"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"deployment kube-system/defaulted 0/1 ready",
		"node b has no Ready condition yet",
		"node c NotReady (NodeStatusUnknown: Kubelet stopped posting node status.)",
		"pod kube-system/failed-job Failed (not ready)",
		"pod kube-system/no-conditions Running (not ready)",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems =\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

func TestNotReadyAPIError(t *testing.T) {
	for _, resource := range []string{"nodes", "pods", "daemonsets", "deployments"} {
		cs := fake.NewClientset(healthy()...)
		cs.PrependReactor("list", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, errors.New("etcdserver: leader changed")
		})
		problems, err := NotReady(context.Background(), cs, readiness)
		if err == nil || !strings.Contains(err.Error(), "leader changed") {
			t.Errorf("list %s failing: problems %q, err %v", resource, problems, err)
		}
	}
}

func TestDescribePod(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"waiting", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "rpc error: not found\nsecond"}}},
		}}}, "Pending (container app waiting: ErrImagePull rpc error: not found)"},
		{"init container first", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "install-cni", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "kube-flannel", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
			}}}, "Pending (container install-cni waiting: CrashLoopBackOff back-off 10s)"},
		{"terminated non-zero", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "ok", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", Message: "  killed\nby the kernel"}}},
		}}}, "Running (container app exited 137: OOMKilled killed)"},
		{"terminated zero is not a reason", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
		}, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
		}}}, "Running (container app waiting: ContainerCreating )"},
		{"unschedulable", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.\npreemption: ..."},
		}}}, "Pending (unschedulable: 0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.)"},
		{"scheduled, nothing else known", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		}}}, "Pending (not ready)"},
		{"running containers", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}}}, "Running (not ready)"},
	} {
		if got := DescribePod(&tc.pod); got != tc.want {
			t.Errorf("%s: DescribePod = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPodReady(t *testing.T) {
	if !PodReady(readyPod("ns", "p")) {
		t.Error("ready pod not ready")
	}
	p := readyPod("ns", "p")
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse},
	}
	if PodReady(p) {
		t.Error("pod with Ready=False is ready")
	}
	p.Status.Conditions = p.Status.Conditions[:2]
	if PodReady(p) {
		t.Error("pod without a Ready condition is ready")
	}
}

func TestWaitReadyTimesOutWithProblems(t *testing.T) {
	cs := fake.NewClientset(readyNode("wc-control-plane"), daemonSet("kube-flannel", "kube-flannel-ds", 0, 1))
	start := time.Now()
	err := WaitReady(context.Background(), cs, readiness, 300*time.Millisecond)
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("WaitReady succeeded on a cluster short of a node")
	}
	if !strings.HasPrefix(err.Error(), "not Ready within 300ms: ") {
		t.Errorf("error = %q", err)
	}
	if want := "not Ready within 300ms: 1 of 2 nodes registered; daemonset kube-flannel/kube-flannel-ds 0/1 ready"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if elapsed > 2*time.Second {
		t.Errorf("WaitReady took %s with a 300ms timeout", elapsed)
	}
}

func TestWaitReadyReportsAPIErrors(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	err := WaitReady(context.Background(), cs, readiness, 200*time.Millisecond)
	if err == nil || !strings.HasPrefix(err.Error(), "not Ready within 200ms: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("WaitReady with a failing API: %v", err)
	}
}

func TestWaitReadyHealthy(t *testing.T) {
	cs := fake.NewClientset(healthy()...)
	start := time.Now()
	if err := WaitReady(context.Background(), cs, readiness, 10*time.Second); err != nil {
		t.Fatalf("WaitReady on a healthy cluster: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("WaitReady on a healthy cluster took %s: it should look at once", d)
	}
}

func TestWaitReadyBecomesReady(t *testing.T) {
	objs := healthy()
	cs := fake.NewClientset(objs...)
	n, err := cs.CoreV1().Nodes().Get(context.Background(), "wc-worker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		n := n.DeepCopy()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		cs.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
	}()
	if err := WaitReady(context.Background(), cs, readiness, 20*time.Second); err != nil {
		t.Errorf("WaitReady on a cluster that becomes ready: %v", err)
	}
}

func TestWaitReadyCancelled(t *testing.T) {
	cs := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	err := WaitReady(ctx, cs, readiness, time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WaitReady with a cancelled context = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("WaitReady took %s with a cancelled context", d)
	}

	// Cancelled while waiting.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	err = WaitReady(ctx, cs, readiness, time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WaitReady cancelled midway = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("WaitReady took %s to notice the cancellation", d)
	}
}

func TestWaitReadyParentDeadline(t *testing.T) {
	// A deadline of the caller's is a timeout too, and says what is not ready.
	cs := fake.NewClientset(readyNode("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err := WaitReady(ctx, cs, readiness, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 nodes registered") {
		t.Errorf("WaitReady past the caller's deadline = %v", err)
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", " a\nb ": "a", "\n\nx\ny": "x"} {
		if got := text.FirstLine(in); got != want {
			t.Errorf("text.FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// A poll cut short by the deadline must not hide what the previous look saw.
func TestWaitReadyKeepsLastProblemsWhenTheFinalCallTimesOut(t *testing.T) {
	cs := fake.NewClientset(node("n1", &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "network plugin not ready"}))
	calls := 0
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls > 1 {
			time.Sleep(700 * time.Millisecond) // the deadline passes during this call
			return true, nil, context.DeadlineExceeded
		}
		return false, nil, nil
	})
	// The first look (at once) sees the node; the second (after the 2 s
	// interval) is still running when the 2.5 s deadline passes.
	err := WaitReady(context.Background(), cs, Readiness{Nodes: 1}, 2500*time.Millisecond)
	if calls < 2 {
		t.Fatalf("only %d look(s): the test did not reach the deadline inside a call", calls)
	}
	if err == nil || !strings.Contains(err.Error(), "node n1 NotReady (KubeletNotReady: network plugin not ready)") {
		t.Fatalf("err = %v, want the node's problem from the last complete look", err)
	}
}
