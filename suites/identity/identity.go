package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/podexec"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/framework/verdicts"
	"github.com/winconform/winconform/images"
)

const (
	linux   = string(corev1.Linux)
	windows = string(corev1.Windows)
)

// GMSACredSpecEnv names the GMSACredentialSpec (windows.k8s.io/v1, cluster
// scoped) the gMSA spec uses; without it the spec skips: a gMSA needs an
// Active Directory domain, Windows nodes joined to it, the gMSA webhook and a
// credential spec, none of which the harness can make.
const GMSACredSpecEnv = "WINCONFORM_GMSA_CREDSPEC"

// gmsaTimeout bounds the wait for a container's secure channel to the
// domain's controller.
const gmsaTimeout = 2 * time.Minute

var gmsaResource = schema.GroupVersionResource{Group: "windows.k8s.io", Version: "v1", Resource: "gmsacredentialspecs"}

// identity is what `probe whoami` prints.
type identity struct {
	UID      string `json:"uid"`
	GID      string `json:"gid"`
	Username string `json:"username"`
}

// whoami runs `probe whoami` in the pod's probe container.
func whoami(ctx context.Context, f *framework.Framework, pod *corev1.Pod) identity {
	stdout := e2e.MustTool(ctx, f, pod, "probe", "whoami")
	var id identity
	framework.ExpectNoError(json.Unmarshal([]byte(stdout), &id), "probe whoami printed %q", stdout)
	return id
}

// asWindowsUser sets the pod's runAsUserName.
func asWindowsUser(user string) ospod.Option {
	return func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: &user}}
	}
}

