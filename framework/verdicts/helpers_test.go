package verdicts

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/framework/ledger"
)

// want checks an observation's behaviour, and that its evidence says why.
func want(t *testing.T, what string, got Observation, b ledger.Behaviour, says string) {
	t.Helper()
	if got.Behaviour != b {
		t.Errorf("%s: %s (%s), want %s", what, got.Behaviour, got.Evidence, b)
		return
	}
	if !contains(got.Evidence, says) {
		t.Errorf("%s: evidence %q does not say %q", what, got.Evidence, says)
	}
}

func contains(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// pod is a pod on node in phase, its first container in state.
func pod(name, node string, phase corev1.PodPhase, state corev1.ContainerState, ready bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "probe", State: state, Ready: ready}}}}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}

func waiting(reason, msg string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
}
