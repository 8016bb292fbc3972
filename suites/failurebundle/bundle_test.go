// Package failurebundle holds the failure bundle's live test: on a cluster
// the harness made (make test's), a spec made to fail leaves its bundle,
// with its node's kubelet and containerd logs of the spec's window read
// through the node log query, and its kube-proxy's log.
package failurebundle

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/artifacts"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/internal/kubefile"
)

// kubeconfigEnv names the kubeconfig of the cluster to run on.
const kubeconfigEnv = "WINCONFORM_BUNDLE_KUBECONFIG"

// The fault the test injects, and what the spec saw before it.
const fault = "the injected fault of the failure bundle's live test"

var (
	cs     kubernetes.Interface
	node   string
	report types.Report
)

var _ = ginkgo.Describe("a spec made to fail", func() {
	var ns string
	ginkgo.It("fails after its pod ran", func(ctx context.Context) {
		got, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "winconform-bundle-test-", Labels: e2e.RunLabels()}}, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ns = got.Name
		ginkgo.DeferCleanup(func(ctx context.Context) error {
			return cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		})
		p, err := cs.CoreV1().Pods(ns).Create(ctx, ospod.Probe("bundle", string(corev1.Linux)), metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err = cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, nil
		})
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "the spec's pod did not run")
		node = p.Spec.NodeName
		ginkgo.Fail(fault)
	})
	ginkgo.JustAfterEach(func(ctx context.Context) {
		if ginkgo.CurrentSpecReport().Failed() && ns != "" {
			e2e.KeepArtifacts(context.WithoutCancel(ctx), cs, ns, ginkgo.CurrentSpecReport().FullText())
		}
	})
})

var _ = ginkgo.ReportAfterSuite("the live test's report", func(r ginkgo.Report) { report = r })

// failing stands in for testing.T in RunSpecs: the suite is meant to fail.
type failing struct{ failed bool }

func (f *failing) Fail() { f.failed = true }

func TestAFailedSpecLeavesItsBundle(t *testing.T) {
	kc := os.Getenv(kubeconfigEnv)
	if kc == "" {
		t.Skipf("%s names no cluster (make test sets it to its cluster's kubeconfig)", kubeconfigEnv)
	}
	cfg, err := kubefile.REST(kubeconfigEnv, kc)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	framework.TestContext.KubeConfig = kc
	framework.TestContext.ReportDir = t.TempDir()
	if err := e2e.ApplyRunID(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var ft failing
	suite, reporter := ginkgo.GinkgoConfiguration()
	reporter.Verbose, reporter.NoColor = true, true
	gomega.RegisterFailHandler(ginkgo.Fail)
	if ginkgo.RunSpecs(&ft, "failure bundle", suite, reporter) || !ft.failed {
		t.Fatal("the spec made to fail passed")
	}
	if len(report.SpecReports) == 0 {
		t.Fatal("no report of the spec")
	}
	var sr types.SpecReport
	for _, r := range report.SpecReports {
		if r.LeafNodeType == types.NodeTypeIt {
			sr = r
		}
	}
	if !strings.Contains(sr.Failure.Message, fault) {
		t.Fatalf("the spec failed otherwise: %s", sr.Failure.Message)
	}
	var rel string
	for _, e := range sr.ReportEntries {
		if e.Name == e2e.ArtifactsEntry {
			rel = e.Value.String()
		}
	}
	if rel == "" || node == "" {
		t.Fatalf("the failed spec's report names no bundle (%q), or its pod ran nowhere (%q)", rel, node)
	}
	dir := filepath.Join(framework.TestContext.ReportDir, rel)
	if took := time.Since(start); took > 5*time.Minute {
		t.Errorf("the spec and its bundle took %s", took)
	}
	missing, _ := os.ReadFile(filepath.Join(dir, artifacts.NotCollectedFile))
	// What the kubelet runs: journalctl --utc --output=short-precise
	// (pkg/kubelet/kubelet_server_journal_linux.go), whose lines begin
	// "Nov 29 08:11:00.123456 host unit[pid]: ".
	stamp := regexp.MustCompile(`^([A-Z][a-z]{2} [ 0-9]\d \d{2}:\d{2}:\d{2})\.\d+ `)
	for _, svc := range artifacts.Services {
		path := filepath.Join(dir, "nodes", node, svc+".log")
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			t.Errorf("%s's %s log is not in the bundle (%v); not collected:\n%s", node, svc, err, missing)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		in := 0
		for _, l := range lines {
			if m := stamp.FindStringSubmatch(l); m != nil {
				at, err := time.ParseInLocation("Jan _2 15:04:05", m[1], time.UTC)
				if err != nil {
					continue
				}
				at = at.AddDate(sr.StartTime.Year(), 0, 0)
				if at.Before(sr.StartTime.Add(-2*time.Minute)) || at.After(time.Now().Add(time.Minute)) {
					t.Errorf("%s: a line from outside the spec's window: %q", path, l)
					break
				}
				in++
			}
		}
		if in == 0 {
			t.Errorf("%s: no journal line with a time (%d lines), want the node's own log of the window: %q", path, len(lines), lines[0])
		}
		if strings.Contains(string(missing), node+": "+svc) {
			t.Errorf("the bundle says %s's %s log was not collected:\n%s", node, svc, missing)
		}
	}
	proxies, _ := filepath.Glob(filepath.Join(dir, "nodes", node, "pods", "kube-system_kube-proxy-*_kube-proxy.log"))
	if len(proxies) != 1 {
		t.Errorf("kube-proxy's log of %s: %v; not collected:\n%s", node, proxies, missing)
	}
	t.Logf("the bundle of %s: %s; not collected: %q", node, dir, missing)
}
