package limitations

import (
	"context"
	"encoding/json"
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
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
)

// securitySetting is one Linux-only security setting, set on a pod.
type securitySetting struct {
	field string // the path the API server names
	set   func(*corev1.Pod)
	// kept says whether the setting survived in the stored pod (a field a
	// disabled feature gate drops is accepted but not available).
	kept func(*corev1.Pod) bool
}

func podSC(p *corev1.Pod) *corev1.PodSecurityContext {
	if p.Spec.SecurityContext == nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	return p.Spec.SecurityContext
}

func containerSC(p *corev1.Pod) *corev1.SecurityContext {
	c := &p.Spec.Containers[0]
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	return c.SecurityContext
}

var securitySettings = map[string]securitySetting{
	"pod runAsUser": {"spec.securityContext.runAsUser",
		func(p *corev1.Pod) { podSC(p).RunAsUser = ptr.To(int64(1000)) },
		func(p *corev1.Pod) bool { return podSC(p).RunAsUser != nil }},
	"pod runAsGroup": {"spec.securityContext.runAsGroup",
		func(p *corev1.Pod) { podSC(p).RunAsGroup = ptr.To(int64(1000)) },
		func(p *corev1.Pod) bool { return podSC(p).RunAsGroup != nil }},
	"pod supplementalGroups": {"spec.securityContext.supplementalGroups",
		func(p *corev1.Pod) { podSC(p).SupplementalGroups = []int64{1000} },
		func(p *corev1.Pod) bool { return len(podSC(p).SupplementalGroups) > 0 }},
	"pod fsGroup": {"spec.securityContext.fsGroup",
		func(p *corev1.Pod) { podSC(p).FSGroup = ptr.To(int64(1000)) },
		func(p *corev1.Pod) bool { return podSC(p).FSGroup != nil }},
	"pod sysctls": {"spec.securityContext.sysctls",
		func(p *corev1.Pod) { podSC(p).Sysctls = []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}} },
		func(p *corev1.Pod) bool { return len(podSC(p).Sysctls) > 0 }},
	"pod seLinuxOptions": {"spec.securityContext.seLinuxOptions",
		func(p *corev1.Pod) { podSC(p).SELinuxOptions = &corev1.SELinuxOptions{Level: "s0:c123,c456"} },
		func(p *corev1.Pod) bool { return podSC(p).SELinuxOptions != nil }},
	"pod seccompProfile": {"spec.securityContext.seccompProfile",
		func(p *corev1.Pod) {
			podSC(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		},
		func(p *corev1.Pod) bool { return podSC(p).SeccompProfile != nil }},
	"pod appArmorProfile": {"spec.securityContext.appArmorProfile",
		func(p *corev1.Pod) {
			podSC(p).AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
		},
		func(p *corev1.Pod) bool { return podSC(p).AppArmorProfile != nil }},
	"container runAsUser": {"spec.containers[0].securityContext.runAsUser",
		func(p *corev1.Pod) { containerSC(p).RunAsUser = ptr.To(int64(1000)) },
		func(p *corev1.Pod) bool { return containerSC(p).RunAsUser != nil }},
	"container capabilities": {"spec.containers[0].securityContext.capabilities",
		func(p *corev1.Pod) {
			containerSC(p).Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
		},
		func(p *corev1.Pod) bool { return containerSC(p).Capabilities != nil }},
	"container readOnlyRootFilesystem": {"spec.containers[0].securityContext.readOnlyRootFilesystem",
		func(p *corev1.Pod) { containerSC(p).ReadOnlyRootFilesystem = ptr.To(true) },
		func(p *corev1.Pod) bool { return containerSC(p).ReadOnlyRootFilesystem != nil }},
	"container procMount": {"spec.containers[0].securityContext.procMount",
		func(p *corev1.Pod) { containerSC(p).ProcMount = ptr.To(corev1.DefaultProcMount) },
		func(p *corev1.Pod) bool { return containerSC(p).ProcMount != nil }},
	"container allowPrivilegeEscalation": {"spec.containers[0].securityContext.allowPrivilegeEscalation",
		func(p *corev1.Pod) { containerSC(p).AllowPrivilegeEscalation = ptr.To(false) },
		func(p *corev1.Pod) bool { return containerSC(p).AllowPrivilegeEscalation != nil }},
	"container seLinuxOptions": {"spec.containers[0].securityContext.seLinuxOptions",
		func(p *corev1.Pod) { containerSC(p).SELinuxOptions = &corev1.SELinuxOptions{Level: "s0:c123,c456"} },
		func(p *corev1.Pod) bool { return containerSC(p).SELinuxOptions != nil }},
	"container seccompProfile": {"spec.containers[0].securityContext.seccompProfile",
		func(p *corev1.Pod) {
			containerSC(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		},
		func(p *corev1.Pod) bool { return containerSC(p).SeccompProfile != nil }},
}

// hostProcessPod is a HostProcess pod as the documents describe one: host
// network, windowsOptions.hostProcess and a host account.
func hostProcessPod(name string, args ...string) *corev1.Pod {
	p := osPod(name, windows)
	p.Spec.HostNetwork = true
	p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
		HostProcess: ptr.To(true), RunAsUserName: ptr.To(`NT AUTHORITY\SYSTEM`),
	}}
	c := &p.Spec.Containers[0]
	// HostProcess containers see the host's file system; the image's files
	// are under %CONTAINER_SANDBOX_MOUNT_POINT%.
	c.Command = append([]string{`%CONTAINER_SANDBOX_MOUNT_POINT%\probe\probe.exe`}, args...)
	c.Ports, c.ReadinessProbe = nil, nil
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	return p
}

