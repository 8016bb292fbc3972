// Package networking asserts the documented network paths between pods,
// Services, nodes and the world outside the cluster, for Linux and Windows:
// a matrix of sources and targets probed in batches, compared with the
// documented limitations, and reported as a truth table.
package networking

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/framework/skips"
)

// matrixClaims are the path claims whose parts the matrix probes (the
// catalogue's parts; a LoadBalancer is a spec of its own).
func matrixClaims() []claims.Claim {
	var out []claims.Claim
	for _, c := range claims.All() {
		for _, p := range c.Parts {
			if slices.ContainsFunc(p.Modes, func(m string) bool { return slices.Contains(netmatrix.Modes, netmatrix.Mode(m)) }) {
				out = append(out, c)
				break
			}
		}
	}
	return out
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
			Machines: machines, Log: ginkgo.GinkgoWriter, Labels: e2e.RunLabels(), Annotations: e2e.RunAnnotations(),
		})
		ginkgo.DeferCleanup(func(ctx context.Context) {
			framework.ExpectNoError(dep.Cleanup(ctx), "removing the matrix's peers")
		})
		framework.ExpectNoError(err, "deploying the matrix's peers")
		dep.Matrix.Run(ctx, ginkgo.GinkgoWriter)
		if dir := framework.TestContext.ReportDir; dir != "" {
			written, err := dep.Matrix.Write(dir, e2e.Stamp())
			framework.ExpectNoError(err, "writing the truth table")
			record.AddMatrix(written)
		}
	})

	// A failing claim keeps the matrix's pods (their logs, descriptions)
	// and events, before the namespace goes.
	ginkgo.JustAfterEach(func(ctx context.Context) {
		r := ginkgo.CurrentSpecReport()
		if r.Failed() && dep != nil && dep.Namespace != "" {
			cs, err := framework.LoadClientset()
			if err == nil {
				e2e.KeepArtifacts(context.WithoutCancel(ctx), cs, dep.Namespace, r.FullText())
			}
		}
	})

	for _, c := range matrixClaims() {
		ginkgo.It(c.ID+": "+c.Title, labels.ForClaim(c.ID), func() { assertClaim(dep, c) })
	}

	ginkgo.It("paths no claim names (the matrix's control cells) work", ginkgo.Label(labels.UncataloguedLabel), labels.OS(linux), labels.OS(windows), func() {
		cells := dep.Matrix.Uncatalogued()
		if len(cells) == 0 {
			skips.Skip(skips.NoMatrixCells)
		}
		assertCells(dep, cells, "paths no claim names")
	})
})

// assertClaim fails when a cell of claim c failed (a regression, a wrong
// answer, a probe error, or a flaky cell without --allow-flaky), naming
// each such cell; it skips with the reason when the cluster has no cell for
// the claim; it records the documented limitation of each cell in the
// ledger (drift failing only with --strict-drift), and the evidence: the
// levels its cells were probed at, and the parts of the claim no cell
// probed (NET-01 across nodes, NET-20 from Windows pods, ...), which keep
// the claim from being shown.
func assertClaim(dep *netmatrix.Deployment, c claims.Claim) {
	cells := dep.Matrix.CellsFor(c.ID)
	if len(cells) == 0 {
		a, ok := dep.Absent[c.ID]
		if !ok {
			a = skips.NoMatrixCells.Saying("the matrix has no cell for this claim on this cluster")
		}
		skips.Skip(a)
	}
	if c.Limitation != nil {
		recordLimitations(dep, c, cells)
	}
	byLevel := assertCells(dep, cells, c.ID)
	probedParts := map[string]bool{}
	for _, cell := range cells {
		if probed(cell) {
			for _, p := range cell.Parts {
				if p.Claim == c.ID {
					probedParts[p.Part] = true
				}
			}
		}
	}
	level := claims.Linux
	if byLevel[claims.WindowsNode] > 0 {
		level = claims.WindowsNode
	}
	var seen []netmatrix.Evidence
	for _, ev := range dep.Matrix.Evidence(cells) {
		if ev.Level == level && level.OnWindows() {
			seen = append(seen, ev)
		}
	}
	for _, p := range netmatrix.PartsOf(c.ID) {
		if probedParts[p.Part] {
			continue
		}
		why := fmt.Sprintf("no cell probed %s", p.Part)
		if len(seen) == 0 {
			evidence.Partial(level, why)
		}
		for _, ev := range seen {
			evidence.AddRecords(checked(evidence.Record{Level: level, Partial: why, Build: ev.Build, Nodes: ev.Nodes}))
		}
	}
}

