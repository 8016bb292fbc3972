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
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/framework/verdicts"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
)

const (
	linux     = labels.Linux
	windowsOS = labels.Windows
)

// machines loads the inventory and connects to its machines, or skips,
// and asks each what it is (windows.Identify): the spec's evidence is the
// real machines (windows-machine, with the build each reported), recorded
// only once every one answered. A machine that cannot say what it is (one
// the harness simulates, say) fails the spec.
func machines(ctx context.Context) (*config.Inventory, map[string]*remote.WinRM, map[string]windows.Identity) {
	if e2e.Options.Inventory == "" {
		skips.Skip(skips.NoInventory)
	}
	inv, err := e2e.Inventory()
	framework.ExpectNoError(err)
	conns, err := windows.Connect(inv)
	framework.ExpectNoError(err)
	ids := map[string]windows.Identity{}
	var on []evidence.On
	for _, m := range inv.Machines {
		id, err := windows.Identify(ctx, conns[m.Name])
		framework.ExpectNoError(err, "machine %s did not say what it is over WinRM", m.Name)
		ids[m.Name] = id
		on = append(on, evidence.On{Name: m.Name, Build: id.Build, Machine: true, Note: id.Caption + ", " + id.Build})
	}
	evidence.AddOn(claims.WindowsMachine, "Windows machine(s) that answered over WinRM:", on...)
	return inv, conns, ids
}

// fleetOptions join and reset the machines over the suite's connections,
// logging to the spec's output.
func fleetOptions(conns map[string]*remote.WinRM) windows.FleetOptions {
	return windows.FleetOptions{Log: ginkgo.GinkgoWriter, Connect: func(m config.Machine) (windows.Conn, error) {
		if c := conns[m.Name]; c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("no connection to machine %s", m.Name)
	}}
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
		labels.For("INF-01", corev1.Linux), func(ctx context.Context) {
			v, err := f.ClientSet.Discovery().ServerVersion()
			framework.ExpectNoError(err)
			version, _, _ := strings.Cut(v.GitVersion, "+")
			partial, err := verdicts.ControlPlaneVersion(version, e2e.Options.ExpectVersion)
			framework.ExpectNoError(err)
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
			if partial != "" {
				evidence.PartialOn(claims.Linux, fmt.Sprintf("the cluster's API server %s at %s", version, u.Host), partial)
			} else {
				evidence.Addf(claims.Linux, "the cluster's API server %s at %s", version, u.Host)
			}
		})

	ginkgo.It("INF-09: Windows machines of different builds join one cluster, each labelled with its build", labels.For("INF-09", corev1.Windows), func(ctx context.Context) {
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

	ginkgo.It("INF-02: each inventory machine joined: its node is a Ready Windows node that its own kubelet runs", labels.For("INF-02", corev1.Windows), func(ctx context.Context) {
		inv, _, ids := machines(ctx)
		for _, m := range inv.Machines {
			n, err := f.ClientSet.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
			framework.ExpectNoError(err, "machine %s is no node: run winconform join --inventory %s", m.Name, e2e.Options.Inventory)
			framework.ExpectNoError(ids[m.Name].Joined(n), "machine %s", m.Name)
			framework.Logf("machine %s (%s, build %s, systemUUID %s) is node %s", m.Name, ids[m.Name].Caption, ids[m.Name].Build, ids[m.Name].SystemUUID, n.Name)
		}
	})

	ginkgo.It("INF-03: the node's services started in the documented order, as the machine tells", labels.For("INF-03", corev1.Windows), func(ctx context.Context) {
		inv, conns, _ := machines(ctx)
		for _, m := range inv.Machines {
			res, err := conns[m.Name].RunPS(ctx, "process start times", startTimesScript)
			framework.ExpectNoError(err, "machine %s", m.Name)
			framework.ExpectNoError(res.Err(), "machine %s", m.Name)
			order, err := startOrder(res.Stdout)
			framework.ExpectNoError(err, "machine %s", m.Name)
			gomega.Expect(order.names()).To(gomega.Equal(nodeServices), "machine %s: the processes started in another order than the documented one: %s", m.Name, order)
			framework.Logf("machine %s: %s", m.Name, order)
		}
	})

	// Serial: it runs the join on every machine again, which would restart
	// a node's services if anything differed, under the specs on the node.
	ginkgo.It("INF-04: joining a joined machine again changes nothing", labels.For("INF-04", corev1.Windows), ginkgo.Serial, func(ctx context.Context) {
		inv, conns, _ := machines(ctx)
		results, _ := windows.JoinAll(ctx, inv.Machines, controlPlane(f), fleetOptions(conns))
		gomega.Expect(results).To(gomega.HaveLen(len(inv.Machines)), "the join stopped before every machine was tried")
		for _, r := range results {
			framework.ExpectNoError(r.Err, "joining %s again", r.Machine)
			var changed []string
			for _, s := range r.Report.Steps {
				if s.Changed {
					changed = append(changed, s.Name)
				}
			}
			gomega.Expect(changed).To(gomega.BeEmpty(), "a second join of %s changed %v", r.Machine, changed)
		}
	})

	// Serial: it takes a node out of the cluster and joins it again.
	ginkgo.It("INF-05: a reset machine leaves the cluster cleanly and can join again", labels.For("INF-05", corev1.Windows), ginkgo.Serial, func(ctx context.Context) {
		inv, conns, _ := machines(ctx)
		if !e2e.Options.Disruptive {
			skips.Skip(skips.NotDisruptive.Saying("resetting and rejoining machines is disruptive: pass --disruptive to allow it"))
		}
		cp := controlPlane(f)
		m := inv.Machines[0]
		reset, err := windows.ResetAll(ctx, inv.Machines[:1], cp, fleetOptions(conns))
		gomega.Expect(reset).To(gomega.HaveLen(1), "resetting %s: %v", m.Name, err)
		framework.ExpectNoError(reset[0].Err, "resetting %s", m.Name)
		_, err = f.ClientSet.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
		gone, err := verdicts.NodeGone(err)
		framework.ExpectNoError(err, "reading node %s after the reset", m.Name)
		gomega.Expect(gone).To(gomega.BeTrue(), "node %s is still there after the reset", m.Name)
		joined, err := windows.JoinAll(ctx, inv.Machines[:1], cp, fleetOptions(conns))
		gomega.Expect(joined).To(gomega.HaveLen(1), "joining %s again after the reset: %v", m.Name, err)
		framework.ExpectNoError(joined[0].Err, "joining %s again after the reset", m.Name)
		gomega.Expect(joined[0].Report.Changed()).To(gomega.BeTrue())
	})

	ginkgo.It("INF-08: the Defender exclusions cover the runtime and node binaries", labels.For("INF-08", corev1.Windows), func(ctx context.Context) {
		inv, conns, _ := machines(ctx)
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
			skips.Skip(skips.NoDefenderMachine)
		}
	})
})

