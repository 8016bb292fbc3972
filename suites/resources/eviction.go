package resources

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/kubelet"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/skips"
)

// RES-03, after upstream's eviction.go: on a Windows node with a hard
// eviction threshold for memory.available, a pod that requests 500 MiB (and
// uses less) and a pod that takes more memory than the node has above the
// threshold (900 MiB more); the second is evicted, the node's
// memory-pressure taint is lifted afterwards.
const (
	guardedRequestMiB = 500
	guardedUseMiB     = 400
	// hogExtraMiB is how much more than the memory above the threshold the
	// hog asks for (upstream: three 300 MB chunks).
	hogExtraMiB = 900
	// pressureTimeout bounds each wait: for the node to be free of memory
	// pressure before, for the eviction, for the taint to be lifted
	// (upstream: 10 minutes each).
	pressureTimeout = 10 * time.Minute
)

const mib = 1 << 20

// pressure is what a node shows of memory pressure.
type pressure struct {
	taint     bool
	condition bool
}

func nodePressure(n *corev1.Node) pressure {
	var p pressure
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeMemoryPressure {
			p.taint = true
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeMemoryPressure && c.Status == corev1.ConditionTrue {
			p.condition = true
		}
	}
	return p
}

// waitNoPressure waits until node has neither the memory-pressure taint nor the condition.
func waitNoPressure(ctx context.Context, f *framework.Framework, node string) error {
	return wait.PollUntilContextTimeout(ctx, 5*time.Second, pressureTimeout, true, func(ctx context.Context) (bool, error) {
		n, err := f.ClientSet.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return nodePressure(n) == pressure{}, nil
	})
}

// allocPod is a pod on node that takes mebibytes of memory and holds it.
func allocPod(name string, node facts.Node, mebibytes int) *corev1.Pod {
	p := ospod.Probe(name, windows, ospod.OnNode(node))
	c := &p.Spec.Containers[0]
	c.Command, c.Ports, c.ReadinessProbe = ospod.ProbeCommand(windows, "alloc", "--hold", "24h", fmt.Sprint(mebibytes)), nil, nil
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	return p
}

var _ = ginkgo.Describe("memory pressure (upstream Windows specs)", labels.Suite("resources"), ginkgo.Serial, func() {
	f := e2e.NewFramework("eviction")

	ginkgo.It("evicts a pod under hard memory pressure, then lifts the node's memory-pressure taint", labels.For("RES-03", corev1.Windows), func(ctx context.Context) {
		fs := e2e.Facts(ctx, f)
		e2e.Nodes(fs, windows, 1)
		if !e2e.Options.Disruptive {
			skips.Skip(skips.NotDisruptive, "RES-03 drives a Windows node into memory pressure")
		}
		cs, ns := f.ClientSet, f.Namespace.Name
		var node facts.Node
		var mem kubelet.Memory
		for _, n := range fs.Select(facts.Query{OS: windows, Real: true, Ready: true}) {
			cfg, err := kubelet.Config(ctx, cs, n.Name)
			framework.ExpectNoError(err)
			obj, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			framework.ExpectNoError(err)
			m, err := kubelet.NodeMemory(obj, cfg)
			framework.ExpectNoError(err, "node %s", n.Name)
			if m.HardEviction.Sign() > 0 {
				node, mem = n, m
				break
			}
		}
		if node.Name == "" {
			skips.Skip(skips.KubeletNotConfigured, "no Windows node's kubelet has a hard eviction threshold for "+kubelet.MemoryAvailable)
		}
		framework.Logf("node %s: %s", node.Name, mem)
		ginkgo.By(fmt.Sprintf("waiting until %s is free of memory pressure", node.Name))
		framework.ExpectNoError(waitNoPressure(ctx, f, node.Name), "node %s stayed under memory pressure before the spec", node.Name)

		guarded := allocPod("guarded", node, guardedUseMiB)
		guarded.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(guardedRequestMiB*mib, resource.BinarySI)}
		e2e.Start(ctx, f, guarded)

		above := mem.Capacity.Value() - mem.HardEviction.Value()
		hogMiB := int(above/mib) + hogExtraMiB
		ginkgo.By(fmt.Sprintf("starting a pod that takes %d MiB, %d MiB more than %s has above its threshold", hogMiB, hogExtraMiB, node.Name))
		hog := allocPod("hog", node, hogMiB)
		_, err := cs.CoreV1().Pods(ns).Create(ctx, hog, metav1.CreateOptions{})
		framework.ExpectNoError(err)

		var seen pressure
		var evicted string
		err = wait.PollUntilContextTimeout(ctx, 2*time.Second, pressureTimeout, true, func(ctx context.Context) (bool, error) {
			if n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); err == nil {
				p := nodePressure(n)
				seen.taint, seen.condition = seen.taint || p.taint, seen.condition || p.condition
			}
			evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + hog.Name + ",reason=Evicted"})
			if err == nil && len(evs.Items) > 0 {
				evicted = evs.Items[0].Message
				return true, nil
			}
			return false, nil
		})
		framework.ExpectNoError(err, "pod %s was not evicted from %s within %s (memory pressure seen: taint %v, condition %v)", hog.Name, node.Name, pressureTimeout, seen.taint, seen.condition)
		framework.Logf("pod %s evicted from %s: %s", hog.Name, node.Name, evicted)
		g, err := cs.CoreV1().Pods(ns).Get(ctx, guarded.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		framework.Logf("pod %s (requests %d MiB, uses %d MiB): %s %s", g.Name, guardedRequestMiB, guardedUseMiB, g.Status.Phase, g.Status.Reason)

		ginkgo.By(fmt.Sprintf("waiting for %s to lift its memory-pressure taint", node.Name))
		err = wait.PollUntilContextTimeout(ctx, 2*time.Second, pressureTimeout, true, func(ctx context.Context) (bool, error) {
			n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			p := nodePressure(n)
			seen.taint, seen.condition = seen.taint || p.taint, seen.condition || p.condition
			return seen.taint && !p.taint && !p.condition, nil
		})
		gomega.Expect(seen.taint).To(gomega.BeTrueBecause("node %s evicted %s, yet never carried the %s taint (condition MemoryPressure seen: %v)", node.Name, hog.Name, corev1.TaintNodeMemoryPressure, seen.condition))
		framework.ExpectNoError(err, "node %s kept its memory-pressure taint or condition for %s after the eviction", node.Name, pressureTimeout)
	})
})
