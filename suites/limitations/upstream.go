package limitations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/framework/verdicts"
)

// What the upstream specs (test/e2e/windows: security_context.go,
// hyperv.go; test/e2e/common/node/lifecycle_hook.go's ContainerStopSignals
// specs, with the Windows signals of the API's validation) check of the
// limits of Windows pods, read at v1.37.2.

// stopSignalField is the field the API server names when it refuses a stop signal.
const stopSignalField = "spec.containers[0].lifecycle.stopSignal"

// The stop signals the API server accepts for Windows containers (every
// other is refused), and two it refuses there but accepts for Linux ones.
var (
	windowsStopSignals = []corev1.Signal{corev1.SIGTERM, corev1.SIGKILL}
	linuxOnlySignals   = []corev1.Signal{corev1.SIGQUIT, corev1.SIGUSR1}
)

// nonRootRefusal is what the kubelet says when it refuses to run
// ContainerAdministrator under runAsNonRoot.
const nonRootRefusal = "will be regarded as root identity and will break non-root policy"

// hostProcessTimeout bounds a HostProcess pod's run on a Windows node.
const hostProcessTimeout = 3 * time.Minute

func withStopSignal(os string, sig corev1.Signal) *corev1.Pod {
	p := osPod("stop-signal", os)
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{StopSignal: &sig}
	return p
}

func stopSignal(p *corev1.Pod) *corev1.Signal {
	if l := p.Spec.Containers[0].Lifecycle; l != nil {
		return l.StopSignal
	}
	return nil
}

// causeFields lists the fields an API error names.
func causeFields(err error) []string {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		return nil
	}
	var out []string
	for _, c := range se.ErrStatus.Details.Causes {
		out = append(out, c.Field)
	}
	return out
}

var _ = ginkgo.Describe("Windows stop signals", labels.Suite("limitations"), func() {
	f := e2e.NewFramework("win-stop-signals")

	ginkgo.It("accepts the stop signals SIGTERM and SIGKILL for Windows containers and refuses SIGQUIT and SIGUSR1", labels.For("SIG-01", corev1.Windows), func(ctx context.Context) {
		got, err := dryRun(ctx, f, withStopSignal(windows, corev1.SIGTERM))
		framework.ExpectNoError(err, "the API server refused a Windows pod with stop signal SIGTERM")
		if stopSignal(got) == nil {
			// A field behind a disabled gate is dropped before validation:
			// every signal would pass, which shows nothing.
			v, _ := f.ClientSet.Discovery().ServerVersion()
			skips.Skip(skips.FeatureGateOff, fmt.Sprintf("ContainerStopSignals: the API server (%s) dropped lifecycle.stopSignal from the pod it accepted (the gate is alpha and off by default from 1.33 through 1.37)", v))
		}
		e2e.API("dry-run creates of Windows pods with stop signals, and of their Linux twins")
		for _, sig := range windowsStopSignals {
			got, err := dryRun(ctx, f, withStopSignal(windows, sig))
			framework.ExpectNoError(err, "the API server refused a Windows pod with stop signal %s", sig)
			gomega.Expect(stopSignal(got)).To(gomega.HaveValue(gomega.Equal(sig)), "the accepted pod does not keep stop signal %s", sig)
		}
		for _, sig := range linuxOnlySignals {
			_, err := dryRun(ctx, f, withStopSignal(windows, sig))
			gomega.Expect(err).To(gomega.HaveOccurred(), "the API server accepted a Windows pod with stop signal %s", sig)
			gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrueBecause("refused, but not by validation: %v", err))
			gomega.Expect(causeFields(err)).To(gomega.ContainElement(stopSignalField), "the refusal does not name %s: %v", stopSignalField, err)
			framework.Logf("stop signal %s in a Windows pod: %s", sig, oneLine(err))

			ginkgo.By(fmt.Sprintf("the same stop signal %s in a Linux pod is accepted", sig))
			got, err := dryRun(ctx, f, withStopSignal(linux, sig))
			framework.ExpectNoError(err, "the API server refused a Linux pod with stop signal %s: the refusal above is not about Windows", sig)
			gomega.Expect(stopSignal(got)).To(gomega.HaveValue(gomega.Equal(sig)))
		}
	})
})

