package node

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

// rebootDelay is how long after the HostProcess pod asks the machine
// restarts (upstream: shutdown -r -t 30).
const rebootDelay = 30 * time.Second

// podBackTimeout bounds the wait for the Windows pod to run again after
// its node is back.
const podBackTimeout = 5 * time.Minute

var _ = ginkgo.Describe("node reboot (upstream Windows specs)", labels.Suite("node"), ginkgo.Serial, func() {
	f := e2e.NewFramework("node-reboot")
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.It("comes back Ready after a reboot from a HostProcess pod, and its pods run and answer again", labels.For("NODE-02", corev1.Windows), func(ctx context.Context) {
		node, m := machine(ctx, f, "NODE-02")
		cs, ns := f.ClientSet, f.Namespace.Name
		client := e2e.Nodes(e2e.Facts(ctx, f), linux, 1)[0]
		n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		bootID := n.Status.NodeInfo.BootID
		booted, err := lastBoot(ctx, m)
		framework.ExpectNoError(err, "the boot time of %s", m.Name())

		pods := e2e.StartPods(ctx, f, ospod.Probe("survivor", windows, ospod.OnNode(node)), ospod.Probe("client", linux, ospod.OnNode(client)))
		win, lin := pods[0], pods[1]
		url := func(p *corev1.Pod) string { return fmt.Sprintf("http://%s:%d/json", p.Status.PodIP, ospod.HTTPPort) }
		r := e2e.Connect(ctx, f, lin, url(win))[0]
		gomega.Expect(r.OK).To(gomega.BeTrue(), "before the reboot: %s", r.Describe())
		restarts := win.Status.ContainerStatuses[0].RestartCount

		ginkgo.By(fmt.Sprintf("rebooting %s from a HostProcess pod", node.Name))
		reboot := hostProcess("reboot", node, `C:\Windows\System32\shutdown.exe`, "/r", "/t", fmt.Sprint(int(rebootDelay.Seconds())), "/c", "winconform NODE-02: reboot from a HostProcess pod")
		got := finish(ctx, f, reboot)
		gomega.Expect(got.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), "the HostProcess pod that asks for the reboot")

		newID, again := waitRebooted(ctx, f, node.Name, m, bootID, booted)
		framework.Logf("node %s is back: boot ID %s (was %s); the machine booted at %s (was %s)", node.Name, newID, bootID, again, booted)

		ginkgo.By(fmt.Sprintf("pod %s runs again on %s", win.Name, node.Name))
		err = wait.PollUntilContextTimeout(ctx, 5*time.Second, podBackTimeout, true, func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, win.Name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return false, nil
			}
			win = p
			st := p.Status.ContainerStatuses[0]
			return st.RestartCount > restarts && st.Ready && p.Spec.NodeName == node.Name, nil
		})
		framework.ExpectNoError(err, "pod %s did not run again after the reboot of %s (restarts %d, before %d)", win.Name, node.Name, win.Status.ContainerStatuses[0].RestartCount, restarts)
		gomega.Expect(win.Status.Phase).To(gomega.Equal(corev1.PodRunning))
		r = e2e.Connect(ctx, f, lin, url(win))[0]
		gomega.Expect(r.OK).To(gomega.BeTrue(), "after the reboot: %s", r.Describe())
		framework.Logf("pod %s on %s: restarted %d time(s) across the reboot, answers at %s", win.Name, node.Name, win.Status.ContainerStatuses[0].RestartCount-restarts, win.Status.PodIP)
	})
})
