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
// still schedules.
func LegacyLabel(l LegacySelection) Observation {
	evidence := fmt.Sprintf("%d of %d %s node(s) carry beta.kubernetes.io/os=%s", l.Carrying, l.Nodes, l.OS, l.OS)
	if l.Pod != nil && l.Pod.Spec.NodeName != "" {
		evidence += fmt.Sprintf("; a pod with nodeSelector beta.kubernetes.io/os=%s was scheduled to %s", l.OS, l.Pod.Spec.NodeName)
		if l.Carrying > 0 {
			return Works("%s", evidence)
		}
		return Limited("%s", evidence)
	}
	return Limited("%s; a pod with nodeSelector beta.kubernetes.io/os=%s stayed Pending: %s", evidence, l.OS, Scheduled(l.Pod).Message)
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
