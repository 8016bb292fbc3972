// Package flakerun runs a real Ginkgo suite with --ginkgo.flake-attempts=2
// into a report directory, for the tests of every view of a flake (the
// summary, JUnit, report.html, the gate, `winconform results`): one spec
// fails on its first attempt and passes on its retry (a flake), one
// passes at once, one fails on both attempts. The record is Ginkgo's own,
// written by the harness's writer (rundir.Write) as the suite's
// ReportAfterSuite does.
//
// A test package runs it in a child process of its own test binary:
//
//	func TestFlakeChild(t *testing.T) { flakerun.Child(t) }
//
//	dir := flakerun.Run(t, "TestFlakeChild")
package flakerun

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/artifacts"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// The specs of the run, by name (Ginkgo's full text), and the flake's
// first failure.
const (
	Flaky       = "networking NET-07 fails once"
	Steady      = "networking NET-07 passes"
	Failing     = "networking NET-08 fails every time"
	FirstFailed = "dial tcp 10.0.0.7:80: i/o timeout"
	// RunID is the run's ID.
	RunID = "wc-20260301t120000-0a1b2c3d"
)

// Artifacts is the bundle a failed attempt of spec names, as
// e2e.KeepArtifacts names it.
func Artifacts(spec string) string { return filepath.Join(artifacts.Dir, artifacts.Slug(spec)) }

// env names the report directory in the child's environment.
const env = "WINCONFORM_TEST_FLAKE_DIR"

// Child is the suite Run runs in the child process; in any other process
// it skips.
func Child(t *testing.T) {
	dir := os.Getenv(env)
	if dir == "" {
		t.Skip("run by flakerun.Run in a child process")
	}
	framework.TestContext.ReportDir = dir
	framework.TestContext.KubeConfig = "unused"
	framework.RunID = RunID
	e2e.OwnReports()
	ginkgo.BeforeSuite(func() { record.Add(record.New(string(framework.RunID), "")) })
	ginkgo.ReportAfterSuite("winconform reports", func(r ginkgo.Report) {
		_, err := rundir.Write(dir, r, filepath.Join(dir, reports.JUnitFile))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
	})
	attempts := 0
	ginkgo.Describe("networking", func() {
		// A failed attempt names its bundle, as e2e.KeepArtifacts does
		// after a failure (no bundle is written here).
		ginkgo.AfterEach(func() {
			if r := ginkgo.CurrentSpecReport(); r.Failed() {
				ginkgo.AddReportEntry(e2e.ArtifactsEntry, Artifacts(r.FullText()), ginkgo.ReportEntryVisibilityNever)
			}
		})
		ginkgo.It("NET-07 fails once", ginkgo.Label("claim:NET-07", "os:linux", "suite:networking"), func() {
			if attempts++; attempts == 1 {
				ginkgo.Fail(FirstFailed)
			}
			evidence.Add(claims.Linux, "real linux node(s)")
		})
		ginkgo.It("NET-07 passes", ginkgo.Label("claim:NET-07", "os:linux", "suite:networking"), func() {
			evidence.Add(claims.Linux, "real linux node(s)")
		})
		ginkgo.It("NET-08 fails every time", ginkgo.Label("claim:NET-08", "os:linux", "suite:networking"), func() {
			ginkgo.Fail("no endpoints")
		})
	})
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "winconform")
}

// Run runs the test child (a test of the calling package that calls
// Child) with --ginkgo.flake-attempts=2 in a child process of the test
// binary, and returns the report directory it wrote. The suite fails (a
// spec fails on both attempts); that is no error here.
func Run(t *testing.T, child string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v", "-ginkgo.flake-attempts=2")
	cmd.Env = append(os.Environ(), env+"="+dir)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("the child suite: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.GinkgoFile)); err != nil {
		t.Fatalf("the child suite wrote no record: %v\n%s", err, out)
	}
	return dir
}
