package scheduling

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/kwok/kwokspec"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
	"github.com/winconform/winconform/images"
)

// Why a simulated node is enough for what these specs check.
const (
	simPlacement = "the placement is the real scheduler's against simulated Windows nodes (kwok); kwok only reports the pods Running"
	simAPI       = "the API server's validation and the real scheduler's placement; the Windows nodes are simulated (kwok) and run nothing"
)

// The legacy OS label of the Kubernetes 1.9 era.
const labelBetaOS = "beta.kubernetes.io/os"

var _ = ginkgo.Describe("scheduling Windows and Linux pods", labels.Suite("scheduling"), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
	f := e2e.NewFramework("scheduling")
	var win *kwokspec.Windows

	ginkgo.BeforeAll(func(ctx context.Context) {
		win = kwokspec.Setup(ctx, "wc-sched", kwokspec.DefaultBuilds...)
	})

	ginkgo.It("places pods with nodeSelector kubernetes.io/os=windows on Windows nodes only", labels.For("SCH-01", corev1.Windows), func(ctx context.Context) {
		win.Require()
		// The pods tolerate every taint (Windows and control plane), so
		// that only the node selector keeps them off Linux nodes.
		var pods []*corev1.Pod
		for i := range 4 {
			pods = append(pods, ospod.Probe(fmt.Sprintf("win-%d", i), windows, win.Tolerate(), tolerateControlPlane()))
		}
		started := e2e.StartPods(ctx, f, pods...)
		for _, p := range started {
			gomega.Expect(win.Has(p.Spec.NodeName)).To(gomega.BeTrue(), "pod %s was placed on %s, not on a Windows node (%v)", p.Name, p.Spec.NodeName, win.Names())
			gomega.Expect(nodeOS(ctx, f.ClientSet, p.Spec.NodeName)).To(gomega.Equal(windows))
			framework.Logf("pod %s: node %s, %s, IP %s", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
		}
		win.Observe(started...)
		win.Mark(simPlacement)
	})

	ginkgo.DescribeTable("the legacy label beta.kubernetes.io/os of old manifests", func(ctx context.Context, os string) {
		var nodes []corev1.Node
		if os == windows {
			win.RequireReal("beta.kubernetes.io/os is set by the kubelet, and a simulated node carries only the labels the harness gave it")
			win.ObserveNodes()
			nodes = win.Nodes
		} else {
			nodes = realNodes(ctx, f, os)
		}
		var carrying []string
		for _, n := range nodes {
			if n.Labels[labelBetaOS] == os {
				carrying = append(carrying, n.Name)
			}
		}
		framework.Logf("%d of %d %s node(s) carry %s=%s: %v", len(carrying), len(nodes), os, labelBetaOS, os, carrying)

		ginkgo.By("scheduling a pod that selects its nodes as a Kubernetes 1.9 manifest does")
		p := ospod.Probe("legacy-selector", os, win.Tolerate())
		p.Spec.NodeSelector = map[string]string{labelBetaOS: os}
		createPod(ctx, f, p)
		var placed *corev1.Pod
		_ = wait.PollUntilContextTimeout(ctx, time.Second, scheduleTimeout, true, func(ctx context.Context) (bool, error) {
			got, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			placed = got
			return got.Spec.NodeName != "" || scheduledCondition(got).Reason == corev1.PodReasonUnschedulable, nil
		})
		if placed != nil && placed.Spec.NodeName != "" {
			gomega.Expect(nodeOS(ctx, f.ClientSet, placed.Spec.NodeName)).To(gomega.Equal(os), "the pod selecting %s=%s landed on node %s", labelBetaOS, os, placed.Spec.NodeName)
		}
		o := verdicts.LegacyLabel(verdicts.LegacySelection{OS: os, Carrying: len(carrying), Nodes: len(nodes), Pod: placed})
		if os != windows {
			// The Linux twin checks the selection machinery; a Linux node
			// says nothing of what Windows nodes carry.
			gomega.Expect(o.Behaviour).To(gomega.Equal(ledger.Works), "%s", o.Evidence)
			return
		}
		e := e2e.Limitation(ctx, f, "SCH-02")
		o.Apply(&e)
		e2e.RecordLimitation(ctx, f, e)
	},
		e2e.OSEntries("SCH-02"),
	)

	ginkgo.It("may place a Windows-image pod without a node selector on a Linux node", labels.ForClaim("SCH-03"), func(ctx context.Context) {
		win.Require()
		// An old-style manifest: a Windows image, no node selector, no
		// spec.os. It tolerates only the simulator's isolation taint, so
		// that the Windows nodes are open to it but for what the documents
		// tell clusters to do (the os=windows taint).
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "no-selector"},
			Spec: corev1.PodSpec{
				Containers:                    []corev1.Container{{Name: "web", Image: images.Ref(images.Nanoserver), Command: []string{"cmd", "/c", "ping -t localhost"}}},
				Tolerations:                   win.Tolerations(),
				TerminationGracePeriodSeconds: ptr.To(int64(1)),
			},
		}
		if !tainted(win.Nodes) {
			ginkgo.By("the Windows nodes are not tainted: giving the pod a preference (not a requirement) for Linux nodes")
			preferOS(linux)(p)
		}
		createPod(ctx, f, p)
		got := waitScheduled(ctx, f.ClientSet, f.Namespace.Name, p.Name)
		gomega.Expect(nodeOS(ctx, f.ClientSet, got.Spec.NodeName)).To(gomega.Equal(linux),
			"the Windows-image pod without a selector went to %s; the scheduler does not look at the image's OS, so it must be placed on a Linux node here", got.Spec.NodeName)
		// What the Linux kubelet makes of it so far, for the log: it cannot run a Windows image.
		now, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, p.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		framework.Logf("Windows-image pod %s was placed on Linux node %s; its container: %s", p.Name, got.Spec.NodeName, containerState(now))
		// What the spec saw is the scheduler's placement onto a Linux
		// node: scheduler, whatever the Windows nodes it passed over are.
		win.Observe(now)
		win.Mark("the scheduler is real and placed the pod on a real Linux node; the Windows nodes it passed over are simulated")
	})

	ginkgo.It("keeps other pods off Windows nodes with the taint os=windows:NoSchedule, and lets tolerating, selecting pods on", labels.For("SCH-04", corev1.Windows), func(ctx context.Context) {
		win.Require()
		for _, n := range win.Nodes {
			if hasTaint(n, ospod.WindowsTaint) {
				continue
			}
			ginkgo.By(fmt.Sprintf("tainting real Windows node %s with os=windows:NoSchedule for this spec", n.Name))
			e2e.ChangeNode(ctx, f.ClientSet, n.Name, []corev1.Taint{ospod.WindowsTaint}, nil)
		}

		ginkgo.By("a pod that selects Windows nodes but does not tolerate the taint stays Pending")
		p := ospod.Probe("untolerated", windows, win.Tolerate(), withoutToleration(ospod.WindowsTaint.Key))
		createPod(ctx, f, p)
		cond := waitUnschedulable(ctx, f.ClientSet, f.Namespace.Name, p.Name)
		// The scheduler names taints only by count ("had untolerated
		// taint(s)"); the pod "tolerated" below differs from this one only
		// by the os=windows toleration, and runs.
		gomega.Expect(cond.Message).To(gomega.ContainSubstring("untolerated taint"), "the scheduler's reason is not a taint")

		ginkgo.By("pods that tolerate nothing and select nothing go to Linux nodes")
		var others []string
		for i := range 3 {
			o := ospod.Probe(fmt.Sprintf("other-%d", i), linux, unsteered(win.Tolerations()...))
			createPod(ctx, f, o)
			others = append(others, o.Name)
		}
		for _, name := range others {
			got := waitScheduled(ctx, f.ClientSet, f.Namespace.Name, name)
			gomega.Expect(win.Has(got.Spec.NodeName)).To(gomega.BeFalse(), "pod %s without a toleration was placed on Windows node %s", name, got.Spec.NodeName)
		}

		ginkgo.By("a pod with the toleration and the node selector runs on a Windows node")
		ok := e2e.StartPods(ctx, f, ospod.Probe("tolerated", windows, win.Tolerate()))[0]
		gomega.Expect(win.Has(ok.Spec.NodeName)).To(gomega.BeTrue(), "pod %s was placed on %s", ok.Name, ok.Spec.NodeName)
		win.Observe(ok)
		win.Mark(simPlacement)
	})

	ginkgo.It("labels Windows nodes with node.kubernetes.io/windows-build, equal to the host's build", labels.For("SCH-05", corev1.Windows), func(ctx context.Context) {
		win.RequireReal("the label and the kernel version of a simulated node are what the harness gave it; only a real Windows kubelet shows that the label equals the host's build")
		win.Refresh(ctx, f.ClientSet)
		win.ObserveNodes()
		buildRe := regexp.MustCompile(`^\d+\.\d+\.\d+$`)
		for _, n := range win.Nodes {
			build, ok := n.Labels[facts.LabelWindowsBuild]
			gomega.Expect(ok).To(gomega.BeTrue(), "node %s has no %s label", n.Name, facts.LabelWindowsBuild)
			gomega.Expect(build).To(gomega.MatchRegexp(buildRe.String()), "node %s: %s=%q", n.Name, facts.LabelWindowsBuild, build)
			kernel := n.Status.NodeInfo.KernelVersion
			gomega.Expect(strings.HasPrefix(kernel, build+".") || kernel == build).To(gomega.BeTrue(),
				"node %s: %s=%s, but the host reports kernel version %s", n.Name, facts.LabelWindowsBuild, build, kernel)
			framework.Logf("node %s: %s=%s, kernel %s, %s", n.Name, facts.LabelWindowsBuild, build, kernel, n.Status.NodeInfo.OSImage)
		}
	})

	ginkgo.It("keeps a pod that selects a Windows build no node has Pending", labels.For("SCH-06", corev1.Windows), func(ctx context.Context) {
		win.Require()
		p := ospod.Probe("no-such-build", windows, win.Tolerate())
		p.Spec.NodeSelector[facts.LabelWindowsBuild] = "10.0.99999"
		createPod(ctx, f, p)
		cond := waitUnschedulable(ctx, f.ClientSet, f.Namespace.Name, p.Name)
		gomega.Expect(cond.Message).To(gomega.ContainSubstring("didn't match Pod's node affinity/selector"))

		ginkgo.By("a pod that selects a build some node has runs on a node of that build")
		builds := win.Builds()
		for i, b := range win.DistinctBuilds() {
			q := ospod.Probe(fmt.Sprintf("build-%d", i), windows, win.Tolerate())
			q.Spec.NodeSelector[facts.LabelWindowsBuild] = b
			got := e2e.StartPods(ctx, f, q)[0]
			gomega.Expect(builds[got.Spec.NodeName]).To(gomega.Equal(b), "pod selecting build %s landed on %s", b, got.Spec.NodeName)
			win.Observe(got)
		}
		win.Mark(simPlacement)
	})

	ginkgo.It("places the pods that name a RuntimeClass by its scheduling section", labels.For("SCH-07", corev1.Windows), func(ctx context.Context) {
		win.Require()
		build := win.Nodes[0].Labels[facts.LabelWindowsBuild]
		gomega.Expect(build).NotTo(gomega.BeEmpty(), "node %s has no build label", win.Nodes[0].Name)
		tolerations := append([]corev1.Toleration{{Key: ospod.WindowsTaint.Key, Operator: corev1.TolerationOpEqual, Value: ospod.WindowsTaint.Value, Effect: ospod.WindowsTaint.Effect}}, win.Tolerations()...)
		rc := &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "winconform-" + f.Namespace.Name},
			// The handler the documents use for process-isolated Windows containers (containerd).
			Handler: "runhcs-wcow-process",
			Scheduling: &nodev1.Scheduling{
				NodeSelector: map[string]string{facts.LabelOS: windows, "kubernetes.io/arch": "amd64", facts.LabelWindowsBuild: build},
				Tolerations:  tolerations,
			},
		}
		e2e.Owned(rc)
		_, err := f.ClientSet.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{})
		framework.ExpectNoError(err, "creating RuntimeClass %s", rc.Name)
		ginkgo.DeferCleanup(framework.IgnoreNotFound(f.ClientSet.NodeV1().RuntimeClasses().Delete), rc.Name, metav1.DeleteOptions{})

		p := ospod.Probe("runtimeclass", windows, unsteered())
		p.Spec.RuntimeClassName = &rc.Name
		got := e2e.StartPods(ctx, f, p)[0]
		gomega.Expect(got.Spec.NodeSelector).To(gomega.HaveKeyWithValue(facts.LabelWindowsBuild, build), "the RuntimeClass's node selector was not merged into the pod")
		gomega.Expect(got.Spec.Tolerations).To(gomega.ContainElement(gomega.HaveField("Key", ospod.WindowsTaint.Key)), "the RuntimeClass's tolerations were not merged into the pod")
		gomega.Expect(win.Builds()[got.Spec.NodeName]).To(gomega.Equal(build), "the pod landed on %s, not a node of build %s", got.Spec.NodeName, build)
		framework.Logf("pod %s (runtimeClassName %s) runs on %s, build %s", got.Name, rc.Name, got.Spec.NodeName, build)
		win.Observe(got)
		win.Mark("RuntimeClass admission and the scheduler are real; the Windows nodes are simulated, so the handler is never run")
	})

	ginkgo.It("accepts spec.os.name windows, which does not by itself steer scheduling", labels.ForClaim("SCH-08"), func(ctx context.Context) {
		win.Require()
		ginkgo.By("a pod with spec.os.name windows and no node selector")
		p := ospod.Probe("os-only", windows, unsteered(win.Tolerations()...))
		created := createPod(ctx, f, p)
		gomega.Expect(created.Spec.OS).NotTo(gomega.BeNil())
		gomega.Expect(string(created.Spec.OS.Name)).To(gomega.Equal(windows))
		if tainted(win.Nodes) {
			got := waitScheduled(ctx, f.ClientSet, f.Namespace.Name, p.Name)
			gomega.Expect(nodeOS(ctx, f.ClientSet, got.Spec.NodeName)).To(gomega.Equal(linux),
				"with the Windows nodes tainted, the scheduler should have placed the Windows pod on a Linux node, not %s", got.Spec.NodeName)
			framework.Logf("pod %s (spec.os.name windows) was scheduled to Linux node %s", p.Name, got.Spec.NodeName)
		}

		ginkgo.By("a pod with spec.os.name windows that tolerates the Windows taints and prefers Linux nodes")
		q := ospod.Probe("os-prefers-linux", windows, win.Tolerate(), preferOS(linux))
		q.Spec.NodeSelector = nil
		createPod(ctx, f, q)
		got := waitScheduled(ctx, f.ClientSet, f.Namespace.Name, q.Name)
		gomega.Expect(nodeOS(ctx, f.ClientSet, got.Spec.NodeName)).To(gomega.Equal(linux),
			"the Windows nodes were open to the pod and it preferred Linux; spec.os.name windows must not pull it to %s", got.Spec.NodeName)
		after := waitKubeletVerdict(ctx, f.ClientSet, f.Namespace.Name, q.Name)
		framework.Logf("the Linux kubelet on %s then: phase %s, reason %q: %s", got.Spec.NodeName, after.Status.Phase, after.Status.Reason, after.Status.Message)
		// The scheduler's placements onto Linux nodes: scheduler.
		win.Observe(after)
		win.Mark("the scheduler is real and placed the pods on real Linux nodes; the Windows nodes it passed over are simulated")
	})

	ginkgo.DescribeTable("a kubelet rejects a pod whose spec.os.name is not its OS", func(ctx context.Context, nodeOSName, podOS string) {
		var node string
		if nodeOSName == windows {
			win.RequireReal("only a kubelet admits or rejects pods, and kwok admits everything")
			node = win.Nodes[0].Name
		} else {
			node = e2e.Nodes(e2e.Facts(ctx, f), linux, 1)[0].Name
		}
		p := ospod.Probe("wrong-os", podOS, unsteered())
		p.Spec.NodeName = node // bound directly: only the kubelet decides
		createPod(ctx, f, p)
		got := waitKubeletVerdict(ctx, f.ClientSet, f.Namespace.Name, p.Name)
		if nodeOSName == windows {
			win.ObserveNodes(node) // its kubelet admitted or rejected the pod
		}
		gomega.Expect(got.Status.Phase).To(gomega.Equal(corev1.PodFailed), "the %s kubelet on %s ran a pod whose spec.os.name is %s", nodeOSName, node, podOS)
		gomega.Expect(got.Status.Reason).To(gomega.Equal("PodOSNotSupported"), "status message: %s", got.Status.Message)
		msg, err := waitEvent(ctx, f.ClientSet, f.Namespace.Name, p.Name, "PodOSNotSupported")
		framework.ExpectNoError(err)
		framework.Logf("the %s kubelet on %s rejected pod %s (spec.os.name %s): status %s %q, event %q", nodeOSName, node, p.Name, podOS, got.Status.Reason, got.Status.Message, msg)
	},
		ginkgo.Entry("a Windows node rejects a Linux pod", labels.For("SCH-09", corev1.Windows), windows, linux),
		ginkgo.Entry("a Linux node rejects a Windows pod (the Linux twin)", labels.For("SCH-09", corev1.Linux), linux, windows),
	)

	ginkgo.It("accepts CPU and memory requests and limits and schedules Windows pods by their requests", labels.ForSimulated("SCH-10"), func(ctx context.Context) {
		win.Require()
		res := corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		}
		p := ospod.Probe("sized", windows, win.Tolerate())
		p.Spec.Containers[0].Resources = res
		got := e2e.StartPods(ctx, f, p)[0]
		win.ObservePartial("enforcement: this spec sees the requests and limits accepted, the QoS class and the scheduler's fit, not a container held to its limits (the spec that enforces them does)", got)
		gomega.Expect(win.Has(got.Spec.NodeName)).To(gomega.BeTrue())
		gomega.Expect(got.Spec.Containers[0].Resources.Requests.Cpu().String()).To(gomega.Equal("250m"))
		gomega.Expect(got.Spec.Containers[0].Resources.Limits.Memory().String()).To(gomega.Equal("256Mi"))
		gomega.Expect(got.Status.QOSClass).To(gomega.Equal(corev1.PodQOSBurstable))

		ginkgo.By("a pod that requests more CPU than any Windows node has stays Pending")
		var most resource.Quantity
		for _, n := range win.Nodes {
			if c := n.Status.Allocatable.Cpu(); c.Cmp(most) > 0 {
				most = c.DeepCopy()
			}
		}
		tooMuch := most.DeepCopy()
		tooMuch.Add(resource.MustParse("1"))
		big := ospod.Probe("too-big", windows, win.Tolerate())
		big.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: tooMuch}}
		createPod(ctx, f, big)
		cond := waitUnschedulable(ctx, f.ClientSet, f.Namespace.Name, big.Name)
		gomega.Expect(cond.Message).To(gomega.ContainSubstring("Insufficient cpu"))
		framework.Logf("a pod requesting %s CPU (the Windows nodes have at most %s) is Pending: %s", tooMuch.String(), most.String(), cond.Message)
		win.Mark("requests and limits are checked by the API server and the real scheduler against the simulated nodes' capacity; nothing enforces them on a simulated node")
	})

	ginkgo.DescribeTable("enforces CPU and memory limits", func(ctx context.Context, os string) {
		var node string
		if os == windows {
			win.RequireReal("limits are enforced by the kubelet and the container runtime")
			node = win.Nodes[0].Name
		} else {
			node = e2e.Nodes(e2e.Facts(ctx, f), linux, 1)[0].Name
		}
		p := ospod.Probe("limited", os, unsteered(win.Tolerations()...))
		p.Spec.NodeSelector = map[string]string{facts.LabelHostname: node}
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", memLimitMiB))},
		}
		pod := e2e.StartPods(ctx, f, p)[0]
		if os == windows {
			win.Observe(pod)
		}

		ginkgo.By(fmt.Sprintf("memory: taking %d MiB under the %d MiB limit works; taking %d MiB is stopped", memUnderMiB, memLimitMiB, memOverMiB))
		e2e.MustTool(ctx, f, pod, "", "alloc", fmt.Sprint(memUnderMiB))
		kills := oomKills(ctx, f, pod)
		stdout, stderr, err := e2e.Tool(ctx, f, pod, "", "alloc", "--hold=2s", fmt.Sprint(memOverMiB))
		gomega.Expect(err).To(gomega.HaveOccurred(), "taking %d MiB under a %d MiB limit succeeded: %s", memOverMiB, memLimitMiB, lastLine(stdout))
		got := allocated(stdout)
		gomega.Expect(got).To(gomega.BeNumerically("<", memOverMiB), "the process reported all %d MiB taken", memOverMiB)
		if os == linux {
			// The kernel's OOM killer ended it: SIGKILL, counted in the container's cgroup.
			gomega.Expect(e2e.ExitStatus(err)).To(gomega.Equal(137), "the allocation ended otherwise than by SIGKILL: %v (%s)", err, stderr)
			after := oomKills(ctx, f, pod)
			gomega.Expect(after).To(gomega.BeNumerically(">", kills), "the container's cgroup counted no OOM kill (before %d, after %d)", kills, after)
			framework.Logf("Linux: the allocation was OOM-killed after %d MiB (exit 137; OOM kills %d -> %d)", got, kills, after)
		} else {
			// A job object's limit makes the allocation fail: Go reports it.
			gomega.Expect(stderr).To(gomega.ContainSubstring("out of memory"), "the allocation ended, but not for memory: %v (%s)", err, stderr)
			framework.Logf("Windows: the allocation failed after %d MiB: %s", got, lastLine(stderr))
		}

		ginkgo.By("CPU: two busy threads get no more than the 500m limit")
		usage := cpuUnderBurn(ctx, f, pod, os)
		gomega.Expect(usage.cores).To(gomega.BeNumerically(">", 0.1), "the busy container used almost no CPU: %s", usage.detail)
		gomega.Expect(usage.cores).To(gomega.BeNumerically("<=", 0.5*1.2), "two busy threads got more than the 500m limit: %s", usage.detail)
		if os == linux {
			gomega.Expect(usage.throttled).To(gomega.BeNumerically(">", 0), "the container's cgroup was never throttled: %s", usage.detail)
		}
		framework.Logf("%s: %s", os, usage.detail)
	},
		e2e.OSEntries("SCH-10"),
	)
})

