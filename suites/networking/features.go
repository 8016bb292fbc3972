package networking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"time"

	e2eservice "k8s.io/kubernetes/test/e2e/framework/service"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/loadbalancer"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/framework/skips"
)

// backendService is a Service on port 80 in front of the probe pods labelled app=name.
func backendService(name string, typ corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(ospod.HTTPPort)}},
		},
	}
}

func withApp(app string) ospod.Option {
	return func(p *corev1.Pod) { p.Labels["app"] = app }
}

var _ = ginkgo.Describe("services and pod networking", labels.Suite("networking"), func() {
	f := e2e.NewFramework("net-features")

	ginkgo.DescribeTable("a ClusterIP Service spreads connections over both replicas", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		nodes := e2e.Nodes(fs, os, 1)
		svc, err := f.ClientSet.CoreV1().Services(f.Namespace.Name).Create(ctx, backendService("web", corev1.ServiceTypeClusterIP), metav1.CreateOptions{})
		framework.ExpectNoError(err)
		pods := e2e.StartPods(ctx, f,
			ospod.Probe("web-1", os, ospod.OnNode(nodes[0]), withApp("web")),
			ospod.Probe("web-2", os, ospod.OnNode(nodes[0]), withApp("web")),
			ospod.Probe("client", os, ospod.OnNode(nodes[0])))
		replicas := map[string]bool{pods[0].Status.PodIP: true, pods[1].Status.PodIP: true}
		url := fmt.Sprintf("http://%s/json", net.JoinHostPort(svc.Spec.ClusterIP, "80"))
		targets := make([]string, 30) // every probe is a new connection
		for i := range targets {
			targets[i] = url
		}
		seen := map[string]int{}
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			for _, r := range e2e.Connect(ctx, f, pods[2], targets...) {
				g.Expect(r.OK).To(gomega.BeTrue(), "%s", r.Describe())
				g.Expect(replicas).To(gomega.HaveKey(r.Detail.PodIP), "answered by a pod that is not a replica")
				seen[r.Detail.PodIP]++
			}
			g.Expect(seen).To(gomega.HaveLen(2), "connections by replica: %v", seen)
		}).WithTimeout(time.Minute).Should(gomega.Succeed())
		framework.Logf("%d connections to %s went to the replicas as %v", len(targets), svc.Spec.ClusterIP, seen)
	},
		e2e.OSEntries("NET-22"),
	)

	ginkgo.DescribeTable("the containers of a pod share one network namespace and IP", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		p := ospod.Probe("pair", os, ospod.OnNode(node))
		second := *p.Spec.Containers[0].DeepCopy()
		second.Name = "second"
		second.Command = ospod.ProbeCommand(os, "serve", "--name", "second", "--http-port", "9090", "--tcp-port", "0", "--udp-port", "0")
		second.Ports = nil
		second.ReadinessProbe.HTTPGet.Port = intstr.FromInt32(9090)
		p.Spec.Containers = append(p.Spec.Containers, second)
		pod := e2e.StartPods(ctx, f, p)[0]
		r := e2e.Connect(ctx, f, pod, "http://localhost:9090/json")[0]
		gomega.Expect(r.OK).To(gomega.BeTrue(), "the first container cannot reach the second on localhost: %s", r.Describe())
		gomega.Expect(r.Detail.Name).To(gomega.Equal("second"), "localhost:9090 was answered by another server")
		gomega.Expect(r.Detail.PodIP).To(gomega.Equal(pod.Status.PodIP), "the second container sees another IP than the pod's")
	},
		e2e.OSEntries("NET-23"),
	)

	ginkgo.DescribeTable("a pod's DNS is configured by the cluster", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		dns, err := f.ClientSet.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		framework.ExpectNoError(err, "the cluster DNS Service kube-system/kube-dns")
		pod := e2e.StartPods(ctx, f, ospod.Probe("dns", os, ospod.OnNode(node)))[0]
		stdout := e2e.MustTool(ctx, f, pod, "probe", "dnsconfig")
		var conf struct {
			Servers, Search []string
			Source          string
		}
		framework.ExpectNoError(json.Unmarshal([]byte(stdout), &conf), "probe dnsconfig printed %q", stdout)
		domain := framework.TestContext.ClusterDNSDomain
		gomega.Expect(conf.Servers).To(gomega.ContainElement(dns.Spec.ClusterIP), "DNS servers (from %s) are not the cluster's DNS", conf.Source)
		gomega.Expect(conf.Search).To(gomega.ContainElements(f.Namespace.Name+".svc."+domain, "svc."+domain, domain),
			"search suffixes (from %s) lack the cluster's", conf.Source)
	},
		e2e.OSEntries("NET-24"),
	)

	ginkgo.DescribeTable("a LoadBalancer Service answers on its external address", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		lb, err := loadbalancer.Detect(ctx, f.ClientSet, f.DynamicClient)
		framework.ExpectNoError(err, "looking for a LoadBalancer implementation")
		if !lb.Found() && !lb.Unsure {
			skips.Skip(skips.NoLoadBalancer, lb.Detail)
		}
		lbSvc := backendService("lb", corev1.ServiceTypeLoadBalancer)
		loadbalancer.ForPodsAnywhere(lbSvc) // its pods may all be on Windows nodes
		svc, err := f.ClientSet.CoreV1().Services(f.Namespace.Name).Create(ctx, lbSvc, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		pod := e2e.StartPods(ctx, f, ospod.Probe("lb-1", os, ospod.OnNode(node), withApp("lb")))[0]
		ingress, err := lb.ExternalAddress(ctx, f.ClientSet, svc)
		if errors.Is(err, loadbalancer.ErrNoAnswer) {
			skips.Skip(skips.NoLoadBalancer, err)
		}
		framework.ExpectNoError(err)
		framework.Logf("the LoadBalancer Service %s/%s got the external address %s from %s", svc.Namespace, svc.Name, ingress, lb)
		// The address answers once the load balancer announces it (MetalLB's
		// L2 mode: ARP from the speaker of the node it elects); upstream's
		// service specs give that e2eservice.LoadBalancerLagTimeoutDefault.
		var r probeclient.Result
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			r = probeFromOutside(ctx, "http://"+net.JoinHostPort(ingress, "80")+"/json")
			g.Expect(r.OK).To(gomega.BeTrue(), "%s", r.Describe())
		}).WithTimeout(e2eservice.LoadBalancerLagTimeoutDefault).WithPolling(2 * time.Second).Should(gomega.Succeed())
		gomega.Expect(r.Detail.PodIP).To(gomega.Equal(pod.Status.PodIP))
		framework.Logf("from this machine, %s was answered by pod %s (%s)", r.Describe(), pod.Name, r.Detail.PodIP)
	},
		e2e.OSEntries("NET-26"),
	)
})

// probeFromOutside probes url from this machine with the local probe.
func probeFromOutside(ctx context.Context, url string) probeclient.Result {
	if e2e.Options.ProbeBinary == "" {
		skips.Skip(skips.NoOutsidePeer)
	}
	out, err := exec.CommandContext(ctx, e2e.Options.ProbeBinary, "connect", "--timeout=5s", "--attempts=3", url).Output()
	framework.ExpectNoError(err, "running the local probe")
	rs, err := probeclient.Parse(string(out), []string{url})
	framework.ExpectNoError(err)
	return rs[0]
}
