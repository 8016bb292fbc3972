// Package limitations asserts the documented limitations of Windows nodes:
// what the documents say cannot be done, checked against what this server
// version does.
package limitations

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
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
		byName := map[string]string{}
		controlPlanes := 0
		for _, n := range nodes.Items {
			byName[n.Name] = n.Status.NodeInfo.OperatingSystem
			if _, cp := n.Labels[facts.LabelControlPlane]; !cp {
				continue
			}
			controlPlanes++
			gomega.Expect(n.Labels[facts.LabelOS]).To(gomega.Equal(labels.Linux), "control-plane node %s is labelled %s=%q", n.Name, facts.LabelOS, n.Labels[facts.LabelOS])
			gomega.Expect(n.Status.NodeInfo.OperatingSystem).To(gomega.Equal(labels.Linux), "control-plane node %s reports operating system %q", n.Name, n.Status.NodeInfo.OperatingSystem)
		}
		// The control plane's own pods (static pods labelled tier=control-plane)
		// must run on Linux nodes too.
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
		framework.ExpectNoError(err)
		if controlPlanes == 0 && len(pods.Items) == 0 {
			skips.Skip(skips.ManagedControlPlane)
		}
		for _, p := range pods.Items {
			gomega.Expect(p.Spec.NodeName).NotTo(gomega.BeEmpty(), "control-plane pod %s is not scheduled", p.Name)
			gomega.Expect(byName[p.Spec.NodeName]).To(gomega.Equal(labels.Linux), "control-plane pod %s runs on %s, whose OS is %q", p.Name, p.Spec.NodeName, byName[p.Spec.NodeName])
		}
		framework.Logf("%d control-plane node(s) and %d control-plane pod(s), all on Linux", controlPlanes, len(pods.Items))
		evidence.Addf(claims.Linux, "%d control-plane node(s) and %d control-plane pod(s) of the cluster", controlPlanes, len(pods.Items))
		e := e2e.Limitation(ctx, f, "LIM-07")
		verdicts.ControlPlane(nodes.Items, pods.Items).Apply(&e)
		e2e.RecordLimitation(ctx, f, e)
	})
})
