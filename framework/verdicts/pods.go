package verdicts

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// State describes where a pod is, for the ledger and failure messages: not
// scheduled, or why its first container is not running, or running.
func State(p *corev1.Pod) string {
	switch {
	case p == nil:
		return "no pod"
	case p.Spec.NodeName == "":
		if c := Scheduled(p); c.Message != "" {
			return fmt.Sprintf("not scheduled (%s: %s)", c.Reason, c.Message)
		}
		return "not scheduled"
	case len(p.Status.ContainerStatuses) == 0:
		return fmt.Sprintf("phase %s, no container status", p.Status.Phase)
	}
	s := p.Status.ContainerStatuses[0].State
	switch {
	case s.Waiting != nil:
		return s.Waiting.Reason + ": " + s.Waiting.Message
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %s (exit %d): %s", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Message)
	case s.Running != nil:
		return "running"
	}
	return "unknown"
}

// Ready says whether the pod's Ready condition is True.
func Ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
