// Package limitations asserts the documented limitations of Windows nodes:
// what the documents say cannot be done, checked against what this server
// version does.
package limitations

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/framework/verdicts"
)

var _ = ginkgo.Describe("control plane", labels.Suite("limitations"), func() {
	f := e2e.NewFramework("control-plane")
	f.SkipNamespaceCreation = true

	ginkgo.It("runs on Linux nodes only", labels.For("LIM-07", corev1.Linux), func(ctx context.Context) {
		cs := f.ClientSet
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		// The control plane's own pods (static pods labelled
		// tier=control-plane) tell where it runs, beside its nodes.
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
		framework.ExpectNoError(err)
		controlPlanes := 0
		for _, n := range nodes.Items {
			if _, cp := n.Labels[facts.LabelControlPlane]; cp {
				controlPlanes++
			}
		}
		if controlPlanes == 0 && len(pods.Items) == 0 {
			skips.Skip(skips.ManagedControlPlane)
		}
		evidence.Addf(claims.Linux, "%d control-plane node(s) and %d control-plane pod(s) of the cluster", controlPlanes, len(pods.Items))
		// What was seen decides: every one on Linux (the limitation
		// holds), one on Windows (it does not: drift), or a pod whose
		// node is not known (unobserved).
		e := e2e.Limitation(ctx, f, "LIM-07")
		verdicts.ControlPlane(nodes.Items, pods.Items).Apply(&e)
		framework.Logf("LIM-07: %s: %s", e.Observed, e.Evidence)
		e2e.RecordLimitation(ctx, f, e)
	})
})
