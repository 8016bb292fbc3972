// Package networking asserts the documented network paths between pods,
// Services, nodes and the world outside the cluster, for Linux and Windows.
package networking

import (
	"context"
	"net"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

const (
	linux   = labels.Linux
	windows = labels.Windows
)

// placement says where the client pod runs relative to the server pod.
type placement string

const (
	sameNode  placement = "same node"
	otherNode placement = "other node"
)

var _ = ginkgo.Describe("pod to pod", labels.Suite("networking"), func() {
	f := e2e.NewFramework("pod-to-pod")

	// reach starts a server pod on dstOS and a client pod on srcOS, placed as
	// asked, and checks that the client gets the server's page, by the
	// server's IP or by its DNS name; the answer must come from that server.
	reach := func(ctx context.Context, srcOS, dstOS string, where placement, byName bool) {
		fs := e2e.Facts(ctx, f)
		var src, dst facts.Node
		switch {
		case srcOS != dstOS:
			src, dst = e2e.Nodes(fs, srcOS, 1)[0], e2e.Nodes(fs, dstOS, 1)[0]
		case where == sameNode:
			n := e2e.Nodes(fs, srcOS, 1)[0]
			src, dst = n, n
		default:
			n := e2e.Nodes(fs, srcOS, 2)
			src, dst = n[0], n[1]
		}
		const subdomain = "pods"
		_, err := f.ClientSet.CoreV1().Services(f.Namespace.Name).Create(ctx, ospod.HeadlessService(subdomain), metav1.CreateOptions{})
		framework.ExpectNoError(err)
		pods := e2e.StartPods(ctx, f,
			ospod.Probe("server", dstOS, ospod.OnNode(dst), ospod.WithDNSName("server", subdomain)),
			ospod.Probe("client", srcOS, ospod.OnNode(src)))
		server, client := pods[0], pods[1]
		gomega.Expect(client.Spec.NodeName == server.Spec.NodeName).To(gomega.Equal(where == sameNode),
			"client on %s, server on %s: not %s", client.Spec.NodeName, server.Spec.NodeName, where)

		host := server.Status.PodIP
		var targets []string
		if byName {
			host = "server." + subdomain // resolved through the pod's search path
			targets = append(targets, "dns://"+host+"?expect="+server.Status.PodIP)
		}
		web := "http://" + net.JoinHostPort(host, strconv.Itoa(ospod.HTTPPort)) + "/json"
		targets = append(targets, web)
		for _, r := range e2e.Connect(ctx, f, client, targets...) {
			if !r.OK {
				framework.Failf("%s pod on %s cannot reach %s pod on %s: %s", srcOS, src.Name, dstOS, dst.Name, r.Describe())
			}
			if r.Target == web {
				gomega.Expect(r.Detail.PodIP).To(gomega.Equal(server.Status.PodIP), "the answer came from another server: %+v", r.Detail)
			}
		}
	}

	ginkgo.DescribeTable("by IP", func(ctx context.Context, src, dst string, where placement) {
		reach(ctx, src, dst, where, false)
	},
		ginkgo.Entry("linux to linux, same node", labels.Claim("NET-07"), labels.OS(linux), linux, linux, sameNode),
		ginkgo.Entry("linux to linux, other node", labels.Claim("NET-07"), labels.OS(linux), linux, linux, otherNode),
		ginkgo.Entry("windows to windows, same node", labels.Claim("NET-01"), labels.OS(windows), labels.Needs("windows-node"), windows, windows, sameNode),
		ginkgo.Entry("windows to windows, other node", labels.Claim("NET-01"), labels.OS(windows), labels.Needs("windows-node"), windows, windows, otherNode),
		ginkgo.Entry("windows to linux", labels.Claim("NET-03"), labels.OS(windows), labels.OS(linux), labels.Needs("windows-node"), windows, linux, otherNode),
		ginkgo.Entry("linux to windows", labels.Claim("NET-05"), labels.OS(linux), labels.OS(windows), labels.Needs("windows-node"), linux, windows, otherNode),
	)

	ginkgo.DescribeTable("by DNS name", func(ctx context.Context, src, dst string, where placement) {
		reach(ctx, src, dst, where, true)
	},
		ginkgo.Entry("linux to linux, same node", labels.Claim("NET-08"), labels.OS(linux), linux, linux, sameNode),
		ginkgo.Entry("linux to linux, other node", labels.Claim("NET-08"), labels.OS(linux), linux, linux, otherNode),
		ginkgo.Entry("windows to windows, same node", labels.Claim("NET-02"), labels.OS(windows), labels.Needs("windows-node"), windows, windows, sameNode),
		ginkgo.Entry("windows to windows, other node", labels.Claim("NET-02"), labels.OS(windows), labels.Needs("windows-node"), windows, windows, otherNode),
		ginkgo.Entry("windows to linux", labels.Claim("NET-04"), labels.OS(windows), labels.OS(linux), labels.Needs("windows-node"), windows, linux, otherNode),
		ginkgo.Entry("linux to windows", labels.Claim("NET-06"), labels.OS(linux), labels.OS(windows), labels.Needs("windows-node"), linux, windows, otherNode),
	)
})
