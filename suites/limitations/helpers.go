package limitations

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/ospod"
)

const (
	linux   = string(corev1.Linux)
	windows = string(corev1.Windows)
)

// osPod is a minimal pod of os: spec.os.name and the node selector set, the
// probe image, and the Windows taint tolerated.
func osPod(name, os string) *corev1.Pod {
	return ospod.Probe(name, os)
}

// dryRun creates p through every validation and admission step without storing it.
func dryRun(ctx context.Context, f *framework.Framework, p *corev1.Pod) (*corev1.Pod, error) {
	return f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
}

// oneLine shortens an API error for the ledger.
func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// waitingReason describes why the pod's first container is not running.
func waitingReason(p *corev1.Pod) string {
	if p == nil || len(p.Status.ContainerStatuses) == 0 {
		if p != nil {
			return fmt.Sprintf("phase %s, no container status", p.Status.Phase)
		}
		return "no pod"
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

func ptr[T any](v T) *T { return &v }
