package hostprocess

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/kubelet"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/images"
)

const windows = labels.Windows

// The host accounts a HostProcess container may run as.
const (
	system       = `NT AUTHORITY\SYSTEM`
	localService = `NT AUTHORITY\Local Service`
)

// sandboxProbe is the probe as a HostProcess container starts it: its
// image's files are under %CONTAINER_SANDBOX_MOUNT_POINT% on the host.
var sandboxProbe = `%CONTAINER_SANDBOX_MOUNT_POINT%` + strings.TrimPrefix(images.ProbeWindowsPath, "C:")

// finishTimeout bounds a HostProcess pod's run (upstream: 3 minutes).
const finishTimeout = 3 * time.Minute

// The kubelet's HostProcess counters (pkg/kubelet/metrics), by container_type.
const (
	startedTotal = "kubelet_started_host_process_containers_total"
	errorsTotal  = "kubelet_started_host_process_containers_errors_total"
)

// hostProcessPod is a HostProcess pod on node, run as user, whose
// container runs `probe args...` once.
func hostProcessPod(name string, node facts.Node, user string, args ...string) *corev1.Pod {
	p := ospod.Probe(name, windows, ospod.OnNode(node))
	p.Spec.HostNetwork = true
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
		HostProcess: ptr.To(true), RunAsUserName: ptr.To(user)}}
	c := &p.Spec.Containers[0]
	c.Command, c.Ports, c.ReadinessProbe, c.Env = append([]string{sandboxProbe}, args...), nil, nil, nil
	return p
}

// withInit adds an init container that runs `probe args...`.
func withInit(p *corev1.Pod, args ...string) *corev1.Pod {
	init := *p.Spec.Containers[0].DeepCopy()
	init.Name, init.Command = "init", append([]string{sandboxProbe}, args...)
	p.Spec.InitContainers = append(p.Spec.InitContainers, init)
	return p
}

// finish creates p and waits until it Succeeded or Failed.
func finish(ctx context.Context, f *framework.Framework, p *corev1.Pod) *corev1.Pod {
	_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err, "creating HostProcess pod %s", p.Name)
	got, err := e2e.AwaitPod(ctx, f.ClientSet, f.Namespace.Name, p.Name, finishTimeout, e2e.PodEnded)
	framework.ExpectNoError(err, "HostProcess pod %s did not finish: %s", p.Name, e2e.PodState(got))
	return got
}

// logs is what container printed.
func logs(ctx context.Context, f *framework.Framework, pod, container string) string {
	out, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	framework.ExpectNoError(err, "logs of %s/%s", pod, container)
	return strings.TrimSpace(string(out))
}

// counts are the kubelet's HostProcess counters on a node.
type counts struct{ started, startedInit, errors, errorsInit float64 }

func hostProcessCounts(ctx context.Context, f *framework.Framework, node string) (counts, error) {
	m, err := kubelet.Metrics(ctx, f.ClientSet, node, "metrics")
	if err != nil {
		return counts{}, err
	}
	// A counter no container has moved yet is absent: zero.
	get := func(name, typ string) float64 {
		v, _ := m.Sum(name, map[string]string{"container_type": typ})
		return v
	}
	return counts{
		started: get(startedTotal, "container"), startedInit: get(startedTotal, "init_container"),
		errors: get(errorsTotal, "container"), errorsInit: get(errorsTotal, "init_container"),
	}, nil
}

