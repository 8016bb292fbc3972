package verdicts

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// LegacySelection is what a spec saw of a pod that selects its nodes by
// the legacy label beta.kubernetes.io/os, as 1.9-era manifests do (SCH-02).
type LegacySelection struct {
	OS string
	// Carrying of Nodes nodes of OS carry the legacy label.
	Carrying, Nodes int
	// Pod is the pod as last read; nil when it never was.
	Pod *corev1.Pod
}

// LegacyLabel decides whether a manifest that selects the legacy label
// still schedules, from the scheduler's verdict on the pod: placed (Works:
// the node carries the label, or the scheduler would not have placed it),
// or Unschedulable (Limited). A pod still Pending without that verdict
// when the wait ended, or never read, decides nothing.
func LegacyLabel(l LegacySelection) Observation {
	evidence := fmt.Sprintf("%d of %d %s node(s) carry beta.kubernetes.io/os=%s when the spec began", l.Carrying, l.Nodes, l.OS, l.OS)
	switch c := Scheduled(l.Pod); {
	case l.Pod == nil:
		return Unobserved("%s; the pod with nodeSelector beta.kubernetes.io/os=%s could not be read", evidence, l.OS)
	case l.Pod.Spec.NodeName != "":
		return Works("%s; a pod with nodeSelector beta.kubernetes.io/os=%s was scheduled to %s", evidence, l.OS, l.Pod.Spec.NodeName)
	case c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable:
		return Limited("%s; the scheduler found a pod with nodeSelector beta.kubernetes.io/os=%s Unschedulable: %s", evidence, l.OS, c.Message)
	}
	return Unobserved("%s; a pod with nodeSelector beta.kubernetes.io/os=%s was still Pending, without the scheduler's verdict, when the wait ended (%s)", evidence, l.OS, State(l.Pod))
}

// Scheduled is the pod's PodScheduled condition (zero when it has none).
func Scheduled(p *corev1.Pod) corev1.PodCondition {
	if p != nil {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				return c
			}
		}
	}
	return corev1.PodCondition{}
}
