// Package e2e joins the harness's own helpers to the upstream e2e framework
// (k8s.io/kubernetes/test/e2e/framework): a framework per spec container, the
// cluster's facts, node choice that skips with a reason, pods started and
// awaited, and the probe run inside a pod.
package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/framework/artifacts"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/framework/skips"
)

// PodStartTimeout bounds the wait for test pods to turn Ready.
const PodStartTimeout = 3 * time.Minute

// NewFramework returns the e2e framework for a spec container: each spec gets
// a fresh namespace, deleted after it (also when it fails or the run is
// interrupted). Probe pods run as root (raw ICMP), so the namespace enforces
// the baseline pod security level rather than restricted.
//
// When a spec fails, its bundle is kept, redacted, under <report
// dir>/artifacts/<spec>/ before the namespace goes (KeepArtifacts).
func NewFramework(baseName string) *framework.Framework {
	f := framework.NewDefaultFramework(baseName)
	f.NamespacePodSecurityLevel = admissionapi.LevelBaseline
	ginkgo.JustAfterEach(func(ctx context.Context) {
		r := ginkgo.CurrentSpecReport()
		if !r.Failed() || f.Namespace == nil || framework.TestContext.ReportDir == "" {
			return
		}
		KeepArtifacts(context.WithoutCancel(ctx), f.ClientSet, f.Namespace.Name, r.FullText())
	})
	return f
}

// ArtifactsEntry is the report entry that names a failed spec's artifacts
// directory, relative to the report directory.
const ArtifactsEntry = "winconform.artifacts"

// KeepArtifacts keeps the bundle of the failed spec, redacted
// (artifacts.Bundle): what namespace ns holds (pods described, as YAML,
// their logs; events) and, for the spec's window (from its start), the
// logs of the nodes its pods ran on through the node log query, their
// kube-proxy and CNI agents' logs, and a Windows node's HNS state. It
// names the bundle in the spec's report, and says once per node that one
// serves no log query, and what to set. The whole bundle is bounded
// (BundleTimeout).
func KeepArtifacts(ctx context.Context, cs kubernetes.Interface, ns, spec string) {
	if framework.TestContext.ReportDir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, BundleTimeout)
	defer cancel()
	rel := filepath.Join(artifacts.Dir, artifacts.Slug(spec))
	hns := &hnsNamespace{cs: cs}
	defer hns.remove(context.WithoutCancel(ctx))
	since := ginkgo.CurrentSpecReport().StartTime
	if since.IsZero() {
		since = time.Now().Add(-BundleTimeout)
	}
	files, unserved, err := artifacts.Bundle(ctx, cs, ns, filepath.Join(framework.TestContext.ReportDir, rel), artifacts.Nodes{
		Since: since.Add(-bundleMargin), Until: time.Now().Add(bundleMargin), HNS: hns.get,
	})
	if err != nil {
		framework.Logf("the failed spec's bundle: some of its namespace could not be kept: %v", err)
	}
	for _, u := range unserved {
		if _, said := unservedSaid.LoadOrStore(u.Node, true); !said {
			framework.Logf("%v (said once per node)", u)
		}
	}
	if len(files) > 0 {
		ginkgo.AddReportEntry(ArtifactsEntry, rel, ginkgo.ReportEntryVisibilityNever)
		framework.Logf("the failed spec's bundle (%d files) in %s", len(files), rel)
	}
}

// BundleTimeout bounds a failed spec's bundle; bundleMargin widens its
// window on both sides.
const (
	BundleTimeout = 2 * time.Minute
	bundleMargin  = 30 * time.Second
)

// unservedSaid are the nodes said to serve no log query.
var unservedSaid sync.Map

// hnsNamespace is the namespace a bundle's HNS pods run in, made when a
// Windows node needs one: it admits HostProcess pods (privileged) and is
// the run's (swept if the run is killed); it goes with the bundle.
type hnsNamespace struct {
	cs   kubernetes.Interface
	once sync.Once
	name string
	err  error
}

