package workloads

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	wclabels "github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/framework/skips"
)

const (
	linux   = wclabels.Linux
	windows = wclabels.Windows
)

// What the page of either server looks like: a title naming a web server,
// the answering pod's hostname, and a "callerCount" line per caller.
var (
	pageTitle  = regexp.MustCompile(`(?i)<h1>[^<]*web server</h1>`)
	callerLine = regexp.MustCompile(`<p>IP (\S+) callerCount (\d+)`)
	hostLine   = regexp.MustCompile(`<p>hostname (\S+)`)
)

var _ = ginkgo.Describe("the documented web server", wclabels.Suite("workloads"), func() {
	f := e2e.NewFramework("workloads")

	ginkgo.DescribeTable("turns Ready and serves its page with the caller counts", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		web := deploy(ctx, f, node)

		ginkgo.By("counting the client's requests on the page of a replica")
		first := web.replicas[0]
		url := "http://" + net.JoinHostPort(first.Status.PodIP, port(web.port)) + "/"
		before := totalCount(web.page(ctx, f, url))
		after := totalCount(web.page(ctx, f, url))
		gomega.Expect(before).To(gomega.BeNumerically(">=", 1), "the first page counts no caller")
		gomega.Expect(after).To(gomega.Equal(before+1), "one more request from the client should add one to the counts")
		framework.Logf("the page of %s counted %d request(s), then %d", first.Name, before, after)

		ginkgo.By("fetching the page from each replica's IP")
		for _, p := range web.replicas {
			page := web.page(ctx, f, "http://"+net.JoinHostPort(p.Status.PodIP, port(web.port))+"/")
			gomega.Expect(hostOf(page)).To(gomega.Equal(strings.ToLower(p.Name)), "the page at %s is not from pod %s", p.Status.PodIP, p.Name)
		}

		ginkgo.By("fetching the page through the Service: its IP, its name and its fully qualified name")
		fqdn := fmt.Sprintf("%s.%s.svc.%s", web.svc.Name, web.svc.Namespace, framework.TestContext.ClusterDNSDomain)
		for _, host := range []string{web.svc.Spec.ClusterIP, web.svc.Name, fqdn} {
			page := web.servicePage(ctx, f, "http://"+net.JoinHostPort(host, port(fixtures.WebServicePort))+"/")
			gomega.Expect(web.names()).To(gomega.ContainElement(hostOf(page)), "%s was answered by a pod that is not a replica", host)
		}

		ginkgo.By("fetching the page from outside the cluster through the NodePort of every node")
		nodePort := web.svc.Spec.Ports[0].NodePort
		gomega.Expect(nodePort).NotTo(gomega.BeZero(), "the Service has no NodePort")
		var urls []string
		for _, n := range fs.Select(facts.Query{Real: true, Ready: true}) {
			if n.InternalIP != "" {
				urls = append(urls, "http://"+net.JoinHostPort(n.InternalIP, port(nodePort))+"/")
			}
		}
		for i, r := range fromOutside(ctx, urls) {
			gomega.Expect(r.OK).To(gomega.BeTrue(), "from outside: %s", r.Describe())
			expectPage(r.Detail.Body, urls[i])
			gomega.Expect(web.names()).To(gomega.ContainElement(hostOf(r.Detail.Body)))
		}
		framework.Logf("the page answered from %d pod IPs, the Service (IP, name, %s) and NodePort %d on %d nodes", len(web.replicas), fqdn, nodePort, len(urls))
	},
		e2e.OSEntries("WEB-01"),
	)

	ginkgo.DescribeTable("its logs show what the server writes to stdout for each request", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		web := deploy(ctx, f, node)
		for i, p := range web.replicas {
			token := fmt.Sprintf("winconform-%s-%d", f.Namespace.Name, i)
			url := "http://" + net.JoinHostPort(p.Status.PodIP, port(web.port)) + "/?request=" + token
			web.page(ctx, f, url)
			ginkgo.By(fmt.Sprintf("reading the logs of %s for the request %s", p.Name, token))
			var logs string
			gomega.Eventually(ctx, func(g gomega.Gomega) {
				data, err := f.ClientSet.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: web.fixture.Container()}).DoRaw(ctx)
				g.Expect(err).NotTo(gomega.HaveOccurred())
				logs = string(data)
				g.Expect(requestLogged(logs, token)).To(gomega.BeTrue(), "the logs of %s lack the request %s and its status 200:\n%s", p.Name, token, logs)
			}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(gomega.Succeed())
			framework.Logf("logs of %s:\n%s", p.Name, logs)
		}
	},
		e2e.OSEntries("WEB-02"),
	)

	ginkgo.DescribeTable("a Service port that differs from the container port reaches the pods", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		web := deploy(ctx, f, node)
		mapped, err := fixtures.MappedService(web.target, web.fixture.Deployment.Name, fixtures.MappedServicePort)
		framework.ExpectNoError(err)
		mapped, err = f.ClientSet.CoreV1().Services(f.Namespace.Name).Create(ctx, mapped, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(mapped.Spec.Ports[0].Port).NotTo(gomega.Equal(web.port))

		ginkgo.By("checking that the Service's endpoints are the replicas on the container port")
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			slices, err := f.ClientSet.DiscoveryV1().EndpointSlices(f.Namespace.Name).List(ctx, metav1.ListOptions{
				LabelSelector: discoveryv1.LabelServiceName + "=" + mapped.Name})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			var addrs []string
			for _, s := range slices.Items {
				g.Expect(s.Ports).To(gomega.HaveLen(1))
				g.Expect(*s.Ports[0].Port).To(gomega.Equal(web.port), "endpoint port")
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						addrs = append(addrs, e.Addresses...)
					}
				}
			}
			g.Expect(addrs).To(gomega.ConsistOf(web.ips()))
		}).WithTimeout(time.Minute).Should(gomega.Succeed())

		ginkgo.By(fmt.Sprintf("fetching the page on port %d, which the Service maps to %d, until both replicas answered", mapped.Spec.Ports[0].Port, web.port))
		seen := map[string]int{}
		hostPort := func(host string) string {
			return "http://" + net.JoinHostPort(host, port(mapped.Spec.Ports[0].Port)) + "/"
		}
		targets := []string{hostPort(mapped.Spec.ClusterIP), hostPort(mapped.Name)}
		for len(targets) < 20 { // every probe is a new connection
			targets = append(targets, targets[len(targets)%2])
		}
		gomega.Eventually(ctx, func(g gomega.Gomega) {
			for _, r := range e2e.Connect(ctx, f, web.client, targets...) {
				g.Expect(r.OK).To(gomega.BeTrue(), "%s", r.Describe())
				expectPageG(g, r.Detail.Body, r.Target)
				seen[hostOf(r.Detail.Body)]++
			}
			g.Expect(seen).To(gomega.HaveLen(2), "replicas that answered: %v", seen)
			for name := range seen {
				g.Expect(web.names()).To(gomega.ContainElement(name))
			}
		}).WithTimeout(2 * time.Minute).Should(gomega.Succeed())
		framework.Logf("port %d -> %d: answered by %v", mapped.Spec.Ports[0].Port, web.port, seen)
	},
		e2e.OSEntries("WEB-03"),
	)
})