var _ = ginkgo.Describe("container identity", labels.Suite("identity"), func() {
	f := e2e.NewFramework("identity")

	ginkgo.DescribeTable("runAsUserName sets the user a Windows container runs as", func(ctx context.Context, user string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		pod := e2e.StartPods(ctx, f, ospod.Probe("user", windows, ospod.OnNode(node), asWindowsUser(user)))[0]
		id := whoami(ctx, f, pod)
		gomega.Expect(strings.ToLower(id.Username)).To(gomega.HaveSuffix(`\`+strings.ToLower(user)), "runAsUserName %s", user)
		framework.Logf("Windows pod %s with runAsUserName %s runs as %q", pod.Name, user, id.Username)
	},
		ginkgo.Entry("ContainerUser", labels.For("ID-01", corev1.Windows), "ContainerUser"),
		ginkgo.Entry("ContainerAdministrator", labels.For("ID-01", corev1.Windows), "ContainerAdministrator"),
	)

	ginkgo.It("does not start a Windows container whose runAsUserName is an unknown user", labels.For("ID-01", corev1.Windows), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		p := ospod.Probe("unknown-user", windows, ospod.OnNode(node), asWindowsUser("NoSuchUser-winconform"))
		_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a well-formed runAsUserName")
		var reason string
		err = wait.PollUntilContextTimeout(ctx, 3*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			events, err := f.ClientSet.CoreV1().Events(f.Namespace.Name).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
			if err != nil {
				return false, nil
			}
			done, why, err := verdicts.UnknownUser(got, events.Items)
			reason = why
			return done, err
		})
		framework.ExpectNoError(err, "the container with an unknown runAsUserName was not refused for its user (an image pull error or a container still being created is no refusal); last: %s", reason)
		framework.Logf("a Windows container with an unknown runAsUserName does not start: %s", reason)
	})

	ginkgo.It("runAsUser sets the uid of a Linux container (a Linux twin: another field, the same kubelet path)", labels.For("ID-01", corev1.Linux), func(ctx context.Context) {
		node := e2e.Nodes(e2e.Facts(ctx, f), linux, 1)[0]
		uid, gid := int64(1234), int64(5678)
		p := ospod.Probe("uid", linux, ospod.OnNode(node))
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &gid}
		// The image's /etc/passwd has no entry for the uid, and the probe
		// (without cgo) then takes the user's name from $USER; the uid and
		// gid it prints come from the kernel (getuid, getgid).
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "USER", Value: "uid-1234"})
		pod := e2e.StartPods(ctx, f, p)[0]
		id := whoami(ctx, f, pod)
		gomega.Expect(id.UID).To(gomega.Equal(fmt.Sprint(uid)))
		gomega.Expect(id.GID).To(gomega.Equal(fmt.Sprint(gid)))
		framework.Logf("Linux pod %s with runAsUser %d, runAsGroup %d runs as %+v", pod.Name, uid, gid, id)
	})

	ginkgo.It("refuses windowsOptions in a Linux pod, naming the field (API only: runAsUserName belongs to Windows pods)", labels.For("ID-01", corev1.Linux), func(ctx context.Context) {
		e2e.API("a dry-run create of a Linux pod with securityContext.windowsOptions")
		p := ospod.Probe("linux-windows-options", linux, asWindowsUser("ContainerUser"))
		_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		gomega.Expect(err).To(gomega.HaveOccurred(), "a Linux pod with securityContext.windowsOptions was accepted")
		gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "refused, but not by validation: %v", err)
		gomega.Expect(err.Error()).To(gomega.ContainSubstring("spec.securityContext.windowsOptions"))
		framework.Logf("refused: %v", err)
	})

	ginkgo.It("gives a Windows container the Active Directory identity of a gMSA credential spec", labels.For("ID-02", corev1.Windows), func(ctx context.Context) {
		name := os.Getenv(GMSACredSpecEnv)
		if name == "" {
			skips.Skip(skips.NoActiveDirectory, fmt.Sprintf("set %s to the name of a GMSACredentialSpec", GMSACredSpecEnv))
		}
		node := e2e.Nodes(e2e.Facts(ctx, f), windows, 1)[0]
		dyn, err := dynamic.NewForConfig(f.ClientConfig())
		framework.ExpectNoError(err)
		spec, err := dyn.Resource(gmsaResource).Get(ctx, name, metav1.GetOptions{})
		framework.ExpectNoError(err, "%s=%s: reading GMSACredentialSpec %s (is the gMSA CRD installed?)", GMSACredSpecEnv, name, name)
		domain, _, _ := unstructured.NestedString(spec.Object, "credspec", "DomainJoinConfig", "DnsName")

		ginkgo.By("letting the namespace's default service account use the credential spec")
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "winconform-gmsa-" + f.Namespace.Name},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{gmsaResource.Group}, Resources: []string{gmsaResource.Resource}, Verbs: []string{"use"}, ResourceNames: []string{name}}},
		}
		e2e.Owned(role)
		_, err = f.ClientSet.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ginkgo.DeferCleanup(framework.IgnoreNotFound(f.ClientSet.RbacV1().ClusterRoles().Delete), role.Name, metav1.DeleteOptions{})
		_, err = f.ClientSet.RbacV1().RoleBindings(f.Namespace.Name).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "gmsa"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: f.Namespace.Name}},
		}, metav1.CreateOptions{})
		framework.ExpectNoError(err)

		// nltest, which checks the container's secure channel to the
		// domain, is a Server Core tool: a Server Core container of the
		// node's build beside the probe, in the pod the credential spec is
		// given to.
		servercore, err := images.RefForBuild(images.Servercore, node.WindowsBuild)
		framework.ExpectNoError(err, "node %s", node.Name)
		p := ospod.Probe("gmsa", windows, ospod.OnNode(node))
		p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: &name}}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "nltest", Image: servercore, Command: []string{"cmd", "/c", "ping -t localhost"}})
		// Server Core is a large image: the Windows start timeout.
		pod := e2e.Start(ctx, f, p)
		wo := pod.Spec.SecurityContext.WindowsOptions
		gomega.Expect(wo.GMSACredentialSpec).NotTo(gomega.BeNil(), "the gMSA webhook did not fill in the credential spec (is it installed?)")
		if domain == "" {
			evidence.Inconclusive(fmt.Sprintf("GMSACredentialSpec %s names no DomainJoinConfig.DnsName to check the container's domain against", name))
		}
		env, _, _ := e2e.Tool(ctx, f, pod, "probe", "env", "USERDNSDOMAIN")
		exec := podexec.Client{Config: f.ClientConfig(), Clientset: f.ClientSet}
		seen := verdicts.ContainerDomain{Domain: domain, Env: env}
		ginkgo.By("the container's secure channel to the domain's controller: nltest /sc_verify:" + domain)
		// As upstream's gmsa_full.go: a new container may take a moment
		// to reach the domain's controller.
		gomega.Eventually(ctx, func() error {
			var stderr string
			seen.SCVerify, stderr, seen.SCVerifyErr = exec.Exec(ctx, pod.Namespace, pod.Name, "nltest", []string{"nltest", "/sc_verify:" + domain})
			if seen.SCVerifyErr != nil && stderr != "" {
				seen.SCVerifyErr = fmt.Errorf("%w (%s)", seen.SCVerifyErr, strings.TrimSpace(stderr))
			}
			return verdicts.DomainIdentity(seen)
		}).WithTimeout(gmsaTimeout).WithPolling(5 * time.Second).Should(gomega.Succeed())
		evidence.AddOn(claims.Domain, fmt.Sprintf("container domain %s (nltest /sc_verify) from GMSACredentialSpec %s, on Windows node", domain, name), e2e.On(node)...)
		framework.Logf("Windows pod %s: USERDNSDOMAIN %q; nltest /sc_verify:%s:\n%s", pod.Name, strings.TrimSpace(env), domain, seen.SCVerify)
		framework.Logf("Windows pod %s runs with gMSA credential spec %s (domain %s): %+v", pod.Name, name, domain, whoami(ctx, f, pod))
	})
})
