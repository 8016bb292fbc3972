package limitations

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
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
func waitingReason(p *corev1.Pod) string { return verdicts.State(p) }

// podsState describes where the pods that selector selects are, for the
// ledger: each pod's state (verdicts.State).
func podsState(ctx context.Context, f *framework.Framework, selector string) string {
	pods, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Sprintf("listing the pods %s: %v", selector, err)
	}
	if len(pods.Items) == 0 {
		return "no pod " + selector
	}
	var out []string
	for i := range pods.Items {
		out = append(out, pods.Items[i].Name+": "+verdicts.State(&pods.Items[i]))
	}
	return strings.Join(out, "; ")
}
