package verdicts

import (
	"fmt"
	"sort"
	"strings"

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

// StatefulSet decides whether the StatefulSet works on Windows nodes: its
// pods ready, with the stable names and DNS identities of a StatefulSet
// (hostname the pod's name, subdomain the Service).
func StatefulSet(s StatefulSetRun) Observation {
	var placed []string
	ordered := true
	for _, p := range s.Pods {
		placed = append(placed, fmt.Sprintf("%s on %s (%s)", p.Name, p.Spec.NodeName, p.Status.Phase))
		ordered = ordered && ordinal(p.Name, s.Name, s.Replicas) && p.Spec.Hostname == p.Name && p.Spec.Subdomain == s.Name
	}
	sort.Strings(placed)
	if s.Ready == s.Replicas && ordered {
		return Works("StatefulSet %s: %d/%d ready, stable names and DNS identities (hostname = pod name, subdomain %s): %s",
			s.Name, s.Ready, s.Replicas, s.Name, strings.Join(placed, ", "))
	}
	return Limited("StatefulSet %s: %d/%d ready; pods %v", s.Name, s.Ready, s.Replicas, placed)
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

// HPARun is what a spec saw of a HorizontalPodAutoscaler of Windows pods
// and of its Linux twin (LIM-06).
type HPARun struct {
	// MetricsServed says whether the cluster serves metrics.k8s.io.
	MetricsServed bool
	// Windows and Linux are the HPAs' conditions, as last read.
	Windows, Linux []autoscalingv2.HorizontalPodAutoscalerCondition
}

// HPA decides whether the HPA works for Windows pods.
func HPA(h HPARun) Observation {
	w, l := Condition(h.Windows, autoscalingv2.ScalingActive), Condition(h.Linux, autoscalingv2.ScalingActive)
	evidence := fmt.Sprintf("the API server accepted the HPA and the controller reports %s, %s for the Windows Deployment; the Linux twin: %s; metrics.k8s.io served: %v",
		describe(Condition(h.Windows, autoscalingv2.AbleToScale), autoscalingv2.AbleToScale), describe(w, autoscalingv2.ScalingActive), describe(l, autoscalingv2.ScalingActive), h.MetricsServed)
	switch {
	case !h.MetricsServed:
		// No HPA can scale without a metrics API, Windows or Linux: what
		// is seen is the cluster's lack, not Windows'.
		return Unobserved("this cluster serves no metrics API (metrics.k8s.io), so no HPA can scale anything: %s", evidence)
	case w != nil && w.Status == corev1.ConditionTrue:
		return Works("%s", evidence)
	}
	return Limited("%s", evidence)
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
// cluster's nodes and its control-plane pods (kube-system, tier=control-plane).
func ControlPlane(nodes []corev1.Node, pods []corev1.Pod) Observation {
	controlPlanes := 0
	for _, n := range nodes {
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; cp {
			controlPlanes++
		}
	}
	return Limited("every control-plane node (%d) and pod (%d) runs on Linux", controlPlanes, len(pods))
}
