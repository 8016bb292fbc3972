package observability

import (
	"context"
	"encoding/json"
	"fmt"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

const (
	linux   = "linux"
	windows = "windows"

	// statsTimeout bounds the wait for figures to appear in the summary
	// (the kubelet collects them periodically).
	statsTimeout = 2 * time.Minute
)

func positive(v *uint64) bool { return v != nil && *v > 0 }

func val(v *uint64) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// checkCPU and checkMemory expect live figures.
func checkCPU(g gomega.Gomega, what string, c *cpuStats) {
	g.Expect(c).NotTo(gomega.BeNil(), "%s has no CPU figures", what)
	g.Expect(positive(c.UsageCoreNanoSeconds)).To(gomega.BeTrue(), "%s: usageCoreNanoSeconds %s", what, val(c.UsageCoreNanoSeconds))
	g.Expect(c.UsageNanoCores).NotTo(gomega.BeNil(), "%s: no usageNanoCores", what)
}

func checkMemory(g gomega.Gomega, what string, m *memoryStats) {
	g.Expect(m).NotTo(gomega.BeNil(), "%s has no memory figures", what)
	g.Expect(positive(m.WorkingSetBytes)).To(gomega.BeTrue(), "%s: workingSetBytes %s", what, val(m.WorkingSetBytes))
}

// The kubelet's summary API types.
type (
	summary        = statsv1alpha1.Summary
	cpuStats       = statsv1alpha1.CPUStats
	memoryStats    = statsv1alpha1.MemoryStats
	podStats       = statsv1alpha1.PodStats
	containerStats = statsv1alpha1.ContainerStats
)

var _ = ginkgo.Describe("node and pod statistics, exec", labels.Suite("observability"), func() {
	f := e2e.NewFramework("observability")

	ginkgo.DescribeTable("a node's CPU and memory figures come through the kubelet summary API", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		e2e.Nodes(fs, os, 1)
		for _, n := range fs.Select(facts.Query{OS: os, Real: true, Ready: true}) {
			var s *summary
			gomega.Eventually(ctx, func(g gomega.Gomega) {
				var err error
				s, err = e2e.NodeSummary(ctx, f.ClientSet, n.Name)
				g.Expect(err).NotTo(gomega.HaveOccurred())
				g.Expect(s.Node.NodeName).To(gomega.Equal(n.Name))
				checkCPU(g, "node "+n.Name, s.Node.CPU)
				checkMemory(g, "node "+n.Name, s.Node.Memory)
			}).WithTimeout(statsTimeout).WithPolling(5 * time.Second).Should(gomega.Succeed())
			framework.Logf("%s node %s: CPU %s nanocores (%s core-ns in all), memory working set %s bytes, available %s bytes; %d pods in the summary",
				os, n.Name, val(s.Node.CPU.UsageNanoCores), val(s.Node.CPU.UsageCoreNanoSeconds), val(s.Node.Memory.WorkingSetBytes), val(s.Node.Memory.AvailableBytes), len(s.Pods))
		}
	},
		ginkgo.Entry("windows", labels.Claim("OBS-01"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("OBS-01"), labels.OS(linux), linux),
	)

	ginkgo.DescribeTable("a pod's and its container's figures come through the kubelet summary API", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		pod := e2e.StartPods(ctx, f, ospod.Probe("stats", os, ospod.OnNode(node)))[0]
		var ps podStats
		var c *containerStats
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			s, err := e2e.NodeSummary(ctx, f.ClientSet, node.Name)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			found := false
			for _, p := range s.Pods {
				if p.PodRef.Name == pod.Name && p.PodRef.Namespace == pod.Namespace {
					ps, found = p, true
				}
			}
			g.Expect(found).To(gomega.BeTrue(), "pod %s is not in %s's summary", pod.Name, node.Name)
			checkCPU(g, "pod "+pod.Name, ps.CPU)
			checkMemory(g, "pod "+pod.Name, ps.Memory)
			c = nil
			for i := range ps.Containers {
				if ps.Containers[i].Name == "probe" {
					c = &ps.Containers[i]
				}
			}
			g.Expect(c).NotTo(gomega.BeNil(), "container probe is not in pod %s's figures", pod.Name)
			checkCPU(g, "container probe", c.CPU)
			checkMemory(g, "container probe", c.Memory)
		}).WithTimeout(statsTimeout).WithPolling(5 * time.Second).Should(gomega.Succeed())
		framework.Logf("%s pod %s on %s: CPU %s core-ns, memory working set %s bytes; container probe: CPU %s core-ns, working set %s bytes",
			os, pod.Name, node.Name, val(ps.CPU.UsageCoreNanoSeconds), val(ps.Memory.WorkingSetBytes), val(c.CPU.UsageCoreNanoSeconds), val(c.Memory.WorkingSetBytes))
	},
		ginkgo.Entry("windows", labels.Claim("OBS-02"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("OBS-02"), labels.OS(linux), linux),
	)

	ginkgo.DescribeTable("exec runs a command in a container", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		pod := e2e.StartPods(ctx, f, ospod.Probe("exec", os, ospod.OnNode(node)))[0]
		exec := func(args ...string) string {
			stdout, stderr, err := e2epod.ExecWithOptionsContext(ctx, f, e2epod.ExecOptions{
				Command: ospod.ProbeCommand(os, args...), Namespace: pod.Namespace, PodName: pod.Name, ContainerName: "probe",
				CaptureStdout: true, CaptureStderr: true,
			})
			framework.ExpectNoError(err, "exec %v in %s pod %s (stderr: %s)", args, os, pod.Name, stderr)
			return stdout
		}
		ip := strings.TrimSpace(exec("env", "POD_IP"))
		gomega.Expect(ip).To(gomega.Equal(pod.Status.PodIP), "the container's POD_IP")
		out := exec("whoami")
		var id struct{ UID, GID, Username string }
		framework.ExpectNoError(json.Unmarshal([]byte(out), &id), "probe whoami printed %q", out)
		if os == windows {
			gomega.Expect(id.Username).To(gomega.Or(gomega.HaveSuffix(`\ContainerUser`), gomega.HaveSuffix(`\ContainerAdministrator`)), "the default user of a Windows container")
		} else {
			gomega.Expect(id.UID).NotTo(gomega.BeEmpty())
		}
		framework.Logf("exec in %s pod %s on %s: POD_IP=%s, whoami %+v", os, pod.Name, node.Name, ip, id)
	},
		ginkgo.Entry("windows", labels.Claim("OBS-03"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("OBS-03"), labels.OS(linux), linux),
	)
})
