package verdicts

import (
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// StatefulSetRun is what a spec saw of a StatefulSet of Windows pods
// (LIM-05): its ready replicas and its pods, as last read.
type StatefulSetRun struct {
	Name     string // the StatefulSet's, and its headless Service's
	Replicas int32
	Ready    int32
	Pods     []corev1.Pod
}

// StatefulSet decides whether the StatefulSet works on Windows nodes, from
// its running pods: every replica Ready with the stable names and DNS
// identities of a StatefulSet (hostname the pod's name, subdomain the
// Service) works; Ready pods without them are limited. Replicas that did
// not turn Ready by the end of the wait (an image still pulling, a pod
// never scheduled) show nothing: Unobserved, with where they were.
func StatefulSet(s StatefulSetRun) Observation {
	pods := append([]corev1.Pod(nil), s.Pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var placed, notReady, noIdentity []string
	ready := int32(0)
	for i := range pods {
		p := &pods[i]
		placed = append(placed, fmt.Sprintf("%s on %s (%s)", p.Name, p.Spec.NodeName, p.Status.Phase))
		if !Ready(p) {
			notReady = append(notReady, fmt.Sprintf("%s: %s", p.Name, State(p)))
			continue
		}
		ready++
		if !ordinal(p.Name, s.Name, s.Replicas) || p.Spec.Hostname != p.Name || p.Spec.Subdomain != s.Name {
			noIdentity = append(noIdentity, fmt.Sprintf("%s (hostname %q, subdomain %q)", p.Name, p.Spec.Hostname, p.Spec.Subdomain))
		}
	}
	switch {
	case ready < s.Replicas || s.Ready < s.Replicas:
		return Unobserved("StatefulSet %s: %d/%d pods Ready when the wait ended, so no running replica set showed what a StatefulSet does: %s",
			s.Name, ready, s.Replicas, strings.Join(append(notReady, fmt.Sprintf("%d of %d pods exist", len(pods), s.Replicas)), "; "))
	case len(noIdentity) > 0:
		return Limited("StatefulSet %s: %d/%d Ready, but without the stable names and DNS identities of a StatefulSet: %s",
			s.Name, ready, s.Replicas, strings.Join(noIdentity, ", "))
	}
	return Works("StatefulSet %s: %d/%d Ready, stable names and DNS identities (hostname = pod name, subdomain %s): %s",
		s.Name, ready, s.Replicas, s.Name, strings.Join(placed, ", "))
}

// ordinal says whether pod is one of the StatefulSet's ordinal names.
func ordinal(pod, set string, replicas int32) bool {
	for i := range replicas {
		if pod == fmt.Sprintf("%s-%d", set, i) {
			return true
		}
	}
	return false
}

// HPAWarmUp is how long the Linux twin's HPA must have computed replica
// counts before the Windows one's failing to get metrics decides anything:
// metrics-server scrapes each kubelet every 15 s by default and needs two
// scrapes for a CPU rate, and the HPA controller syncs every 15 s.
const HPAWarmUp = time.Minute

// HPARun is what a spec saw of a HorizontalPodAutoscaler of Windows pods
// and of its Linux twin (LIM-06).
type HPARun struct {
	// MetricsServed says whether the cluster serves metrics.k8s.io.
	MetricsServed bool
	// Windows and Linux are the HPAs' conditions, as last read.
	Windows, Linux []autoscalingv2.HorizontalPodAutoscalerCondition
	// WindowsUnready says why the Windows Deployment's pods were not all
	// Ready ("" when they were).
	WindowsUnready string
	// LinuxActiveFor is how long the Linux twin's HPA had been computing
	// replica counts (ScalingActive True) when the conditions were last
	// read; zero when it never did.
	LinuxActiveFor time.Duration
}

// HPA decides whether the HPA works for Windows pods: it computed a
// replica count from their metrics (ScalingActive True: Works), or, the
// Windows pods Ready, it still failed to get their metrics
// (FailedGetResourceMetric) while its Linux twin had been computing counts
// for HPAWarmUp (Limited). ScalingActive False while the metrics pipeline
// warms up on both OSes, Windows pods that never turned Ready, and any
// other reason decide nothing.
func HPA(h HPARun) Observation {
	if !h.MetricsServed {
		// No HPA can scale without a metrics API, Windows or Linux: what
		// would be seen is the cluster's lack, not Windows'. The spec
		// decides this before it makes anything.
		return Unobserved("this cluster serves no metrics API (metrics.k8s.io), so no HPA can scale anything, on Windows or Linux: nothing to measure")
	}
	w, l := Condition(h.Windows, autoscalingv2.ScalingActive), Condition(h.Linux, autoscalingv2.ScalingActive)
	evidence := fmt.Sprintf("the API server accepted the HPA and the controller reports %s, %s for the Windows Deployment; the Linux twin: %s (for %s)",
		describe(Condition(h.Windows, autoscalingv2.AbleToScale), autoscalingv2.AbleToScale), describe(w, autoscalingv2.ScalingActive),
		describe(l, autoscalingv2.ScalingActive), h.LinuxActiveFor.Round(time.Second))
	switch {
	case w != nil && w.Status == corev1.ConditionTrue:
		return Works("%s", evidence)
	case h.WindowsUnready != "":
		return Unobserved("the Windows Deployment's pods were not Ready (%s), so the HPA had no pods to measure: %s", h.WindowsUnready, evidence)
	case l == nil || l.Status != corev1.ConditionTrue:
		return Unobserved("the Linux twin's HPA computed no replica count either (the metrics pipeline is not working, or still warming up): %s", evidence)
	case h.LinuxActiveFor < HPAWarmUp:
		return Unobserved("the Linux twin's HPA had computed replica counts for %s only, less than the %s metrics take to warm up: %s", h.LinuxActiveFor.Round(time.Second), HPAWarmUp, evidence)
	case w == nil:
		return Unobserved("the Windows HPA reports no ScalingActive condition: %s", evidence)
	case w.Reason == "FailedGetResourceMetric":
		return Limited("%s", evidence)
	}
	return Unobserved("the Windows HPA is not active for a reason that is not its pods' metrics (%s): %s", w.Reason, evidence)
}

// Condition is the condition of type t, nil when there is none.
func Condition(cs []autoscalingv2.HorizontalPodAutoscalerCondition, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func describe(c *autoscalingv2.HorizontalPodAutoscalerCondition, t autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	if c == nil {
		return fmt.Sprintf("no %s condition", t)
	}
	return fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message)
}

// ControlPlane decides where the control plane runs (LIM-07), from the
// cluster's nodes and its control-plane pods (kube-system,
// tier=control-plane): a control-plane node or pod on a Windows node
// shows it is not Linux only (Works); all of them seen on Linux nodes show
// the limitation holds; a pod whose node's OS is unknown (not scheduled,
// or on a node not listed), or nothing of a control plane, decides nothing.
func ControlPlane(nodes []corev1.Node, pods []corev1.Pod) Observation {
	osOf := map[string]string{}
	var cpNodes, onWindows, unknown []string
	for _, n := range nodes {
		os := n.Labels[corev1.LabelOSStable]
		if os == "" {
			os = n.Status.NodeInfo.OperatingSystem
		}
		osOf[n.Name] = os
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp {
			continue
		}
		cpNodes = append(cpNodes, n.Name)
		if os != string(corev1.Linux) {
			onWindows = append(onWindows, fmt.Sprintf("control-plane node %s (OS %q)", n.Name, os))
		}
	}
	var cpPods []string
	for _, p := range pods {
		cpPods = append(cpPods, p.Name)
		os, known := osOf[p.Spec.NodeName]
		switch {
		case p.Spec.NodeName == "" || !known || os == "":
			unknown = append(unknown, fmt.Sprintf("%s (node %q)", p.Name, p.Spec.NodeName))
		case os != string(corev1.Linux):
			onWindows = append(onWindows, fmt.Sprintf("control-plane pod %s on node %s (OS %q)", p.Name, p.Spec.NodeName, os))
		}
	}
	sort.Strings(cpPods)
	switch {
	case len(onWindows) > 0:
		return Works("the control plane is not on Linux only: %s", strings.Join(onWindows, "; "))
	case len(cpNodes) == 0 && len(pods) == 0:
		return Unobserved("no control-plane node or pod is visible in this cluster")
	case len(unknown) > 0:
		return Unobserved("the OS of the node of control-plane pod(s) %s is not known", strings.Join(unknown, ", "))
	}
	return Limited("every control-plane node (%d: %s) and pod (%d: %s) runs on Linux", len(cpNodes), strings.Join(cpNodes, ", "), len(cpPods), strings.Join(cpPods, ", "))
}
