package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/internal/kubenode"
	"github.com/winconform/winconform/internal/runmark"
)

// createNamespace is the e2e framework's namespace creation with the run's
// label (in the same request, so that no namespace of a run is without
// it), then its start annotation. A namespace whose annotation a kill cut
// off is still the run's; its age is its creation time.
func createNamespace(ctx context.Context, baseName string, c kubernetes.Interface, labels map[string]string) (*corev1.Namespace, error) {
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range RunLabels() {
		labels[k] = v
	}
	ns, err := framework.CreateTestingNS(ctx, baseName, c, labels)
	if err != nil || ns == nil {
		return ns, err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": RunAnnotations()}})
	if err != nil {
		return ns, err
	}
	if got, err := c.CoreV1().Namespaces().Patch(ctx, ns.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
		ns = got
	} else {
		framework.Logf("namespace %s: annotating it with the run's start: %v", ns.Name, err)
	}
	return ns, nil
}

// ChangeNode adds taints and labels to node name for the running spec,
// recorded on the node as this run's (runmark), and takes them back when
// the spec ends; a killed run's are taken back by the next run's sweep.
func ChangeNode(ctx context.Context, cs kubernetes.Interface, name string, taints []corev1.Taint, labels map[string]string) {
	_, err := kubenode.UpdateNode(ctx, cs, name, func(n *corev1.Node) (bool, error) { return true, Run().ChangeNode(n, taints, labels) })
	framework.ExpectNoError(err, "changing node %s for this spec", name)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		_, err := kubenode.UpdateNode(ctx, cs, name, func(n *corev1.Node) (bool, error) {
			runmark.UndoNodeChange(n, Run().ID)
			return true, nil
		})
		framework.ExpectNoError(err, "taking back this spec's change to node %s", name)
	})
}

// Heartbeat records this run in the cluster while the suite runs
// (runmark.Beat), so that no other run takes its objects for a dead run's,
// also when the suite binary runs without the CLI (which keeps the same
// heartbeat around the suite). It returns what stops it; a heartbeat that
// cannot be written is said, and the run goes on.
func Heartbeat() (stop func()) {
	cs, err := framework.LoadClientset()
	if err == nil {
		var h *runmark.Heartbeat
		host, _ := os.Hostname()
		h, err = runmark.Beat(context.Background(), cs, Run(), runmark.HeartbeatOptions{
			Holder: fmt.Sprintf("e2e.test %s/%d", host, os.Getpid()), Log: os.Stderr})
		if err == nil {
			return h.Stop
		}
	}
	fmt.Fprintf(os.Stderr, "winconform e2e: no heartbeat for run %s (%v): a run on the same cluster may take this run's objects for a dead run's\n", Run().ID, err)
	return func() {}
}