var _ = ginkgo.Describe("Windows pod security", labels.Suite("limitations"), func() {
	f := e2e.NewFramework("win-security")
	// Privileged, so that Pod Security admission does not refuse what the
	// API server's own validation is being asked about.
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.It("refuses privileged containers in Windows pods, naming the field", labels.For("LIM-01", corev1.Windows), func(ctx context.Context) {
		e2e.API("dry-run creates of a Windows pod and its Linux twin")
		p := osPod("privileged", windows)
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		_, err := dryRun(ctx, f, p)
		observed, evidence := ledger.Works, "a Windows pod with securityContext.privileged: true was accepted"
		if err != nil {
			gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "refused, but not by validation: %v", err)
			gomega.Expect(err.Error()).To(gomega.ContainSubstring("spec.containers[0].securityContext.privileged"), "the error does not name the field")
			observed, evidence = ledger.Limited, "refused: "+oneLine(err)
		}
		ginkgo.By("the same container in a Linux pod is accepted (dry run)")
		lp := osPod("privileged", linux)
		lp.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		_, lerr := dryRun(ctx, f, lp)
		framework.ExpectNoError(lerr, "the Linux twin of the privileged pod")
		evidence += "; the same container in a Linux pod is accepted"
		e := e2e.Limitation(ctx, f, "LIM-01")
		e.Observed, e.Evidence = observed, evidence
		e2e.RecordLimitation(ctx, f, e)
	})

	entries := []ginkgo.TableEntry{}
	for _, name := range []string{
		"pod runAsUser", "pod runAsGroup", "pod supplementalGroups", "pod fsGroup", "pod sysctls",
		"pod seLinuxOptions", "pod seccompProfile", "pod appArmorProfile",
		"container runAsUser", "container capabilities", "container readOnlyRootFilesystem", "container procMount",
		"container allowPrivilegeEscalation", "container seLinuxOptions", "container seccompProfile",
	} {
		entries = append(entries, ginkgo.Entry(name, labels.For("LIM-02", corev1.Windows), name))
	}
	ginkgo.DescribeTable("refuses a Linux-only security setting in a Windows pod, naming the field", func(ctx context.Context, name string) {
		s := securitySettings[name]
		gomega.Expect(s.set).NotTo(gomega.BeNil(), "unknown setting %q", name)
		e2e.API("dry-run creates of a Windows pod and its Linux twin with " + s.field)
		p := osPod("linux-only", windows)
		s.set(p)
		got, err := dryRun(ctx, f, p)
		setting := verdicts.LinuxOnlySetting{Field: s.field}
		if err != nil {
			gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "refused, but not by validation: %v", err)
			gomega.Expect(err.Error()).To(gomega.ContainSubstring(s.field), "the error does not name the field")
			setting.Refused = oneLine(err)
		} else {
			setting.WindowsKept = s.kept(got)
		}
		ginkgo.By("the same setting in a Linux pod is accepted (dry run)")
		lp := osPod("linux-only", linux)
		s.set(lp)
		lgot, lerr := dryRun(ctx, f, lp)
		framework.ExpectNoError(lerr, "the Linux twin with %s", s.field)
		setting.LinuxKept = s.kept(lgot)
		e := e2e.Limitation(ctx, f, "LIM-02")
		e.Limitation += " (" + s.field + ")"
		verdicts.LinuxOnly(setting).Apply(&e)
		e2e.RecordLimitation(ctx, f, e)
	}, entries)

	ginkgo.It("accepts a HostProcess pod and refuses one without host networking (API only: no node runs it)", labels.APIOnly("LIM-09"), func(ctx context.Context) {
		e2e.API("the API server's validation of HostProcess pods")
		p := hostProcessPod("hostprocess", "whoami")
		got, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a HostProcess pod")
		wo := got.Spec.SecurityContext.WindowsOptions
		gomega.Expect(wo).NotTo(gomega.BeNil())
		gomega.Expect(wo.HostProcess).To(gomega.HaveValue(gomega.BeTrue()))
		gomega.Expect(wo.RunAsUserName).To(gomega.HaveValue(gomega.Equal(`NT AUTHORITY\SYSTEM`)))
		gomega.Expect(got.Spec.HostNetwork).To(gomega.BeTrue())

		ginkgo.By("a HostProcess pod without host networking is refused, naming the field")
		bad := hostProcessPod("hostprocess-no-hostnetwork", "whoami")
		bad.Spec.HostNetwork = false
		_, err = dryRun(ctx, f, bad)
		gomega.Expect(err).To(gomega.HaveOccurred())
		gomega.Expect(err.Error()).To(gomega.ContainSubstring("spec.hostNetwork"))
		framework.Logf("HostProcess pod %s accepted; without hostNetwork: %s", got.Name, oneLine(err))
	})

	ginkgo.It("runs a HostProcess container as the host account on the host's network", labels.For("LIM-09", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		p := hostProcessPod("hostprocess-run", "whoami")
		ospod.OnNode(node)(p)
		_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		var got *corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err = f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			return got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed, nil
		})
		framework.ExpectNoError(err, "HostProcess pod did not finish: %s", waitingReason(got))
		gomega.Expect(got.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), "HostProcess pod: %s", waitingReason(got))
		gomega.Expect(got.Status.PodIP).To(gomega.Equal(node.InternalIP), "a HostProcess pod has the host's IP")
		logs, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		framework.ExpectNoError(err)
		var id struct{ Username string }
		framework.ExpectNoError(json.Unmarshal([]byte(strings.TrimSpace(string(logs))), &id), "probe whoami printed %q", logs)
		gomega.Expect(strings.ToUpper(id.Username)).To(gomega.Equal(`NT AUTHORITY\SYSTEM`))
	})
})