func (h *hnsNamespace) get(ctx context.Context) (string, error) {
	h.once.Do(func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "winconform-bundle-",
			Labels: map[string]string{admissionapi.EnforceLevelLabel: string(admissionapi.LevelPrivileged)}}}
		Run().Mark(ns)
		got, err := h.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err != nil {
			h.err = fmt.Errorf("a namespace for its HostProcess pod: %w", err)
			return
		}
		h.name = got.Name
	})
	return h.name, h.err
}

func (h *hnsNamespace) remove(ctx context.Context) {
	if h.name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := h.cs.CoreV1().Namespaces().Delete(ctx, h.name, metav1.DeleteOptions{}); err != nil {
		framework.Logf("the bundle's namespace %s stays (the run's sweep removes it): %v", h.name, err)
	}
}

// Facts returns the cluster's facts, discovered once per run.
func Facts(ctx context.Context, f *framework.Framework) *facts.Facts {
	fs, err := facts.Get(ctx, f.ClientSet)
	framework.ExpectNoError(err, "discovering the cluster's facts")
	return fs
}

// Nodes returns n distinct Ready nodes of os that run a real kubelet, and
// records that the spec's result comes from real nodes of that OS
// (evidence windows-node or linux); or skips the spec with the reason the
// cluster cannot offer them. Real nodes come first: where real nodes of os
// exist but too few are Ready, the spec fails with their conditions; it
// never falls back to simulated ones.
func Nodes(fs *facts.Facts, os string, n int) []facts.Node {
	ready := fs.Select(facts.Query{OS: os, Real: true, Ready: true})
	if len(ready) >= n {
		evidence.AddRecords(NodeRecords(os, ready[:n])...)
		return ready[:n]
	}
	real := fs.Select(facts.Query{OS: os, Real: true})
	all := fs.Select(facts.Query{OS: os})
	switch {
	case len(all) == 0 && os == labels.Windows:
		skips.Skip(skips.NoWindowsNode)
	case len(real) == 0 && len(all) > 0:
		skips.Skip(skips.SimulatedOnly, fmt.Sprintf("%d simulated %s node(s)", len(all), os))
	case len(real) > len(ready):
		var notReady []string
		for _, node := range real {
			if !node.Ready {
				notReady = append(notReady, fmt.Sprintf("%s (%s)", node.Name, node.Condition))
			}
		}
		framework.Failf("needs %d Ready %s node(s), and %d of the cluster's %d are not Ready: %s", n, os, len(real)-len(ready), len(real), strings.Join(notReady, "; "))
	default:
		skips.Skip(skips.TooFewNodes, fmt.Sprintf("needs %d Ready %s nodes with a kubelet, found %d", n, os, len(ready)))
	}
	return nil
}

// NodeRecords are the evidence of a result obtained on real nodes of os:
// on Windows nodes one record per build (their node.kubernetes.io/windows-build
// label), so that a gate for a build counts only what was seen on it.
func NodeRecords(os string, nodes []facts.Node) []evidence.Record {
	return evidence.Records(NodeLevel(os), fmt.Sprintf("real %s node(s)", os), "", On(nodes...))
}

// On lists nodes as evidence.On: each with its Windows build.
func On(nodes ...facts.Node) []evidence.On {
	out := make([]evidence.On, len(nodes))
	for i, n := range nodes {
		out[i] = evidence.On{Name: n.Name, Build: n.WindowsBuild}
	}
	return out
}

// OSEntries are the entries of a table over OS for claim id, from its
// catalogue entry: one per OS the claim is about, then a Linux twin when
// the claim is not about Linux (the same code on Linux nodes: it checks the
// machinery, and supports the claim without showing it). Each entry passes
// its OS, as a string, to the table's body; a spec states only what differs.
func OSEntries(id string) []ginkgo.TableEntry {
	c := claims.MustGet(id)
	var out []ginkgo.TableEntry
	for _, os := range c.OSes {
		out = append(out, ginkgo.Entry(string(os), labels.For(id, os), string(os)))
	}
	if !c.About(corev1.Linux) {
		out = append(out, ginkgo.Entry("linux twin", labels.For(id, corev1.Linux), labels.Linux))
	}
	return out
}