var _ = ginkgo.Describe("HostProcess containers", labels.Suite("hostprocess"), func() {
	f := e2e.NewFramework("hostprocess")
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.It("run their command from the sandbox mount point, as the host account asked for, and reach the API server with their service account", labels.For("HPC-01", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		for i, user := range []string{system, localService} {
			ginkgo.By("a HostProcess pod run as " + user)
			p := withInit(hostProcessPod(fmt.Sprintf("as-%d", i), node, user, "whoami"), "env", "CONTAINER_SANDBOX_MOUNT_POINT")
			got := finish(ctx, f, p)
			gomega.Expect(got.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), "HostProcess pod %s (%s): %s", p.Name, user, e2e.PodState(got))
			gomega.Expect(got.Status.PodIP).To(gomega.Equal(node.InternalIP), "a HostProcess pod has its host's IP")
			mount := logs(ctx, f, p.Name, "init")
			gomega.Expect(mount).NotTo(gomega.BeEmpty(), "CONTAINER_SANDBOX_MOUNT_POINT is empty in %s", p.Name)
			var id struct{ Username string }
			out := logs(ctx, f, p.Name, p.Spec.Containers[0].Name)
			framework.ExpectNoError(json.Unmarshal([]byte(out), &id), "probe whoami printed %q", out)
			gomega.Expect(strings.ToUpper(id.Username)).To(gomega.Equal(strings.ToUpper(user)), "HostProcess pod %s asked to run as %s", p.Name, user)
			framework.Logf("HostProcess pod %s on %s: %s started from %s, ran as %s", p.Name, node.Name, sandboxProbe, mount, id.Username)
		}

		ginkgo.By("a HostProcess pod asks the API server who its service account token is")
		p := hostProcessPod("in-cluster", node, system, "apiuser")
		got := finish(ctx, f, p)
		out := logs(ctx, f, p.Name, p.Spec.Containers[0].Name)
		gomega.Expect(got.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), "probe apiuser in %s: %s; output %q", p.Name, e2e.PodState(got), out)
		var who struct{ Server, Dir, Username string }
		framework.ExpectNoError(json.Unmarshal([]byte(out), &who), "probe apiuser printed %q", out)
		want := fmt.Sprintf("system:serviceaccount:%s:default", f.Namespace.Name)
		gomega.Expect(who.Username).To(gomega.Equal(want), "the API server knows the HostProcess pod's token as another identity")
		framework.Logf("HostProcess pod %s reached %s with the token in %s, as %s", p.Name, who.Server, who.Dir, who.Username)
	})

	// Serial: it compares the node's HostProcess counters before and after
	// its own pods, and another spec's HostProcess pod on the node (HPC-01's,
	// LIM-09's) would move them too.
	ginkgo.It("are counted by the kubelet, started and failed, containers and init containers", labels.For("HPC-02", corev1.Windows), ginkgo.Serial, func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		before, err := hostProcessCounts(ctx, f, node.Name)
		framework.ExpectNoError(err, "the kubelet metrics of %s", node.Name)

		ginkgo.By("a HostProcess pod whose init container and container start")
		ok := finish(ctx, f, withInit(hostProcessPod("starts", node, system, "version"), "version"))
		gomega.Expect(ok.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), e2e.PodState(ok))

		ginkgo.By("HostProcess pods whose init container, then container, runs as a user that does not exist")
		badInit := withInit(hostProcessPod("bad-init", node, system, "version"), "version")
		badInit.Spec.InitContainers[0].SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("bad-user-name")}}
		badMain := hostProcessPod("bad-container", node, system, "version")
		badMain.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("bad-user-name")}}
		for _, p := range []*corev1.Pod{badInit, badMain} {
			got := finish(ctx, f, p)
			gomega.Expect(got.Status.Phase).To(gomega.Equal(corev1.PodFailed), "pod %s, run as a user that does not exist: %s", p.Name, e2e.PodState(got))
		}

		var after counts
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			after, err = hostProcessCounts(ctx, f, node.Name)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(after.started).To(gomega.BeNumerically(">", before.started), "%s{container_type=container}", startedTotal)
			g.Expect(after.startedInit).To(gomega.BeNumerically(">", before.startedInit), "%s{container_type=init_container}", startedTotal)
			g.Expect(after.errors).To(gomega.BeNumerically(">", before.errors), "%s{container_type=container}", errorsTotal)
			g.Expect(after.errorsInit).To(gomega.BeNumerically(">", before.errorsInit), "%s{container_type=init_container}", errorsTotal)
		}).WithTimeout(time.Minute).WithPolling(5 * time.Second).Should(gomega.Succeed())
		framework.Logf("node %s HostProcess counters before %+v, after %+v", node.Name, before, after)
	})
})
