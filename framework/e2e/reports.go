package e2e

import (
	"fmt"
	"os"

	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/internal/version"
)

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
// instead of framework.AfterReadingAllFlags; the suite's reports.Write then
// writes one JUnit, once, and Ginkgo's JSON.
func OwnReports() {
	reportDir = framework.TestContext.ReportDir
	framework.TestContext.ReportDir = ""
	framework.AfterReadingAllFlags(&framework.TestContext)
	framework.TestContext.ReportDir = reportDir
	if reportDir == "" {
		return
	}
	if err := os.MkdirAll(reportDir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "winconform e2e: --report-dir %s: %v\n", reportDir, err)
		os.Exit(2)
	}
}