// webServer is the web server deployed in a spec's namespace, with a client
// pod of the same OS to fetch its page from.
type webServer struct {
	target   fixtures.Target
	fixture  *fixtures.WebServer
	svc      *corev1.Service // as created: ClusterIP and NodePort assigned
	replicas []*corev1.Pod   // Ready
	client   *corev1.Pod
	port     int32 // the container port
}

// deploy creates the web server for node's OS (on Windows, Server Core for
// node's build) and a client pod, and waits until both replicas are Ready.
func deploy(ctx context.Context, f *framework.Framework, node facts.Node) *webServer {
	t := fixtures.For(node)
	name := map[string]string{windows: "win-webserver", linux: "linux-webserver"}[t.OS]
	w, err := fixtures.NewWebServer(t, name)
	framework.ExpectNoError(err)
	web := &webServer{target: t, fixture: w, port: w.ContainerPort()}
	ns := f.Namespace.Name
	web.svc, err = f.ClientSet.CoreV1().Services(ns).Create(ctx, w.Service, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	dep, err := f.ClientSet.AppsV1().Deployments(ns).Create(ctx, w.Deployment, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	web.client = e2e.StartPods(ctx, f, ospod.Probe("client", t.OS))[0]

	ginkgo.By(fmt.Sprintf("waiting for both replicas of %s (%s) to turn Ready", dep.Name, w.Deployment.Spec.Template.Spec.Containers[0].Image))
	timeout := 3 * time.Minute
	if t.OS == windows {
		timeout = 15 * time.Minute // Server Core is several GB to pull
	}
	got, err := e2e.Await(ctx, f.ClientSet, f.ClientSet.AppsV1().Deployments(ns), dep.Name, timeout, func(d *appsv1.Deployment) (bool, error) {
		return d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas == 2 && d.Status.UpdatedReplicas == 2, nil
	})
	if got != nil {
		dep = got
	}
	framework.ExpectNoError(err, "deployment %s: %d of 2 replicas Ready", dep.Name, dep.Status.ReadyReplicas)

	sel := labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String()
	pods, err := f.ClientSet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	framework.ExpectNoError(err)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && ready(p) {
			web.replicas = append(web.replicas, p)
		}
	}
	gomega.Expect(web.replicas).To(gomega.HaveLen(2), "Ready replicas of %s", dep.Name)
	for _, p := range web.replicas {
		gomega.Expect(p.Spec.NodeName).NotTo(gomega.BeEmpty())
		framework.Logf("replica %s on node %s, IP %s", p.Name, p.Spec.NodeName, p.Status.PodIP)
	}
	return web
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// page fetches url from the client pod and checks it is the web server's page.
func (w *webServer) page(ctx context.Context, f *framework.Framework, url string) string {
	return w.fetch(ctx, f, gomega.Default, url)
}

// servicePage is page through a Service, fetched until it answers (up to a
// minute): kube-proxy programs a Service's rules some time after its
// endpoints turn Ready, and a fetch in between is refused.
func (w *webServer) servicePage(ctx context.Context, f *framework.Framework, url string) string {
	var body string
	gomega.Eventually(ctx, func(g gomega.Gomega) {
		body = w.fetch(ctx, f, g, url)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(gomega.Succeed())
	return body
}

func (w *webServer) fetch(ctx context.Context, f *framework.Framework, g gomega.Gomega, url string) string {
	r := e2e.Connect(ctx, f, w.client, url)[0]
	g.Expect(r.OK).To(gomega.BeTrue(), "%s", r.Describe())
	g.Expect(r.Detail.StatusCode).To(gomega.Equal(200))
	expectPageG(g, r.Detail.Body, url)
	return r.Detail.Body
}

// names are the replicas' names, as hostOf gives them.
func (w *webServer) names() []string {
	var out []string
	for _, p := range w.replicas {
		out = append(out, strings.ToLower(p.Name))
	}
	return out
}

func (w *webServer) ips() []string {
	var out []string
	for _, p := range w.replicas {
		out = append(out, p.Status.PodIP)
	}
	return out
}

// expectPage checks that body (the first bytes of an answer) is the web
// server's page with at least one caller count.
func expectPage(body, url string) {
	expectPageG(gomega.Default, body, url)
}

func expectPageG(g gomega.Gomega, body, url string) {
	g.Expect(body).To(gomega.MatchRegexp(pageTitle.String()), "%s did not answer the web server's page", url)
	g.Expect(body).To(gomega.MatchRegexp(callerLine.String()), "the page of %s shows no caller count", url)
}

// totalCount adds the caller counts of a page.
func totalCount(page string) int {
	total := 0
	for _, m := range callerLine.FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(m[2])
		total += n
	}
	return total
}

// hostOf is the hostname a page names, lower-cased ("" when none): a pod's
// hostname is its name, which Windows may report in another case.
func hostOf(page string) string {
	if m := hostLine.FindStringSubmatch(page); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

// requestLogged tells whether logs show the request with token in its URL
// ("> URL from CALLER") followed by its status ("< 200"), the lines both
// servers write for each request.
func requestLogged(logs, token string) bool {
	lines := strings.Split(strings.ReplaceAll(logs, "\r\n", "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "> ") || !strings.Contains(l, token) {
			continue
		}
		for _, next := range lines[i+1:] {
			if strings.TrimSpace(next) == "" {
				continue
			}
			return strings.TrimSpace(next) == "< 200"
		}
	}
	return false
}

// fromOutside fetches urls with the local probe (--probe-binary), from this
// machine, or skips when there is none.
func fromOutside(ctx context.Context, urls []string) []probeclient.Result {
	if e2e.Options.ProbeBinary == "" {
		skips.Skip(skips.NoOutsidePeer)
	}
	args := append([]string{"connect", "--timeout=5s", "--attempts=3"}, urls...)
	out, err := exec.CommandContext(ctx, e2e.Options.ProbeBinary, args...).Output()
	framework.ExpectNoError(err, "running the local probe %s", e2e.Options.ProbeBinary)
	rs, err := probeclient.Parse(string(out), urls)
	framework.ExpectNoError(err)
	return rs
}

func port(p int32) string { return strconv.Itoa(int(p)) }
