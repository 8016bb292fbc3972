package limitations

import (
	"context"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/kwok/kwokspec"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/nodeagent"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
)

// podTemplate is the probe pod of os as a template labelled app=name.
func podTemplate(name, os string, opts ...ospod.Option) corev1.PodTemplateSpec {
	p := ospod.Probe(name, os, opts...)
	p.Labels["app"] = name
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: p.Spec}
}

// selectsLinuxOnly says whether a pod template can only land on Linux
// nodes (framework/nodeagent).
func selectsLinuxOnly(spec corev1.PodSpec) bool { return nodeagent.PinnedTo(spec, linux) }

// targetsNode says whether a (DaemonSet) pod is on node or, Pending, is
// meant for it (the DaemonSet controller pins its pods by node affinity on
// metadata.name).
func targetsNode(p corev1.Pod, node string) bool {
	if p.Spec.NodeName == node {
		return true
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range t.MatchFields {
			if r.Key == "metadata.name" {
				for _, v := range r.Values {
					if v == node {
						return true
					}
				}
			}
		}
	}
	return false
}

// isNodeAgent says whether a DaemonSet is the Linux side of kube-proxy or
// a CNI agent; the Windows side (pinned to Windows nodes, as the harness's
// own kube-flannel-ds-windows) is not (framework/nodeagent).
func isNodeAgent(ds appsv1.DaemonSet) (string, bool) { return nodeagent.Linux(ds) }

// hpaTimeout bounds the wait for the HPAs' verdicts, after their pods are
// Ready: the metrics' warm-up (verdicts.HPAWarmUp) and a few syncs.
const hpaTimeout = 5 * time.Minute