// The limits the enforcement spec sets and what it takes.
const (
	memLimitMiB = 256
	memUnderMiB = 64
	memOverMiB  = 512
)

// allocated is the most `probe alloc` reported taking before it ended.
func allocated(stdout string) int {
	most := 0
	for _, line := range strings.Split(stdout, "\n") {
		var p struct{ AllocatedMiB int }
		if json.Unmarshal([]byte(line), &p) == nil && p.AllocatedMiB > most {
			most = p.AllocatedMiB
		}
	}
	return most
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// oomKills is the number of OOM kills the container's memory cgroup has
// counted (cgroup v2 memory.events, v1 memory.oom_control).
func oomKills(ctx context.Context, f *framework.Framework, pod *corev1.Pod) int {
	return cgroupCount(ctx, f, pod, "oom_kill", "/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")
}

// cgroupCount reads counter key from the first of the container's cgroup
// files that exists (a "key value" line).
func cgroupCount(ctx context.Context, f *framework.Framework, pod *corev1.Pod, key string, paths ...string) int {
	for _, path := range paths {
		out, _, err := e2e.Tool(ctx, f, pod, "", "cat", path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, key+" "); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				framework.ExpectNoError(err, "%s: %q", path, line)
				return n
			}
		}
	}
	framework.Failf("the container's cgroup shows no %s count in %v", key, paths)
	return 0
}