// checked is r without its build when that is none (a node whose build
// label is not 10.0.NNNNN): reports count it as unrecorded.
func checked(r evidence.Record) evidence.Record {
	if r.Check() != nil {
		r.Build = ""
	}
	return r
}

// probed says whether a cell's verdict is evidence (netmatrix.Cell.Decided:
// a probe error, a flaky cell, a limitation of a source that reached
// nothing decide nothing).
func probed(c *netmatrix.Cell) bool { return c.Decided() }

// assertCells fails on the failing cells of what, reports drift, and records
// the levels the probed cells were obtained at; it returns their counts.
func assertCells(dep *netmatrix.Deployment, cells []*netmatrix.Cell, what string) map[claims.Level]int {
	var failed, drifted []string
	byLevel := map[claims.Level]int{}
	for _, c := range cells {
		switch {
		case c.Verdict.Fails(e2e.Options.AllowFlaky):
			failed = append(failed, c.Describe())
		case c.Verdict == netmatrix.Drift:
			drifted = append(drifted, c.Describe())
		case c.Verdict == netmatrix.Flaky:
			framework.Logf("FLAKY (allowed by --allow-flaky) %s", c.Describe())
		}
		if probed(c) {
			byLevel[dep.Matrix.Level(c)]++
		}
	}
	for _, d := range drifted {
		framework.Logf("DRIFT %s", d)
	}
	if len(failed) > 0 {
		framework.Failf("%d of %d cells of %s failed:\n%s", len(failed), len(cells), what, strings.Join(failed, "\n"))
	}
	if len(drifted) > 0 && e2e.Options.StrictDrift {
		framework.Failf("%d cells of %s drifted from the documents (--strict-drift):\n%s", len(drifted), what, strings.Join(drifted, "\n"))
	}
	if len(byLevel) == 0 {
		skips.Skip(skips.NotProbed)
	}
	// What the decided cells were obtained on: a level and, on Windows,
	// the build of each Windows node the paths crossed.
	for _, ev := range dep.Matrix.Evidence(cells) {
		evidence.AddRecords(checked(evidence.Record{Level: ev.Level, Detail: fmt.Sprintf("%d matrix cell(s) probed", ev.Cells), Build: ev.Build, Nodes: ev.Nodes}))
	}
	framework.Logf("%s: %d cells as expected", what, len(cells))
	return byLevel
}

// recordLimitations puts, for each probed cell of limitation claim c, what
// it showed into the limitation ledger: the expectation is the matrix's
// (from the catalogue, through the ledger), the observation the cell's.
func recordLimitations(dep *netmatrix.Deployment, c claims.Claim, cells []*netmatrix.Cell) {
	cluster := ledger.Cluster{Server: dep.Matrix.Profile.ServerVersion, CNI: dep.Matrix.Profile.CNI}
	for _, cell := range cells {
		if !probed(cell) {
			continue
		}
		e := ledger.New(c.ID, cluster)
		e.Expected = ledger.Works
		if !cell.Expect.Reachable {
			e.Expected, e.Why = ledger.Limited, cell.Expect.Reason+" ("+cell.Expect.Doc+")"
		}
		switch cell.Observed {
		case netmatrix.Reachable:
			e.Observed = ledger.Works
		case netmatrix.Blocked:
			e.Observed = ledger.Limited
		default:
			e.Observed = ledger.Unobserved
		}
		if cell.Verdict == netmatrix.Flaky {
			e.Observed = ledger.Unobserved
		}
		e.Evidence = fmt.Sprintf("%s -> %s: %s (%s)", cell.Source, cell.Target, cell.Observed, cell.Repro)
		e.Source = "network matrix"
		ledger.Record(e)
	}
}

const (
	linux   = labels.Linux
	windows = labels.Windows
)
