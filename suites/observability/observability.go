package observability

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

const (
	linux   = string(corev1.Linux)
	windows = string(corev1.Windows)

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
			}).WithTimeout(statsTimeout).WithPolling(e2e.SummaryPoll).Should(gomega.Succeed())
			framework.Logf("%s node %s: CPU %s nanocores (%s core-ns in all), memory working set %s bytes, available %s bytes; %d pods in the summary",
				os, n.Name, val(s.Node.CPU.UsageNanoCores), val(s.Node.CPU.UsageCoreNanoSeconds), val(s.Node.Memory.WorkingSetBytes), val(s.Node.Memory.AvailableBytes), len(s.Pods))
		}
	},
		e2e.OSEntries("OBS-01"),
	)

	ginkgo.DescribeTable("a pod's and its container's figures come through the kubelet summary API", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		pod := e2e.StartPods(ctx, f, ospod.Probe("stats", os, ospod.OnNode(node)))[0]
		// The figures show use at the second stats sample of the pod's and
		// the container's cgroups: on Linux cAdvisor samples a cgroup when it
		// appears (no CPU used yet), then 2 to 4 s later on the clusters
		// winconform makes, 10 to 20 s on a kubelet's default (e2e.SummaryPoll).
		// The wait for it is what this spec takes; until cAdvisor has found
		// the cgroups, the kubelet may show the runtime's figures sooner.
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
		}).WithTimeout(statsTimeout).WithPolling(e2e.SummaryPoll).Should(gomega.Succeed())
		framework.Logf("%s pod %s on %s: CPU %s core-ns, memory working set %s bytes; container probe: CPU %s core-ns, working set %s bytes",
			os, pod.Name, node.Name, val(ps.CPU.UsageCoreNanoSeconds), val(ps.Memory.WorkingSetBytes), val(c.CPU.UsageCoreNanoSeconds), val(c.Memory.WorkingSetBytes))
	},
		e2e.OSEntries("OBS-02"),
	)

	ginkgo.DescribeTable("exec runs a command in a container", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		pod := e2e.StartPods(ctx, f, ospod.Probe("exec", os, ospod.OnNode(node)))[0]
		exec := func(args ...string) string {
			stdout, stderr, err := e2epod.Exec(f.TContext(ctx), e2epod.ExecOptions{
				Command: ospod.ProbeCommand(os, args...), Namespace: pod.Namespace, PodName: pod.Name, ContainerName: "probe",
				CaptureStdout: true, CaptureStderr: true,
			})
			framework.ExpectNoError(err, "exec %v in %s pod %s (stderr: %s)", args, os, pod.Name, stderr)
			return stdout
		}
		// The command runs inside this pod's container: it reaches the
		// container's own server on localhost, which answers with the
		// pod's hostname (its name) and IP.
		var answer struct{ Hostname, PodIP string }
		out0 := exec("connect", "--timeout=5s", "http://localhost:8080/json")
		var res struct {
			OK     bool
			Detail struct{ Hostname, PodIP string }
		}
		framework.ExpectNoError(json.Unmarshal([]byte(out0), &res), "probe connect printed %q", out0)
		gomega.Expect(res.OK).To(gomega.BeTrue(), "the exec'd command did not reach the container's server on localhost: %s", out0)
		answer.Hostname, answer.PodIP = res.Detail.Hostname, res.Detail.PodIP
		gomega.Expect(strings.ToLower(answer.Hostname)).To(gomega.Equal(strings.ToLower(pod.Name)), "the server on localhost is not this pod's")
		gomega.Expect(answer.PodIP).To(gomega.Equal(pod.Status.PodIP), "the server on localhost sees another IP than the pod's")

		ginkgo.By("a failing command's exit status and stderr come back")
		_, stderr, err := e2epod.Exec(f.TContext(ctx), e2epod.ExecOptions{
			Command: ospod.ProbeCommand(os, "env", "WINCONFORM_NO_SUCH_VARIABLE"), Namespace: pod.Namespace, PodName: pod.Name, ContainerName: "probe",
			CaptureStdout: true, CaptureStderr: true,
		})
		gomega.Expect(err).To(gomega.HaveOccurred(), "a command that exits 1 reported success")
		gomega.Expect(e2e.ExitStatus(err)).To(gomega.Equal(1), "exit status of the failing command: %v", err)
		gomega.Expect(stderr).To(gomega.ContainSubstring("WINCONFORM_NO_SUCH_VARIABLE is not set"))

		out := exec("whoami")
		var id struct{ UID, GID, Username string }
		framework.ExpectNoError(json.Unmarshal([]byte(out), &id), "probe whoami printed %q", out)
		if os == windows {
			gomega.Expect(id.Username).To(gomega.Or(gomega.HaveSuffix(`\ContainerUser`), gomega.HaveSuffix(`\ContainerAdministrator`)), "the default user of a Windows container")
		} else {
			gomega.Expect(id.UID).NotTo(gomega.BeEmpty())
		}
		framework.Logf("exec in %s pod %s on %s: the container's server on localhost answered as %s (%s); whoami %+v", os, pod.Name, node.Name, answer.Hostname, answer.PodIP, id)
	},
		e2e.OSEntries("OBS-03"),
	)
})