var _ = ginkgo.Describe("Windows workloads the 1.9 guide doubted", labels.Suite("limitations"), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
	f := e2e.NewFramework("win-workloads")
	var win *kwokspec.Windows

	ginkgo.BeforeAll(func(ctx context.Context) {
		win = kwokspec.Setup(ctx, "wc-lim", kwokspec.DefaultBuilds...)
	})

	ginkgo.It("runs a StatefulSet on Windows nodes", labels.ForSimulated("LIM-05"), func(ctx context.Context) {
		win.Require()
		cs, ns := f.ClientSet, f.Namespace.Name
		_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Name: "http", Port: ospod.HTTPPort}}},
		}, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		tpl := podTemplate("web", windows, win.Tolerate())
		ss := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.StatefulSetSpec{
				ServiceName: "web", Replicas: ptr.To(int32(2)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: tpl,
			},
		}
		_, err = cs.AppsV1().StatefulSets(ns).Create(ctx, ss, metav1.CreateOptions{})
		framework.ExpectNoError(err, "the API server refused a StatefulSet of Windows pods")
		// The pods start one after the other (OrderedReady), each as long
		// as a Windows pod takes; those not Ready when the wait ends
		// decide nothing (verdicts.StatefulSet).
		got, err := e2e.Await(ctx, cs, cs.AppsV1().StatefulSets(ns), "web", e2e.StartTimeout(windows)+e2e.PodStartTimeout, func(s *appsv1.StatefulSet) (bool, error) {
			return s.Status.ReadyReplicas == 2, nil
		})
		if ctx.Err() != nil {
			return // interrupted: nothing was observed
		}
		if got == nil {
			framework.Failf("reading StatefulSet web: %v", err)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		framework.ExpectNoError(err)
		var observed []*corev1.Pod
		for i := range pods.Items {
			observed = append(observed, &pods.Items[i])
		}
		win.Observe(observed...)
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				gomega.Expect(win.Has(p.Spec.NodeName)).To(gomega.BeTrue(), "StatefulSet pod %s is on %s, not a Windows node", p.Name, p.Spec.NodeName)
			}
		}
		win.Mark("the StatefulSet controller and the scheduler are real; the pods' Running state comes from kwok, not from a Windows kubelet")
		e := e2e.Limitation(ctx, f, "LIM-05")
		verdicts.StatefulSet(verdicts.StatefulSetRun{Name: "web", Replicas: 2, Ready: got.Status.ReadyReplicas, Pods: pods.Items}).Apply(&e)
		e.Simulated = win.Simulated
		e2e.RecordLimitation(ctx, f, e)
	})

	ginkgo.It("accepts a HorizontalPodAutoscaler for Windows pods and reports its conditions", labels.ForSimulated("LIM-06"), func(ctx context.Context) {
		win.Require()
		cs, ns := f.ClientSet, f.Namespace.Name
		record := func(o verdicts.Observation) {
			// What the spec saw: the Windows Deployment's pods, where they
			// ran (a real Windows kubelet serves their metrics).
			var observed []*corev1.Pod
			if pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=hpa-" + windows}); err == nil {
				for i := range pods.Items {
					observed = append(observed, &pods.Items[i])
				}
			}
			win.Observe(observed...)
			e := e2e.Limitation(ctx, f, "LIM-06")
			o.Apply(&e)
			e.Simulated = win.Simulated
			win.Mark("the HPA controller is real; the Windows pods it reads are simulated (kwok) and have no metrics")
			e2e.RecordLimitation(ctx, f, e)
		}
		// Without a metrics API no HPA scales anything, on either OS: the
		// verdict is known before anything is made, and the spec ends
		// (inconclusive) at once instead of after its pods and HPAs.
		if _, err := cs.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err != nil {
			framework.Logf("metrics.k8s.io/v1beta1: %v", err)
			record(verdicts.HPA(verdicts.HPARun{}))
			return
		}
		request := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		withRequest := func(p *corev1.Pod) { p.Spec.Containers[0].Resources = request }
		conds := map[string][]autoscalingv2.HorizontalPodAutoscalerCondition{}
		for _, os := range []string{windows, linux} {
			name := "hpa-" + os
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To(int32(1)),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template: podTemplate(name, os, win.Tolerate(), withRequest),
				},
			}
			_, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
			framework.ExpectNoError(err)
			hpa := &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
					MinReplicas:    ptr.To(int32(1)), MaxReplicas: 3,
					Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
						Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))},
					}}},
				},
			}
			_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{})
			framework.ExpectNoError(err, "the API server refused an HPA for the %s Deployment", os)
		}
		if win.Simulated {
			// kwok's Windows pods have no metrics, and an observation on
			// simulated nodes decides nothing: the API server accepted the
			// HPAs, and waiting for their conditions would show no more.
			record(verdicts.Unobserved("the API server accepted the HPAs; the Windows pods they measure are simulated (kwok) and have no metrics, so what the controller reports decides nothing"))
			return
		}
		// An HPA measures Ready pods only: the Deployments' pods first.
		unready := map[string]string{}
		for _, os := range []string{windows, linux} {
			name := "hpa-" + os
			_, err := e2e.Await(ctx, cs, cs.AppsV1().Deployments(ns), name, e2e.StartTimeout(os), func(d *appsv1.Deployment) (bool, error) {
				return d.Status.AvailableReplicas >= 1, nil
			})
			if err != nil {
				unready[os] = podsState(ctx, f, "app="+name)
			}
		}
		if ctx.Err() != nil {
			return // interrupted: nothing was observed
		}
		// Then the HPAs' conditions, until the Windows HPA computes a
		// replica count, or its Linux twin has been computing them for
		// the metrics' warm-up: ScalingActive appears False on both while
		// the metrics API has no figures for the new pods yet.
		var linuxSince time.Time
		_ = wait.PollUntilContextTimeout(ctx, 5*time.Second, hpaTimeout, true, func(ctx context.Context) (bool, error) {
			for _, os := range []string{windows, linux} {
				if h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "hpa-"+os, metav1.GetOptions{}); err == nil {
					conds[os] = h.Status.Conditions
				}
			}
			if c := verdicts.Condition(conds[linux], autoscalingv2.ScalingActive); c != nil && c.Status == corev1.ConditionTrue && linuxSince.IsZero() {
				linuxSince = time.Now()
			}
			w := verdicts.Condition(conds[windows], autoscalingv2.ScalingActive)
			return w != nil && w.Status == corev1.ConditionTrue || !linuxSince.IsZero() && time.Since(linuxSince) >= verdicts.HPAWarmUp, nil
		})
		if ctx.Err() != nil {
			return
		}
		run := verdicts.HPARun{MetricsServed: true, Windows: conds[windows], Linux: conds[linux], WindowsUnready: unready[windows]}
		if !linuxSince.IsZero() {
			run.LinuxActiveFor = time.Since(linuxSince)
		}
		record(verdicts.HPA(run))
	})

	ginkgo.It("keeps Linux-only DaemonSets (kube-proxy, the CNI agent) off Windows nodes, with none of their pods Pending there", labels.ForClaim("LIM-08"), func(ctx context.Context) {
		win.Require()
		// What the DaemonSet controller and the scheduler decided about the
		// Windows nodes: no Windows kubelet takes part.
		win.ObserveControlPlane("the DaemonSet controller's and the scheduler's placement of Linux-only DaemonSets")
		cs := f.ClientSet
		list, err := cs.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		var agents []string
		linuxOnly := map[string]appsv1.DaemonSet{}
		for _, ds := range list.Items {
			key := ds.Namespace + "/" + ds.Name
			if what, ok := isNodeAgent(ds); ok {
				agents = append(agents, what+" "+key)
				gomega.Expect(selectsLinuxOnly(ds.Spec.Template.Spec)).To(gomega.BeTrue(),
					"%s %s does not select kubernetes.io/os=linux (node selector %v, affinity %v)", what, key, ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Affinity)
			}
			if selectsLinuxOnly(ds.Spec.Template.Spec) {
				linuxOnly[key] = ds
			}
		}
		gomega.Expect(agents).NotTo(gomega.BeEmpty(), "found neither kube-proxy nor a known CNI agent DaemonSet")
		framework.Logf("node agents: %v; Linux-only DaemonSets: %d; Windows nodes: %v", agents, len(linuxOnly), win.Names())

		ginkgo.By("no pod of a Linux-only DaemonSet runs on, or waits for, a Windows node (watched for 5s: the nodes were added before the container's first spec)")
		check := func(g gomega.Gomega) {
			pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			for _, p := range pods.Items {
				owner := metav1.GetControllerOf(&p)
				if owner == nil || owner.Kind != "DaemonSet" {
					continue
				}
				if _, ok := linuxOnly[p.Namespace+"/"+owner.Name]; !ok {
					continue
				}
				for _, n := range win.Names() {
					g.Expect(targetsNode(p, n)).To(gomega.BeFalse(), "pod %s/%s of DaemonSet %s targets Windows node %s (phase %s)", p.Namespace, p.Name, owner.Name, n, p.Status.Phase)
				}
			}
		}
		gomega.Consistently(ctx, check).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(gomega.Succeed())
		for key, ds := range linuxOnly {
			framework.Logf("DaemonSet %s: desired %d, scheduled %d, misscheduled %d", key, ds.Status.DesiredNumberScheduled, ds.Status.CurrentNumberScheduled, ds.Status.NumberMisscheduled)
			gomega.Expect(ds.Status.NumberMisscheduled).To(gomega.BeZero(), "DaemonSet %s has misscheduled pods", key)
		}
		win.Mark("the DaemonSet controller and the scheduler are real and see the simulated nodes' Windows labels; kwok nodes run no pods of their own")
	})
})
