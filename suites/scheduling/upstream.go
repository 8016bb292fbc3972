package scheduling

import (
	"context"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

// What the upstream Windows specs check of admission before they place a pod
// (test/e2e/windows: service.go, volumes.go): the node selector that sends a
// pod to Windows nodes comes out of admission as it went in.

// controllerTimeout bounds the wait for the Deployment and ReplicaSet
// controllers to create a pod.
const controllerTimeout = time.Minute

var _ = ginkgo.Describe("admission of Windows pods", labels.Suite("scheduling"), func() {
	f := e2e.NewFramework("sched-admission")

	ginkgo.It("keeps a pod's kubernetes.io/os: windows node selector as written", labels.For("SCH-11", corev1.Windows), func(ctx context.Context) {
		e2e.API("pods with nodeSelector kubernetes.io/os: windows created through admission, directly and by the Deployment controller, read back from the API server")
		cs, ns := f.ClientSet, f.Namespace.Name
		want := map[string]string{facts.LabelOS: windows}

		ginkgo.By("creating a Windows pod that selects kubernetes.io/os: windows")
		p := ospod.Probe("selects-windows", windows)
		gomega.Expect(p.Spec.NodeSelector).To(gomega.Equal(want))
		created, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a pod selecting Windows nodes")
		gomega.Expect(created.Spec.NodeSelector).To(gomega.Equal(want), "admission changed the node selector of the pod it created")
		stored, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(stored.Spec.NodeSelector).To(gomega.Equal(want), "the stored pod's node selector is not the one written")
		gomega.Expect(stored.Spec.OS).To(gomega.HaveValue(gomega.HaveField("Name", corev1.Windows)))

		ginkgo.By("creating a Deployment whose pod template selects kubernetes.io/os: windows, and reading the pod its controllers make")
		tmpl := ospod.Probe("windows-web", windows)
		tmpl.Labels["app"] = "windows-web"
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "windows-web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "windows-web"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl.Labels}, Spec: tmpl.Spec},
			},
		}
		_, err = cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a Deployment of Windows pods")
		var made *corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, time.Second, controllerTimeout, true, func(ctx context.Context) (bool, error) {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=windows-web"})
			if err != nil || len(pods.Items) == 0 {
				return false, nil
			}
			made = &pods.Items[0]
			return true, nil
		})
		framework.ExpectNoError(err, "the Deployment's controllers made no pod within %s", controllerTimeout)
		gomega.Expect(made.Spec.NodeSelector).To(gomega.Equal(want), "the pod the controllers made has another node selector than its template")
		// Where they run (or that they stay Pending) is the scheduler's
		// business, not admission's.
		framework.Logf("pods %s (created directly) and %s (by Deployment %s) keep nodeSelector %v; phases %s and %s",
			stored.Name, made.Name, d.Name, want, stored.Status.Phase, made.Status.Phase)
	})
})