var _ = ginkgo.Describe("flannel", labels.Suite("infra"), func() {
	f := e2e.NewFramework("infra-flannel")

	ginkgo.DescribeTable("INF-06: flannel networks pods across Linux and Windows nodes", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		ginkgo.By("the API's state: flannel's DaemonSet ready, each node's back end set up")
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

		// The claim is about pod traffic across the OSes: the API's
		// state is only part of it.
		peerOS := windowsOS
		if os == windowsOS {
			peerOS = linux
		}
		if len(fs.Select(facts.Query{OS: peerOS, Real: true})) == 0 {
			partial, err := verdicts.CrossOS(fmt.Sprintf("the cluster has no real %s node to reach from node %s", peerOS, node.Name), nil)
			framework.ExpectNoError(err)
			evidence.PartialOn(e2e.NodeLevel(os), "flannel's state on", partial, e2e.On(node)...)
			return
		}
		peer := e2e.Nodes(fs, peerOS, 1)[0]
		ginkgo.By(fmt.Sprintf("pod traffic from a %s pod on %s to a %s pod on %s", os, node.Name, peerOS, peer.Name))
		pods := e2e.StartPods(ctx, f, ospod.Probe("flannel-from", os, ospod.OnNode(node)), ospod.Probe("flannel-to", peerOS, ospod.OnNode(peer)))
		target := fmt.Sprintf("http://%s/json", net.JoinHostPort(pods[1].Status.PodIP, strconv.Itoa(ospod.HTTPPort)))
		r := e2e.Connect(ctx, f, pods[0], target)[0]
		partial, err := verdicts.CrossOS("", &r)
		framework.ExpectNoError(err)
		gomega.Expect(partial).To(gomega.BeEmpty())
		framework.Logf("%s pod %s on %s reached %s pod %s on %s: %s", os, pods[0].Name, node.Name, peerOS, pods[1].Name, peer.Name, r.Describe())
	},
		e2e.OSEntries("INF-06"),
	)
})