var _ = ginkgo.Describe("Windows pods the upstream specs check", labels.Suite("limitations"), func() {
	f := e2e.NewFramework("win-upstream")
	// Linux-only settings and HostProcess pods: what is checked is the
	// kubelet's answer, not Pod Security admission's.
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.It("ignores Linux-only security fields of a Windows pod that names no OS, and refuses runAsNonRoot for ContainerAdministrator", labels.For("LIM-10", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		cs, ns := f.ClientSet, f.Namespace.Name

		ginkgo.By("a pod without spec.os, with seLinuxOptions, runAsUser and runAsGroup, on a Windows node")
		// Without spec.os the API server cannot tell a Windows pod, so it
		// lets the Linux-only fields through; the Windows kubelet must
		// ignore them.
		p := osPod("linux-fields", windows)
		ospod.OnNode(node)(p)
		p.Spec.OS = nil
		p.Spec.SecurityContext = &corev1.PodSecurityContext{
			SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c24,c9"},
			RunAsUser:      ptr.To(int64(999)), RunAsGroup: ptr.To(int64(999)),
		}
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c24,c9"}}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a pod without spec.os with Linux-only fields")

		ginkgo.By("a pod with runAsNonRoot whose containers run as ContainerAdministrator")
		q := osPod("nonroot-admin", windows)
		ospod.OnNode(node)(q)
		q.Spec.SecurityContext = &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerAdministrator")},
		}
		_, err = cs.CoreV1().Pods(ns).Create(ctx, q, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a Windows pod with runAsNonRoot and ContainerAdministrator")

		fatal := []string{"CreateContainerError", "RunContainerError", "CreateContainerConfigError", "CrashLoopBackOff", "StartError"}
		ran, got := outcome(ctx, f, p.Name, fatal...)
		why := waitingReason(got) + " " + podEvents(ctx, f, p.Name)
		nonRootRan, gotQ := outcome(ctx, f, q.Name, fatal...)
		whyQ := waitingReason(gotQ) + " " + podEvents(ctx, f, q.Name)
		if ctx.Err() != nil {
			return // interrupted: nothing was observed
		}
		gomega.Expect(nonRootRan).To(gomega.BeFalseBecause("the kubelet of %s ran ContainerAdministrator in a pod with runAsNonRoot", node.Name))
		nonRootRefused := strings.Contains(whyQ, nonRootRefusal)

		e := e2e.Limitation(ctx, f, "LIM-10")
		switch {
		case !nonRootRefused:
			e.Observed, e.Evidence = ledger.Unobserved, fmt.Sprintf("the runAsNonRoot pod with ContainerAdministrator on %s neither ran nor was refused for its user within %s: %s", node.Name, startTimeout, whyQ)
		case ran:
			e.Observed, e.Evidence = ledger.Limited, fmt.Sprintf("on %s a pod without spec.os with seLinuxOptions, runAsUser 999 and runAsGroup 999 ran (the fields were ignored); runAsNonRoot with ContainerAdministrator was refused: %s",
				node.Name, strings.TrimSpace(whyQ))
		case linuxFieldRefusal(why):
			e.Observed, e.Evidence = ledger.Works, fmt.Sprintf("on %s a pod without spec.os did not run because of its Linux-only fields (they took effect): %s", node.Name, why)
		default:
			e.Observed, e.Evidence = ledger.Unobserved, fmt.Sprintf("the pod with Linux-only fields on %s did not run within %s, not because of those fields: %s", node.Name, startTimeout, why)
		}
		e2e.RecordLimitation(ctx, f, e)
	})

	ginkgo.It("runs a pod in a Hyper-V utility VM through a RuntimeClass with handler runhcs-wcow-hypervisor, where the cluster offers one", labels.For("LIM-11", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		cs, ns := f.ClientSet, f.Namespace.Name
		rcs, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		rcName := ""
		for _, rc := range rcs.Items {
			if rc.Handler == hypervHandler {
				rcName = rc.Name
				break
			}
		}
		if rcName == "" {
			// As upstream: the cluster's operator installs the RuntimeClass
			// where the nodes' containerd has the handler.
			skips.Skip(skips.NoRuntimeClass, fmt.Sprintf("no RuntimeClass has handler %s, so the cluster offers no Hyper-V isolation to check", hypervHandler))
		}
		p := osPod("hyperv", windows)
		ospod.OnNode(node)(p)
		p.Spec.RuntimeClassName = &rcName
		_, err = cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ran, got := outcome(ctx, f, p.Name, "CreateContainerError", "RunContainerError", "CreateContainerConfigError", "CrashLoopBackOff", "FailedCreatePodSandBox")
		reason := waitingReason(got) + " " + podEvents(ctx, f, p.Name)
		if ctx.Err() != nil {
			return
		}
		e := e2e.Limitation(ctx, f, "LIM-11")
		run := verdicts.HyperVRun{
			What: fmt.Sprintf("the pod with RuntimeClass %s (handler %s) on %s", rcName, hypervHandler, node.Name),
			Ran:  ran, Refused: refusedHandler(reason), Reason: reason,
		}
		if ran {
			run.Counted = true
			run.VMs, run.VMErr = utilityVMs(ctx, f, node.Name)
		}
		verdicts.HyperV(run).Apply(&e)
		e2e.RecordLimitation(ctx, f, e)
	})
})

// linuxFieldRefusal says whether a pod's state and events blame its
// Linux-only security fields.
func linuxFieldRefusal(reason string) bool {
	r := strings.ToLower(reason)
	for _, sign := range []string{"selinux", "runasuser", "runasgroup", "run as user", "run as group"} {
		if strings.Contains(r, sign) {
			return true
		}
	}
	return false
}

// utilityVMs counts the Hyper-V utility VMs of containerd on node, from a
// HostProcess pod there (verdicts.UtilityVMScript, verdicts.UtilityVMs);
// an error when they could not be counted.
func utilityVMs(ctx context.Context, f *framework.Framework, node string) (int, error) {
	p := hostProcessPod("count-utility-vms")
	p.Spec.NodeSelector[facts.LabelHostname] = node
	p.Spec.Containers[0].Command = []string{`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-NonInteractive", "-Command", verdicts.UtilityVMScript}
	_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	var got *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, hostProcessTimeout, true, func(ctx context.Context) (bool, error) {
		got, err = f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed, nil
	})
	if err != nil {
		return 0, fmt.Errorf("the HostProcess pod did not finish within %s: %s", hostProcessTimeout, waitingReason(got))
	}
	logs, _ := f.ClientSet.CoreV1().Pods(f.Namespace.Name).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	exit := int32(-1)
	for _, st := range got.Status.ContainerStatuses {
		if t := st.State.Terminated; t != nil {
			exit = t.ExitCode
		}
	}
	return verdicts.UtilityVMs(got.Status.Phase, exit, string(logs))
}
