// Package infra asserts what provisioning promises (INF claims): a Linux
// control plane at the chosen version whose API server the Windows machines
// can reach; Windows machines joined over WinRM, in the documented order,
// idempotently, resettable; flannel and kube-proxy on both OSes.
package infra

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/inventory"
	"github.com/winconform/winconform/infra/windows/remote"
)

const (
	linux     = labels.Linux
	windowsOS = labels.Windows
)

// machines loads the inventory and connects to its machines, or skips.
func machines() (*inventory.Inventory, map[string]*remote.WinRM) {
	if e2e.Options.Inventory == "" {
		skips.Skip(skips.NoInventory)
	}
	inv, err := inventory.LoadFromOS(e2e.Options.Inventory)
	framework.ExpectNoError(err)
	conns, err := windows.Connect(inv)
	framework.ExpectNoError(err)
	return inv, conns
}

// controlPlane is the cluster under test as a control plane for joins.
func controlPlane(f *framework.Framework) *windows.APIControlPlane {
	cfg, err := framework.LoadConfig()
	framework.ExpectNoError(err)
	return &windows.APIControlPlane{Rest: cfg, Client: f.ClientSet}
}

var _ = ginkgo.Describe("provisioning", labels.Suite("infra"), func() {
	f := e2e.NewFramework("infra")
	f.SkipNamespaceCreation = true

	ginkgo.It("INF-01: the Linux control plane runs the chosen version, and its API server's certificate has the names the machines use",
		labels.Claim("INF-01"), labels.OS(linux), func(ctx context.Context) {
			v, err := f.ClientSet.Discovery().ServerVersion()
			framework.ExpectNoError(err)
			version, _, _ := strings.Cut(v.GitVersion, "+")
			if want := e2e.Options.ExpectVersion; want != "" {
				gomega.Expect(version).To(gomega.Equal(want), "the API server runs %s, the cluster was made at %s", version, want)
			}
			cfg, err := framework.LoadConfig()
			framework.ExpectNoError(err)
			u, err := url.Parse(cfg.Host)
			framework.ExpectNoError(err)
			cert := serverCertificate(ctx, cfg, u.Host)
			names := []string{u.Hostname()}
			for _, s := range strings.Split(e2e.Options.ExpectSANs, ",") {
				if s = strings.TrimSpace(s); s != "" {
					names = append(names, s)
				}
			}
			for _, n := range names {
				framework.ExpectNoError(cert.VerifyHostname(n), "the API server's certificate is not valid for %q, which machines use to reach it", n)
			}
			framework.Logf("API server %s at %s; certificate valid for %v (DNS %v, IP %v)", version, u.Host, names, cert.DNSNames, cert.IPAddresses)
		})

	ginkgo.DescribeTable("INF-06: flannel networks the pods of every node", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		e2e.Nodes(fs, os, 1)
		ds := flannelDaemonSet(ctx, f, os)
		gomega.Expect(ds.Status.NumberReady).To(gomega.Equal(ds.Status.DesiredNumberScheduled), "flannel %s/%s: %d of %d ready", ds.Namespace, ds.Name, ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
		for _, n := range fs.Select(facts.Query{OS: os, Real: true}) {
			node, err := f.ClientSet.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			framework.ExpectNoError(err)
			backend := node.Annotations["flannel.alpha.coreos.com/backend-type"]
			gomega.Expect(backend).NotTo(gomega.BeEmpty(), "node %s carries no flannel back end: flannel has not set it up", n.Name)
			if backend == "vxlan" {
				var data struct{ VNI int }
				framework.ExpectNoError(json.Unmarshal([]byte(node.Annotations["flannel.alpha.coreos.com/backend-data"]), &data))
				gomega.Expect(data.VNI).To(gomega.Equal(4096), "node %s: vxlan VNI %d; Windows nodes need 4096", n.Name, data.VNI)
			}
			framework.Logf("node %s (%s): flannel %s, %s", n.Name, os, backend, node.Annotations["flannel.alpha.coreos.com/backend-data"])
		}
	},
		ginkgo.Entry("windows", labels.Claim("INF-06"), labels.OS(windowsOS), labels.Needs("windows-node"), windowsOS),
		ginkgo.Entry("linux", labels.Claim("INF-06"), labels.OS(linux), linux),
	)

	ginkgo.It("INF-07: kube-proxy runs on the Windows nodes in kernel-space mode", labels.Claim("INF-07"), labels.OS(windowsOS), labels.Needs("windows-node"), func(ctx context.Context) {
		e2e.Nodes(e2e.Facts(ctx, f), windowsOS, 1)
		ds, err := f.ClientSet.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy-windows", metav1.GetOptions{})
		framework.ExpectNoError(err, "the Windows kube-proxy DaemonSet (winconform join installs it)")
		gomega.Expect(ds.Status.DesiredNumberScheduled).To(gomega.BeNumerically(">", 0))
		gomega.Expect(ds.Status.NumberReady).To(gomega.Equal(ds.Status.DesiredNumberScheduled))
		cm, err := f.ClientSet.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-proxy-windows", metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(strings.Join(mapValues(cm.Data), "\n")).To(gomega.ContainSubstring("kernelspace"), "kube-proxy's Windows configuration is not kernelspace mode")
	})

	ginkgo.It("INF-09: Windows machines of different builds join one cluster, each labelled with its build", labels.Claim("INF-09"), labels.OS(windowsOS), labels.Needs("windows-node"), func(ctx context.Context) {
		nodes := e2e.Nodes(e2e.Facts(ctx, f), windowsOS, 2)
		builds := map[string]string{}
		for _, n := range nodes {
			gomega.Expect(n.WindowsBuild).NotTo(gomega.BeEmpty(), "node %s has no %s label", n.Name, facts.LabelWindowsBuild)
			gomega.Expect(n.KernelVersion).To(gomega.HavePrefix(n.WindowsBuild), "node %s: build label %s, kernel %s", n.Name, n.WindowsBuild, n.KernelVersion)
			builds[n.WindowsBuild] = n.Name
		}
		if len(builds) < 2 {
			skips.Skip(skips.TooFewNodes, fmt.Sprintf("the Windows nodes all run build %v", mapKeys(builds)))
		}
	})

	ginkgo.It("INF-02: each inventory machine is a Ready node with kubernetes.io/os=windows", labels.Claim("INF-02"), labels.OS(windowsOS), labels.Needs("inventory"), func(ctx context.Context) {
		inv, _ := machines()
		for _, m := range inv.Machines {
			n, err := f.ClientSet.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
			framework.ExpectNoError(err, "machine %s is no node: run winconform join --inventory %s", m.Name, e2e.Options.Inventory)
			fn := facts.FromNode(n)
			gomega.Expect(fn.OS).To(gomega.Equal(windowsOS), "node %s", m.Name)
			gomega.Expect(fn.Ready).To(gomega.BeTrue(), "node %s is not Ready", m.Name)
		}
	})

	ginkgo.It("INF-03: the join started the node's services in the documented order", labels.Claim("INF-03"), labels.OS(windowsOS), labels.Needs("inventory"), func() {
		inv, _ := machines()
		for _, m := range inv.Machines {
			path := filepath.Join(e2e.Options.WindowsArtifacts, m.Name, "join-report.json")
			data, err := os.ReadFile(path)
			if err != nil {
				skips.Skip(skips.Reason{Key: "no-join-report", Text: "no join report (winconform join writes one)"}, path)
			}
			var rep windows.JoinReport
			framework.ExpectNoError(json.Unmarshal(data, &rep), path)
			gomega.Expect(rep.ComponentOrder()).To(gomega.Equal([]string{"runtime", "kubelet", "kube-proxy", "cni"}), "machine %s: order %v", m.Name, rep.Order)
		}
	})

	ginkgo.It("INF-04: joining a joined machine again changes nothing", labels.Claim("INF-04"), labels.OS(windowsOS), labels.Needs("inventory"), func(ctx context.Context) {
		inv, conns := machines()
		cp := controlPlane(f)
		for _, m := range inv.Machines {
			rep, err := windows.Join(ctx, m, conns[m.Name], cp, windows.JoinOptions{Log: ginkgo.GinkgoWriter})
			framework.ExpectNoError(err, "joining %s again", m.Name)
			var changed []string
			for _, s := range rep.Steps {
				if s.Changed {
					changed = append(changed, s.Name)
				}
			}
			gomega.Expect(changed).To(gomega.BeEmpty(), "a second join of %s changed %v", m.Name, changed)
		}
	})

	ginkgo.It("INF-05: a reset machine leaves the cluster cleanly and can join again", labels.Claim("INF-05"), labels.OS(windowsOS), labels.Needs("inventory"), labels.Needs("disruptive"), func(ctx context.Context) {
		inv, conns := machines()
		if !e2e.Options.Disruptive {
			skips.Skip(skips.Reason{Key: "not-disruptive", Text: "resetting and rejoining machines is disruptive: pass --disruptive to allow it"})
		}
		cp := controlPlane(f)
		m := inv.Machines[0]
		_, err := windows.Reset(ctx, m, conns[m.Name], cp, windows.ResetOptions{Log: ginkgo.GinkgoWriter})
		framework.ExpectNoError(err, "resetting %s", m.Name)
		_, err = f.ClientSet.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
		gomega.Expect(err).To(gomega.HaveOccurred(), "node %s is still there after the reset", m.Name)
		rep, err := windows.Join(ctx, m, conns[m.Name], cp, windows.JoinOptions{Log: ginkgo.GinkgoWriter})
		framework.ExpectNoError(err, "joining %s again after the reset", m.Name)
		gomega.Expect(rep.Changed()).To(gomega.BeTrue())
	})

	ginkgo.It("INF-08: the Defender exclusions cover the runtime and node binaries", labels.Claim("INF-08"), labels.OS(windowsOS), labels.Needs("inventory"), func(ctx context.Context) {
		inv, conns := machines()
		paths, processes := windows.DefenderExclusions()
		checked := 0
		for _, m := range inv.Machines {
			if !m.DefenderExclusions {
				continue
			}
			checked++
			res, err := conns[m.Name].RunPS(ctx, "defender exclusions", "$p = Get-MpPreference; @{paths=@($p.ExclusionPath); processes=@($p.ExclusionProcess)} | ConvertTo-Json -Compress")
			framework.ExpectNoError(err)
			framework.ExpectNoError(res.Err())
			var got struct{ Paths, Processes []string }
			framework.ExpectNoError(json.Unmarshal([]byte(strings.TrimSpace(res.Stdout)), &got), res.Stdout)
			for _, p := range paths {
				gomega.Expect(containsFold(got.Paths, p)).To(gomega.BeTrue(), "machine %s excludes no path %s", m.Name, p)
			}
			for _, p := range processes {
				gomega.Expect(containsFold(got.Processes, p)).To(gomega.BeTrue(), "machine %s excludes no process %s", m.Name, p)
			}
		}
		if checked == 0 {
			skips.Skip(skips.Reason{Key: "no-defender-machine", Text: "no inventory machine asks for Defender exclusions (defenderExclusions: true)"})
		}
	})
})

// serverCertificate is the API server's certificate, checked against the
// cluster's CA.
func serverCertificate(ctx context.Context, cfg *rest.Config, hostport string) *x509.Certificate {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	framework.ExpectNoError(err)
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: tlsCfg}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := d.DialContext(cctx, "tcp", hostport)
	framework.ExpectNoError(err, "a TLS connection to the API server at %s", hostport)
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0]
}

func flannelDaemonSet(ctx context.Context, f *framework.Framework, os string) *appsv1.DaemonSet {
	list, err := f.ClientSet.AppsV1().DaemonSets("kube-flannel").List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "flannel's namespace kube-flannel")
	for i, ds := range list.Items {
		if ds.Spec.Template.Spec.NodeSelector[corev1.LabelOSStable] == os {
			return &list.Items[i]
		}
	}
	framework.Failf("no flannel DaemonSet in kube-flannel selects kubernetes.io/os=%s", os)
	return nil
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func mapKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func containsFold(list []string, v string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, v) })
}