var _ = ginkgo.Describe("kube-proxy's mode", labels.Suite("infra"), func() {
	f := e2e.NewFramework("infra-proxy")
	// A pod on the host's network (a HostProcess pod on Windows) reads
	// kube-proxy's own answer.
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.DescribeTable("INF-07: kube-proxy reports the mode it runs in, from the node", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		mode := proxyMode(ctx, f, node, os)
		if os == windowsOS {
			gomega.Expect(mode).To(gomega.Equal("kernelspace"), "kube-proxy on Windows node %s runs in mode %q", node.Name, mode)
		} else {
			// The Linux twin: the same reading, which must name a mode of
			// Linux kube-proxy.
			gomega.Expect(mode).To(gomega.BeElementOf("iptables", "ipvs", "nftables"), "kube-proxy on Linux node %s answers %q", node.Name, mode)
		}
		framework.Logf("kube-proxy on %s node %s: mode %s (from its /proxyMode on the node)", os, node.Name, mode)
	},
		e2e.OSEntries("INF-07"),
	)
})

// proxyMode asks kube-proxy on node for its mode (GET /proxyMode on its
// metrics port, 127.0.0.1:10249) from a pod on the node's network: a
// HostProcess pod on Windows, a hostNetwork pod on Linux.
func proxyMode(ctx context.Context, f *framework.Framework, node facts.Node, os string) string {
	const url = "http://127.0.0.1:10249/proxyMode"
	p := ospod.Probe("proxy-mode", os, ospod.OnNode(node))
	p.Spec.HostNetwork = true
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	c := &p.Spec.Containers[0]
	c.Command, c.Ports, c.ReadinessProbe = ospod.ProbeCommand(os, "connect", "--timeout=5s", "--attempts=3", url), nil, nil
	if os == windowsOS {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
			HostProcess: ptr.To(true), RunAsUserName: ptr.To(`NT AUTHORITY\SYSTEM`)}}
		// A HostProcess container sees the host's files; its image's are
		// under %CONTAINER_SANDBOX_MOUNT_POINT%.
		c.Command = append([]string{`%CONTAINER_SANDBOX_MOUNT_POINT%\probe\probe.exe`}, c.Command[1:]...)
	}
	_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	framework.ExpectNoError(e2epod.WaitForPodSuccessInNamespaceTimeout(ctx, f.ClientSet, p.Name, f.Namespace.Name, e2e.StartTimeout(os)),
		"the pod that asks kube-proxy on %s for its mode did not succeed", node.Name)
	logs, err := e2epod.GetPodLogs(ctx, f.ClientSet, f.Namespace.Name, p.Name, c.Name)
	framework.ExpectNoError(err)
	rs, err := probeclient.Parse(logs, []string{url})
	framework.ExpectNoError(err)
	gomega.Expect(rs[0].OK).To(gomega.BeTrue(), "kube-proxy on %s did not answer: %s", node.Name, rs[0].Describe())
	return strings.TrimSpace(rs[0].Detail.Body)
}

// nodeServices are the node's processes in the documented start order:
// container runtime, kubelet, kube-proxy, CNI agent.
var nodeServices = []string{"containerd", "kubelet", "kube-proxy", "flanneld"}

// startTimesScript prints, as JSON, the start time of the oldest process
// of each of nodeServices (null when none runs).
const startTimesScript = `$out = foreach ($n in 'containerd','kubelet','kube-proxy','flanneld') {
  $p = Get-Process -Name $n -ErrorAction SilentlyContinue | Sort-Object StartTime | Select-Object -First 1
  $t = $null
  if ($p) { $t = $p.StartTime.ToUniversalTime().ToString('o') }
  [pscustomobject]@{ name = $n; start = $t }
}
ConvertTo-Json -Compress -InputObject @($out)`

// started is a process and when it started.
type started struct {
	Name  string    `json:"name"`
	Start time.Time `json:"start"`
}

type startList []started

func (l startList) names() []string {
	var out []string
	for _, s := range l {
		out = append(out, s.Name)
	}
	return out
}

func (l startList) String() string {
	var parts []string
	for _, s := range l {
		parts = append(parts, s.Name+" at "+s.Start.Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// startOrder reads startTimesScript's output and orders the processes by
// start time; a process that does not run is an error naming it.
func startOrder(out string) (startList, error) {
	var raw []struct {
		Name  string  `json:"name"`
		Start *string `json:"start"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &raw); err != nil {
		return nil, fmt.Errorf("reading the process start times %q: %w", out, err)
	}
	var l startList
	var missing []string
	for _, r := range raw {
		if r.Start == nil {
			missing = append(missing, r.Name)
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, *r.Start)
		if err != nil {
			return nil, fmt.Errorf("start time of %s: %w", r.Name, err)
		}
		l = append(l, started{Name: r.Name, Start: t})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no process of %s runs on the machine", strings.Join(missing, ", "))
	}
	sort.SliceStable(l, func(i, j int) bool { return l[i].Start.Before(l[j].Start) })
	return l, nil
}

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
