package networking

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

// What the upstream Windows DNS spec (test/e2e/windows/dns.go) checks: a
// pod with dnsPolicy None gets the resolver configuration its dnsConfig
// names, and resolves through it.

// outsideNameserver is the second nameserver upstream names: one outside
// the cluster, which only has to appear in the pod's configuration.
const outsideNameserver = "1.1.1.1"

// A name no one serves, for the negative control.
const bogusName = "kubernetezzzzzzzz"

var _ = ginkgo.Describe("pod DNS configuration", labels.Suite("networking"), func() {
	f := e2e.NewFramework("net-dns")

	ginkgo.DescribeTable("a pod with dnsPolicy None and a dnsConfig resolves through the nameservers and search domains it names", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		cs := f.ClientSet
		dns, err := cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		framework.ExpectNoError(err, "the cluster DNS Service kube-system/kube-dns")
		api, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		framework.ExpectNoError(err, "the Service default/kubernetes")
		domain := framework.TestContext.ClusterDNSDomain
		// The cluster DNS named explicitly, as any nameserver would be; the
		// search domain of the default namespace, not the pod's own.
		servers := []string{dns.Spec.ClusterIP, outsideNameserver}
		search := []string{"default.svc." + domain}

		p := ospod.Probe("dns-none", os, ospod.OnNode(node))
		p.Spec.DNSPolicy = corev1.DNSNone
		p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: servers, Searches: search}
		pod := e2e.StartPods(ctx, f, p)[0]
		gomega.Expect(pod.Spec.DNSPolicy).To(gomega.Equal(corev1.DNSNone))

		ginkgo.By("the pod's resolver configuration is the one its dnsConfig names")
		out := e2e.MustTool(ctx, f, pod, "", "dnsconfig")
		var conf struct {
			Servers, Search []string
			Source          string
		}
		framework.ExpectNoError(json.Unmarshal([]byte(out), &conf), "probe dnsconfig printed %q", out)
		gomega.Expect(conf.Servers).To(gomega.ConsistOf(servers), "DNS servers (from %s)", conf.Source)
		gomega.Expect(conf.Search).To(gomega.ConsistOf(search), "search list (from %s)", conf.Source)

		ginkgo.By("names resolve through the named nameserver, short names through the named search domain")
		fqdn := fmt.Sprintf("kubernetes.default.svc.%s", domain)
		rs := e2e.Connect(ctx, f, pod,
			"dns://kubernetes?expect="+api.Spec.ClusterIP,
			"dns://"+fqdn+"?expect="+api.Spec.ClusterIP,
			"dns://"+bogusName)
		gomega.Expect(rs[0].OK).To(gomega.BeTrue(), "the short name kubernetes, through the search domain %s: %s", search[0], rs[0].Describe())
		gomega.Expect(rs[1].OK).To(gomega.BeTrue(), "%s through nameserver %s: %s", fqdn, servers[0], rs[1].Describe())
		// The negative control: a lookup that cannot succeed does not.
		gomega.Expect(rs[2].OK).To(gomega.BeFalse(), "the name %s, which nothing serves, resolved: %s", bogusName, rs[2].Describe())
		framework.Logf("%s pod %s: servers %v, search %v (from %s); kubernetes -> %v, %s -> %v; %s: %s",
			os, pod.Name, conf.Servers, conf.Search, conf.Source, rs[0].Detail.Addresses, fqdn, rs[1].Detail.Addresses, bogusName, rs[2].Describe())
	},
		e2e.OSEntries("NET-28"),
	)
})
