package verdicts

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/framework/ledger"
)

func statefulPod(name, node string, phase corev1.PodPhase, state corev1.ContainerState, ready bool) corev1.Pod {
	p := pod(name, node, phase, state, ready)
	p.Spec.Hostname, p.Spec.Subdomain = name, "web"
	return p
}

// LIM-05 is decided on running pods: both replicas Ready with the
// StatefulSet's stable names and DNS identities (works). StatefulSet pods
// that never start (a Windows image still pulling: ContainerCreating after
// the wait, or a pod never scheduled) show nothing of StatefulSets on
// Windows.
func TestStatefulSetDecidedOnRunningPods(t *testing.T) {
	run := func(ready int32, pods ...corev1.Pod) StatefulSetRun {
		return StatefulSetRun{Name: "web", Replicas: 2, Ready: ready, Pods: pods}
	}
	want(t, "both pods still ContainerCreating", StatefulSet(run(0,
		statefulPod("web-0", "win-1", corev1.PodPending, waiting("ContainerCreating", ""), false))), ledger.Unobserved, "ContainerCreating")
	want(t, "the second pod never scheduled", StatefulSet(run(1,
		statefulPod("web-0", "win-1", corev1.PodRunning, running(), true),
		statefulPod("web-1", "", corev1.PodPending, corev1.ContainerState{}, false))), ledger.Unobserved, "web-1")
	want(t, "both Ready with their identities", StatefulSet(run(2,
		statefulPod("web-0", "win-1", corev1.PodRunning, running(), true),
		statefulPod("web-1", "win-2", corev1.PodRunning, running(), true))), ledger.Works, "stable names")
	noID := statefulPod("web-1", "win-2", corev1.PodRunning, running(), true)
	noID.Spec.Hostname = ""
	want(t, "both Ready, one without its DNS identity", StatefulSet(run(2,
		statefulPod("web-0", "win-1", corev1.PodRunning, running(), true), noID)), ledger.Limited, "web-1")
}

func cond(t autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus, reason, msg string) autoscalingv2.HorizontalPodAutoscalerCondition {
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

// What the HPA controller says (kubernetes pkg/controller/podautoscaler,
// horizontal.go and replica_calculator.go at v1.37.2): ScalingActive
// False, FailedGetResourceMetric, while the metrics API has no figures for
// the target's pods yet (metrics-server scrapes each kubelet's summary
// every 15 s, and needs two scrapes for a CPU rate), True, ValidMetricFound,
// once it computed a replica count.
var (
	ableToScale = cond(autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	noMetrics   = cond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric",
		"the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API")
	active = cond(autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound",
		"the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)")
)

// LIM-06 is decided once the metrics pipeline is seen working: the Windows
// HPA computed a replica count (works), or it still could not get the
// Windows pods' metrics, Ready, while its Linux twin had computed counts
// for a warm-up's length (limited). ScalingActive appearing first, False
// while metrics warm up on both OSes, decides nothing; nor does a Windows
// pod that never started.
func TestHPADecidedAfterTheMetricsWarmUp(t *testing.T) {
	hpa := func(win, lin autoscalingv2.HorizontalPodAutoscalerCondition, linActive time.Duration, unready string) HPARun {
		return HPARun{MetricsServed: true, WindowsUnready: unready, LinuxActiveFor: linActive,
			Windows: []autoscalingv2.HorizontalPodAutoscalerCondition{ableToScale, win},
			Linux:   []autoscalingv2.HorizontalPodAutoscalerCondition{ableToScale, lin}}
	}
	want(t, "ScalingActive just appeared, False on both OSes while metrics warm up", HPA(hpa(noMetrics, noMetrics, 0, "")), ledger.Unobserved, "Linux twin")
	want(t, "the Linux twin active for a few seconds only", HPA(hpa(noMetrics, active, 10*time.Second, "")), ledger.Unobserved, "warm")
	want(t, "the Windows pods never turned Ready", HPA(hpa(noMetrics, active, 3*time.Minute, "hpa-windows-7d9 ContainerCreating")), ledger.Unobserved, "ContainerCreating")
	// Without a metrics API the spec decides before it makes anything, so
	// the verdict may not speak of HPAs or conditions it never saw.
	none := HPA(HPARun{})
	want(t, "no metrics API", none, ledger.Unobserved, "no metrics API")
	if contains(none.Evidence, "accepted") || contains(none.Evidence, "condition") {
		t.Errorf("no metrics API: evidence %q speaks of an HPA that was never made", none.Evidence)
	}
	want(t, "Windows pods without metrics while the twin scaled for minutes", HPA(hpa(noMetrics, active, 3*time.Minute, "")), ledger.Limited, "FailedGetResourceMetric")
	want(t, "the Windows HPA computed a replica count", HPA(hpa(active, active, 30*time.Second, "")), ledger.Works, "ValidMetricFound")
	disabled := cond(autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
	want(t, "scaling disabled (no replicas): not about Windows", HPA(hpa(disabled, active, 3*time.Minute, "")), ledger.Unobserved, "ScalingDisabled")
}

func node(name, os string, controlPlane bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": os}}}
	n.Status.NodeInfo.OperatingSystem = os
	if controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
	}
	return n
}

func cpPod(name, node string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Spec: corev1.PodSpec{NodeName: node}}
}

// LIM-07 says what was seen of the control plane: its nodes' and pods'
// OSes decide; a control-plane pod whose node is unknown (not scheduled,
// or on a node not listed) leaves it unobserved; a component on a Windows
// node is no longer "Linux only".
func TestControlPlaneFromWhatWasSeen(t *testing.T) {
	nodes := []corev1.Node{node("cp", "linux", true), node("lin-w", "linux", false), node("win-1", "windows", false)}
	want(t, "every control-plane node and pod on Linux",
		ControlPlane(nodes, []corev1.Pod{cpPod("kube-apiserver-cp", "cp"), cpPod("etcd-cp", "cp")}), ledger.Limited, "kube-apiserver-cp")
	want(t, "a control-plane pod on a Windows node",
		ControlPlane(nodes, []corev1.Pod{cpPod("kube-apiserver-cp", "cp"), cpPod("kube-scheduler-win-1", "win-1")}), ledger.Works, "kube-scheduler-win-1")
	want(t, "a control-plane pod not scheduled",
		ControlPlane(nodes, []corev1.Pod{cpPod("kube-apiserver-cp", "cp"), cpPod("kube-scheduler-x", "")}), ledger.Unobserved, "kube-scheduler-x")
	want(t, "nothing of a control plane visible", ControlPlane(nodes[1:], nil), ledger.Unobserved, "no control-plane")
}
