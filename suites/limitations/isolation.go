package limitations

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
	"github.com/winconform/winconform/images"
)

// hypervHandler is the containerd runtime handler for Hyper-V isolated
// Windows containers (hcsshim's runhcs-wcow-hypervisor), where one is configured.
const hypervHandler = "runhcs-wcow-hypervisor"

// startTimeout bounds the wait for a container on a real Windows node to
// run or to fail for good (image pulls of Windows base images are slow).
const startTimeout = 5 * time.Minute

// outcome waits until the pod is Ready, or its first container is stuck
// for a reason in fatal, and returns whether it ran and the last state.
func outcome(ctx context.Context, f *framework.Framework, name string, fatal ...string) (bool, *corev1.Pod) {
	var pod *corev1.Pod
	ran := false
	_ = wait.PollUntilContextTimeout(ctx, 3*time.Second, startTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pod = p
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ran = true
				return true, nil
			}
		}
		if p.Status.Phase == corev1.PodFailed {
			return true, nil
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				for _, r := range fatal {
					if w.Reason == r && (cs.RestartCount > 0 || r != "CrashLoopBackOff") {
						return true, nil
					}
				}
			}
		}
		return false, nil
	})
	return ran, pod
}

// podEvents is the pod's warning events, for the ledger.
func podEvents(ctx context.Context, f *framework.Framework, name string) string {
	evs, err := f.ClientSet.CoreV1().Events(f.Namespace.Name).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return ""
	}
	var out []string
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return strings.Join(out, "; ")
}

// refusedHandler says whether a pod's state and events show that the node
// refused its RuntimeClass handler (the positive signature of LIM-03).
func refusedHandler(reason string) bool {
	r := strings.ToLower(reason)
	return strings.Contains(r, hypervHandler) || strings.Contains(r, "runtime handler") || strings.Contains(r, "no runtime for")
}

// buildMismatch says whether a pod's state and events show that its image
// did not run because of its Windows build (the signature of LIM-04).
func buildMismatch(reason string) bool {
	r := strings.ToLower(reason)
	for _, sign := range []string{"no match for platform", "does not match the host", "operating system of the container does not match", "0xc0370101"} {
		if strings.Contains(r, sign) {
			return true
		}
	}
	return false
}

var _ = ginkgo.Describe("Windows container isolation", labels.Suite("limitations"), func() {
	f := e2e.NewFramework("win-isolation")
	// The utility VMs are counted from a HostProcess pod.
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.It("runs containers with process isolation only, not Hyper-V isolation", labels.For("LIM-03", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		rc := &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "winconform-hyperv-" + f.Namespace.Name},
			Handler:    hypervHandler,
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{facts.LabelOS: windows, facts.LabelWindowsBuild: node.WindowsBuild}},
		}
		e2e.Owned(rc)
		_, err := f.ClientSet.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ginkgo.DeferCleanup(framework.IgnoreNotFound(f.ClientSet.NodeV1().RuntimeClasses().Delete), rc.Name, metav1.DeleteOptions{})
		p := ospod.Probe("hyperv", windows, ospod.OnNode(node))
		p.Spec.RuntimeClassName = &rc.Name
		_, err = f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ran, got := outcome(ctx, f, p.Name, "CreateContainerError", "RunContainerError", "CreateContainerConfigError", "CrashLoopBackOff")
		reason := waitingReason(got) + " " + podEvents(ctx, f, p.Name)
		if ctx.Err() != nil {
			return // interrupted: nothing was observed
		}
		run := verdicts.HyperVRun{
			What: fmt.Sprintf("a pod with RuntimeClass handler %s on %s (build %s)", hypervHandler, node.Name, node.WindowsBuild),
			Ran:  ran, Refused: refusedHandler(reason), Reason: reason,
		}
		if ran {
			// Running says nothing of how it is isolated: the utility VM
			// it runs in does (or its absence: process isolation).
			run.Counted = true
			run.VMs, run.VMErr = utilityVMs(ctx, f, node.Name)
		}
		e := e2e.Limitation(ctx, f, "LIM-03")
		verdicts.HyperV(run).Apply(&e)
		e2e.RecordLimitation(ctx, f, e)
	})

	ginkgo.It("runs only container images of the host's Windows build", labels.For("LIM-04", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		hostRel, err := images.ReleaseForBuild(node.WindowsBuild)
		framework.ExpectNoError(err, "node %s", node.Name)
		// An image of another release: a newer one when there is one (a
		// host never runs newer images), else an older one.
		var other images.WindowsRelease
		for _, r := range images.WindowsReleases() {
			if r.Name != hostRel.Name && (other.Name == "" || r.Build > hostRel.Build) {
				other = r
			}
		}
		image := images.Ref(images.Nanoserver + "-" + other.Name)
		ginkgo.By(fmt.Sprintf("running %s (%s, build %s) on %s (build %s)", image, other.Name, other.Build, node.Name, node.WindowsBuild))
		p := ospod.Probe("other-build", windows, ospod.OnNode(node))
		c := &p.Spec.Containers[0]
		c.Image, c.Command, c.Ports, c.ReadinessProbe = image, []string{"cmd", "/c", "ping -t localhost"}, nil, nil
		_, err = f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ran, got := outcome(ctx, f, p.Name, "ErrImagePull", "ImagePullBackOff", "CreateContainerError", "RunContainerError", "CrashLoopBackOff")
		reason := waitingReason(got) + " " + podEvents(ctx, f, p.Name)
		e := e2e.Limitation(ctx, f, "LIM-04")
		switch {
		case ran:
			e.Observed, e.Evidence = ledger.Works, fmt.Sprintf("%s (build %s) ran on %s (build %s)", image, other.Build, node.Name, node.WindowsBuild)
		case buildMismatch(reason):
			e.Observed, e.Evidence = ledger.Limited, fmt.Sprintf("%s (build %s) did not run on %s (build %s): %s", image, other.Build, node.Name, node.WindowsBuild, reason)
		default:
			e.Observed, e.Evidence = ledger.Unobserved, fmt.Sprintf("%s did not run on %s, but not for its build: %s", image, node.Name, reason)
		}
		e2e.RecordLimitation(ctx, f, e)
	})
})