// NodeLevel is the evidence level of a result obtained on real nodes of os.
func NodeLevel(os string) claims.Level {
	if os == labels.Windows {
		return claims.WindowsNode
	}
	return claims.Linux
}

// MarkSimulated records that the current spec ran against the real control
// plane with simulated (kwok) Windows nodes, and why that is enough for
// what it checks (evidence scheduler); reports show it.
func MarkSimulated(why string) {
	evidence.Add(claims.Scheduler, "simulated Windows nodes (kwok): "+why)
}

// API records that the current spec's result comes from the API server
// alone (validation, admission, what it stores), what saying on what.
func API(what string) {
	evidence.Add(claims.API, what)
}

// StartPods creates pods in the spec's namespace, waits until every one is
// Ready, and returns them as the API server has them (with IPs and nodes).
func StartPods(ctx context.Context, f *framework.Framework, pods ...*corev1.Pod) []*corev1.Pod {
	client := f.ClientSet.CoreV1().Pods(f.Namespace.Name)
	for _, p := range pods {
		_, err := client.Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "creating pod %s", p.Name)
	}
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		got, err := AwaitPod(ctx, f.ClientSet, f.Namespace.Name, p.Name, PodStartTimeout, PodReady)
		framework.ExpectNoError(err, "pod %s did not turn Ready (%s)", p.Name, PodState(got))
		out[i] = got
	}
	return out
}

// Connect runs `probe connect` with targets inside pod (which runs the probe
// image) and returns one result per target. It fails the spec when the probe
// itself could not run: that is not a blocked path.
func Connect(ctx context.Context, f *framework.Framework, pod *corev1.Pod, targets ...string) []probeclient.Result {
	ginkgo.By(fmt.Sprintf("probing from pod %s (%s, node %s): %v", pod.Name, PodOS(pod), pod.Spec.NodeName, targets))
	stdout, stderr, err := Tool(ctx, f, pod, "", probeclient.ConnectArgs(5, 2, targets)...)
	framework.ExpectNoError(err, "the probe in pod %s could not run (stderr: %s)", pod.Name, stderr)
	results, err := probeclient.Parse(stdout, targets)
	framework.ExpectNoError(err, "reading the probe's output")
	return results
}

// Limitation starts the ledger entry of claim id's documented limitation
// on this cluster: statement, documents, era and the expectation for this
// server version and CNI, from the catalogue (ledger.New).
func Limitation(ctx context.Context, f *framework.Framework, id string) ledger.Entry {
	fs := Facts(ctx, f)
	return ledger.New(id, ledger.Cluster{Server: fs.ServerVersion, CNI: fs.CNI})
}

// RecordLimitation records e in the limitation ledger, with the server
// version when e names none, and applies the ledger's rules to the spec: a
// regression (expected to work on this server version, observed limited)
// fails it; drift (the documented limitation no longer holds) is reported,
// and fails it only under --strict-drift; an entry with nothing observed
// (or observed on a simulated node) ends the spec as inconclusive.
func RecordLimitation(ctx context.Context, f *framework.Framework, e ledger.Entry) ledger.Entry {
	if e.Server == "" {
		e.Server = Facts(ctx, f).ServerVersion
	}
	e = ledger.Record(e)
	switch {
	case e.Verdict == ledger.Inconclusive:
		evidence.Inconclusive(fmt.Sprintf("%s: %s", e.Claim, e.Evidence))
	case e.Verdict == ledger.Regressed:
		framework.Failf("%s regressed: expected to work on %s (%s), observed limited: %s", e.Claim, e.Server, e.Why, e.Evidence)
	case e.Verdict == ledger.Lifted && Options.StrictDrift:
		framework.Failf("%s: the documented limitation no longer holds on %s (--strict-drift): %s", e.Claim, e.Server, e.Evidence)
	}
	return e
}
