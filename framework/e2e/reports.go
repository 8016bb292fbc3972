package e2e

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
)

// GinkgoJSON is Ginkgo's complete report in the report directory.
const GinkgoJSON = "ginkgo/report.json"

// Stamp is this run's stamp: its run ID and this harness, which every JSON
// file of its report directory and its JUnit carry.
func Stamp() version.Stamp { return version.For(string(framework.RunID)) }

// reportDir is --report-dir, kept here while the e2e framework is told
// there is none (OwnReports).
var reportDir string

// OwnReports makes the harness the only writer of the run's reports: it
// hides --report-dir from the e2e framework while it reads its flags
// (framework.AfterReadingAllFlags), which would otherwise register its own
// JUnit writer (junit_01.xml, amended afterwards) and, with
// --report-complete-ginkgo, Ginkgo's JSON and a second, unamended JUnit
// (ginkgo/report.xml) that CI globs such as **/*.xml count twice. Call it
// instead of framework.AfterReadingAllFlags; WriteReports then writes one
// JUnit, once, and Ginkgo's JSON.
func OwnReports() {
	reportDir = framework.TestContext.ReportDir
	framework.TestContext.ReportDir = ""
	framework.AfterReadingAllFlags(&framework.TestContext)
	framework.TestContext.ReportDir = reportDir
	if reportDir == "" {
		return
	}
	if err := os.MkdirAll(filepath.Join(reportDir, filepath.Dir(GinkgoJSON)), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "winconform e2e: --report-dir %s: %v\n", reportDir, err)
		os.Exit(2)
	}
}

// WriteCluster keeps the cluster's facts in the report directory.
func WriteCluster(fs *facts.Facts) error {
	if framework.TestContext.ReportDir == "" {
		return nil
	}
	return reports.WriteCluster(framework.TestContext.ReportDir, Stamp(), fs)
}

// WriteReports writes the run's reports from Ginkgo's report r, after every
// run (also a failed or interrupted one): the summary (claims with their
// outcome and evidence, skips by reason), the limitation ledger, Ginkgo's
// JSON report, and the one JUnit file, with each test case's claims and
// evidence and the run's counts. It returns the summary.
func WriteReports(r ginkgo.Report) (reports.Summary, error) {
	dir := framework.TestContext.ReportDir
	s := reports.Summarize(r)
	s.Rerun, s.Stamp = Options.RerunOf, Stamp()
	if dir == "" {
		return s, nil
	}
	if err := s.Write(dir); err != nil {
		return s, err
	}
	entries, err := reports.Ledger(r)
	if err != nil {
		return s, err
	}
	if err := reports.WriteLedger(dir, s.Stamp, entries); err != nil {
		return s, err
	}
	if err := reporters.GenerateJSONReport(r, filepath.Join(dir, GinkgoJSON)); err != nil {
		return s, err
	}
	junit := filepath.Join(dir, "junit_"+framework.TestContext.ReportPrefix+"01.xml")
	if err := reports.WriteJUnit(junit, r, s); err != nil {
		return s, fmt.Errorf("writing %s: %w", junit, err)
	}
	return s, nil
}
