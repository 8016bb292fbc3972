// Package networking asserts the documented network paths between pods,
// Services, nodes and the world outside the cluster, for Linux and Windows:
// a matrix of sources and targets probed in batches, compared with the
// documented limitations, and reported as a truth table.
package networking

import (
	"context"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/skips"
)

// matrixClaim is a NET claim the matrix evidences, with the OSes its cells span.
type matrixClaim struct {
	id, title string
	oses      []string
}

var matrixClaims = []matrixClaim{
	{"NET-01", "Windows pod to Windows pod by IP, same node and across nodes", []string{windows}},
	{"NET-02", "Windows pod to Windows pod by DNS name", []string{windows}},
	{"NET-03", "Windows pod to Linux pod by IP", []string{windows, linux}},
	{"NET-04", "Windows pod to Linux pod by DNS name", []string{windows, linux}},
	{"NET-05", "Linux pod to Windows pod by IP", []string{linux, windows}},
	{"NET-06", "Linux pod to Windows pod by DNS name", []string{linux, windows}},
	{"NET-07", "Linux pod to Linux pod by IP, same node and across nodes", []string{linux}},
	{"NET-08", "Linux pod to Linux pod by DNS name", []string{linux}},
	{"NET-09", "Linux pod to a Windows-backed Service by ClusterIP", []string{linux, windows}},
	{"NET-10", "Linux pod to a Windows-backed Service by name", []string{linux, windows}},
	{"NET-11", "Windows pod to a Linux-backed Service by ClusterIP", []string{windows, linux}},
	{"NET-12", "Windows pod to a Linux-backed Service by name", []string{windows, linux}},
	{"NET-13", "Windows pod to a Windows-backed Service by ClusterIP and name", []string{windows}},
	{"NET-14", "outside the cluster to a NodePort through a Windows node", []string{windows}},
	{"NET-15", "outside the cluster to a NodePort through a Linux node", []string{linux}},
	{"NET-16", "Linux pod to a server outside the cluster", []string{linux}},
	{"NET-17", "Windows pod to a server outside the cluster", []string{windows}},
	{"NET-18", "Linux control-plane node to a Windows pod's IP", []string{linux, windows}},
	{"NET-19", "Linux control-plane node to a Windows-backed ClusterIP", []string{linux, windows}},
	{"NET-20", "Windows and Linux pods to a Service by its fully qualified name", []string{linux, windows}},
	{"NET-21", "a Windows node's host cannot reach the ClusterIP of a Service whose pods it hosts", []string{windows}},
	{"NET-25", "ping between pods across hosts", []string{linux, windows}},
	{"NET-27", "a Windows node cannot reach a NodePort through its own address", []string{windows}},
}

var _ = ginkgo.Describe("network matrix", labels.Suite("networking"), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
	var dep *netmatrix.Deployment

	ginkgo.BeforeAll(func(ctx context.Context) {
		cfg, err := framework.LoadConfig()
		framework.ExpectNoError(err)
		cs, err := framework.LoadClientset()
		framework.ExpectNoError(err)
		fs, err := facts.Get(ctx, cs)
		framework.ExpectNoError(err)
		machines, err := e2e.Machines()
		framework.ExpectNoError(err, "connecting to the inventory's Windows machines")
		dep, err = netmatrix.Deploy(ctx, netmatrix.Env{
			Config: cfg, Clientset: cs, Facts: fs, Kubeconfig: framework.TestContext.KubeConfig,
			ClusterDomain: framework.TestContext.ClusterDNSDomain,
			ProbeBinary:   e2e.Options.ProbeBinary, ExternalURL: e2e.Options.ExternalURL,
			Machines: machines, Log: ginkgo.GinkgoWriter,
		})
		ginkgo.DeferCleanup(func(ctx context.Context) {
			framework.ExpectNoError(dep.Cleanup(ctx), "removing the matrix's peers")
		})
		framework.ExpectNoError(err, "deploying the matrix's peers")
		dep.Matrix.Run(ctx, ginkgo.GinkgoWriter)
		if dir := framework.TestContext.ReportDir; dir != "" {
			framework.ExpectNoError(dep.Matrix.Write(dir), "writing the truth table")
		}
	})

	for _, c := range matrixClaims {
		ls := []any{labels.Claim(c.id)}
		for _, os := range c.oses {
			ls = append(ls, labels.OS(os))
		}
		if slices.Contains(c.oses, windows) {
			ls = append(ls, labels.Needs("windows-node"))
		}
		ginkgo.It(c.id+": "+c.title, append(ls, func() { assertClaim(dep, c.id) })...)
	}
})

// assertClaim fails when a cell of claim is a regression or a probe error,
// naming each such cell; it skips with the reason when the cluster has no
// cell for the claim, and reports drift (failing only with --strict-drift).
func assertClaim(dep *netmatrix.Deployment, claim string) {
	cells := dep.Matrix.CellsFor(claim)
	if len(cells) == 0 {
		a, ok := dep.Absent[claim]
		if !ok {
			a = netmatrix.Absence{Key: "no-cells", Text: "the matrix has no cell for this claim on this cluster"}
		}
		skips.Skip(skips.Reason{Key: a.Key, Text: a.Text})
	}
	var failed, drifted []string
	probed := 0
	for _, c := range cells {
		switch c.Verdict {
		case netmatrix.Regression, netmatrix.Broken:
			failed = append(failed, c.Describe())
		case netmatrix.Drift:
			drifted = append(drifted, c.Describe())
		}
		if c.Verdict != netmatrix.Skipped {
			probed++
		}
	}
	for _, d := range drifted {
		ginkgo.AddReportEntry("drift", d)
		framework.Logf("DRIFT %s", d)
	}
	if len(failed) > 0 {
		framework.Failf("%d of %d cells of %s failed:\n%s", len(failed), len(cells), claim, strings.Join(failed, "\n"))
	}
	if len(drifted) > 0 && e2e.Options.StrictDrift {
		framework.Failf("%d cells of %s drifted from the documents (--strict-drift):\n%s", len(drifted), claim, strings.Join(drifted, "\n"))
	}
	if probed == 0 {
		skips.Skip(skips.Reason{Key: "not-probed", Text: "no cell of this claim could be probed"})
	}
	framework.Logf("%s: %d cells as expected", claim, len(cells))
}

const (
	linux   = labels.Linux
	windows = labels.Windows
)