// cpuUse is what a container got while two threads kept busy.
type cpuUse struct {
	cores     float64 // CPU used, in cores
	throttled int     // periods the cgroup was throttled (Linux)
	detail    string
}

// burnFor is how long cpuUnderBurn keeps the container busy. On Linux the
// use is the process's own CPU time over the burn and the cgroup's count of
// throttled periods: exact, and the CFS quota acts every period, 100 ms
// (cpu.cfs_period_us: the kubelet's cpuCFSQuotaPeriod default), so 3 s are
// 30 periods. On
// Windows it is the kubelet's summary sampled during the burn, whose
// figures refresh every several seconds: 10 s.
var burnFor = map[string]time.Duration{linux: 3 * time.Second, windows: 10 * time.Second}

// cpuUnderBurn keeps two threads busy in the container for burnFor and
// measures what CPU it got: on Linux from the process's own CPU time and
// the cgroup's throttling count, on Windows from the kubelet's summary
// sampled while it burns.
func cpuUnderBurn(ctx context.Context, f *framework.Framework, pod *corev1.Pod, os string) cpuUse {
	burn := func() string {
		return e2e.MustTool(ctx, f, pod, "", "burn", "--threads=2", "--for="+burnFor[os].String())
	}
	if os == linux {
		before := throttled(ctx, f, pod)
		var r struct{ Seconds, CPUSeconds float64 }
		out := burn()
		framework.ExpectNoError(json.Unmarshal([]byte(out), &r), "probe burn printed %q", out)
		after := throttled(ctx, f, pod)
		cores := r.CPUSeconds / r.Seconds
		return cpuUse{cores: cores, throttled: after - before,
			detail: fmt.Sprintf("%.2f CPU seconds in %.1f s (%.2f cores) for two busy threads; throttled %d more periods", r.CPUSeconds, r.Seconds, cores, after-before)}
	}
	done := make(chan string, 1)
	go func() {
		defer ginkgo.GinkgoRecover()
		done <- burn()
	}()
	var samples []float64
	deadline := time.Now().Add(burnFor[os])
	for time.Now().Before(deadline) {
		if s, err := e2e.NodeSummary(ctx, f.ClientSet, pod.Spec.NodeName); err == nil {
			for _, ps := range s.Pods {
				if ps.PodRef.Name == pod.Name && ps.PodRef.Namespace == pod.Namespace && ps.CPU != nil && ps.CPU.UsageNanoCores != nil {
					samples = append(samples, float64(*ps.CPU.UsageNanoCores)/1e9)
				}
			}
		}
		time.Sleep(2 * time.Second)
	}
	<-done
	if len(samples) == 0 {
		framework.Failf("no CPU figure of pod %s came through the summary of node %s while it was busy", pod.Name, pod.Spec.NodeName)
	}
	most := slices.Max(samples)
	return cpuUse{cores: most, detail: fmt.Sprintf("the kubelet's summary showed %v cores while two threads were busy", samples)}
}

// throttled is the number of periods the container's CPU cgroup was throttled.
func throttled(ctx context.Context, f *framework.Framework, pod *corev1.Pod) int {
	return cgroupCount(ctx, f, pod, "nr_throttled", "/sys/fs/cgroup/cpu.stat", "/sys/fs/cgroup/cpu/cpu.stat", "/sys/fs/cgroup/cpu,cpuacct/cpu.stat")
}
