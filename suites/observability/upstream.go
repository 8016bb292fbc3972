package observability

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/kubelet"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
)

// What the upstream Windows kubelet stats specs (test/e2e/windows:
// kubelet_stats.go, read at v1.37.2) check: with ten pods on a node, the
// kubelet summary answers within 10 s on average over 5 requests (the
// default scrape timeout of metrics-server and kube-prometheus), with live
// figures for every pod; the node has a boot ID; /metrics/resource has the
// pods' working sets. From 1.37 upstream runs up to ten: where the
// cluster's admission gives each pod a memory overhead (Pod Overhead,
// KEP-688, a RuntimeClass's or a webhook's), as many as the node's
// allocatable memory holds next to its pods and a safety buffer, and fails
// on a node with room for fewer than three.
const (
	statsPods        = 10
	statsPodsLeast   = 3
	statsRequests    = 5
	statsMeanLimit   = 10 * time.Second
	podWorkingSetKey = "pod_memory_working_set_bytes"
	// statsSettle bounds the wait for the node's memory to be free of
	// pods still Terminating from an earlier spec (upstream: 90 s).
	statsSettle = 90 * time.Second
)

// checkPodFigures expects live CPU, memory and log figures for a pod and
// each of its containers (verdicts.PodFigures).
func checkPodFigures(g gomega.Gomega, ps podStats) {
	g.Expect(verdicts.PodFigures(ps)).To(gomega.BeEmpty(), "the figures of pod %s in the kubelet's summary", ps.PodRef.Name)
}

// ours picks the summary's figures of the pods in namespace ns.
func ours(s *summary, ns string) []podStats {
	var out []podStats
	for _, p := range s.Pods {
		if p.PodRef.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// Serial, as upstream's: it fills a node with up to ten pods, sized by
// what the node's other pods leave (statsRoom), and times the summary
// under that load; a parallel spec's pods on the node would undo both.
var _ = ginkgo.Describe("kubelet statistics under load (upstream Windows specs)", labels.Suite("observability"), ginkgo.Serial, func() {
	f := e2e.NewFramework("obs-upstream")

	ginkgo.DescribeTable("with up to ten pods on a node the summary API answers within 10 s on average, with every pod's figures", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		cs, ns := f.ClientSet, f.Namespace.Name
		statsPod := func(i int) *corev1.Pod {
			p := ospod.Probe(fmt.Sprintf("stats-%d", i), os, ospod.OnNode(node))
			// As upstream, each pod has an init container too.
			init := *p.Spec.Containers[0].DeepCopy()
			init.Name, init.Command, init.Ports, init.ReadinessProbe = "init", ospod.ProbeCommand(os, "version"), nil, nil
			p.Spec.InitContainers = []corev1.Container{init}
			return p
		}
		count := statsRoom(ctx, f, node.Name, statsPod(0))
		var pods []*corev1.Pod
		for i := range count {
			pods = append(pods, statsPod(i))
		}
		e2e.StartPods(ctx, f, pods...)

		// A pod's CPU and memory figures show use at its cgroup's second
		// stats sample: on Linux cAdvisor samples a cgroup when it appears
		// (nothing used yet), then 2 to 4 s later on the clusters winconform
		// makes, 10 to 20 s on a kubelet's default (e2e.SummaryPoll), so this
		// waits that long after the pods were created, whatever the polling.
		ginkgo.By("waiting until the summary has figures for every pod (on Linux cAdvisor's second sample of each pod)")
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			s, err := e2e.NodeSummary(ctx, cs, node.Name)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			mine := ours(s, ns)
			g.Expect(mine).To(gomega.HaveLen(count), "pods of %s in the summary of %s", ns, node.Name)
			for _, ps := range mine {
				checkPodFigures(g, ps)
			}
		}).WithTimeout(statsTimeout).WithPolling(e2e.SummaryPoll).Should(gomega.Succeed())

		ginkgo.By(fmt.Sprintf("timing %d summary requests", statsRequests))
		var total time.Duration
		var took []time.Duration
		for i := range statsRequests {
			start := time.Now()
			s, err := e2e.NodeSummary(ctx, cs, node.Name)
			d := time.Since(start)
			framework.ExpectNoError(err, "summary request %d", i+1)
			total += d
			took = append(took, d.Round(time.Millisecond))
			mine := ours(s, ns)
			gomega.Expect(mine).To(gomega.HaveLen(count), "request %d: pods of %s in the summary", i+1, ns)
			for _, ps := range mine {
				checkPodFigures(gomega.Default, ps)
			}
		}
		mean := total / statsRequests
		framework.Logf("%s node %s with %d pods: summary requests took %v, mean %s", os, node.Name, count, took, mean.Round(time.Millisecond))
		gomega.Expect(mean).To(gomega.BeNumerically("<=", statsMeanLimit), "the summary of %s took %s on average over %d requests (%v)", node.Name, mean, statsRequests, took)

		ginkgo.By("the node reports a boot ID")
		n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(n.Status.NodeInfo.BootID).NotTo(gomega.BeEmpty(), "node %s reports no boot ID", node.Name)

		ginkgo.By("/metrics/resource carries the pods' working sets")
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			m, err := kubelet.Metrics(ctx, cs, node.Name, "metrics/resource")
			g.Expect(err).NotTo(gomega.HaveOccurred())
			for _, p := range pods {
				v, found := m.Sum(podWorkingSetKey, map[string]string{"namespace": ns, "pod": p.Name})
				g.Expect(found).To(gomega.BeTrue(), "%s of pod %s is not in /metrics/resource of %s", podWorkingSetKey, p.Name, node.Name)
				g.Expect(v).To(gomega.BeNumerically(">", 0), "%s of pod %s", podWorkingSetKey, p.Name)
			}
		}).WithTimeout(statsTimeout).WithPolling(e2e.SummaryPoll).Should(gomega.Succeed())
		framework.Logf("node %s: boot ID %s; %s has every pod's working set", node.Name, n.Status.NodeInfo.BootID, podWorkingSetKey)
	},
		e2e.OSEntries("OBS-04"),
	)
})

// statsRoom is how many pods like p to put on node: as upstream, ten, or
// as many as fit next to the node's pods when admission gives each a
// memory overhead (a dry run of p shows what admission makes of it);
// waiting up to statsSettle for pods still Terminating to go, and failing
// on room for fewer than three.
func statsRoom(ctx context.Context, f *framework.Framework, node string, p *corev1.Pod) int {
	cs := f.ClientSet
	admitted, err := cs.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	framework.ExpectNoError(err, "dry run of pod %s", p.Name)
	perPod := kubelet.PodMemory(admitted)
	if perPod == 0 {
		return statsPods
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	framework.ExpectNoError(err)
	allocatable := n.Status.Allocatable.Memory().Value()
	var room int
	gomega.Eventually(ctx, func() error {
		on, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return err
		}
		room, err = kubelet.Room(statsPods, statsPodsLeast, allocatable, kubelet.ReservedMemory(on.Items), perPod)
		return err
	}).WithTimeout(statsSettle).WithPolling(5*time.Second).Should(gomega.Succeed(), "node %s: not enough memory for %d pods with the overhead admission gives them (right-size the node, or lower the overhead)", node, statsPodsLeast)
	framework.Logf("node %s: each pod reserves %s with its overhead; %d pods of %d", node, resource.NewQuantity(perPod, resource.BinarySI), room, statsPods)
	return room
}
