package reports_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// flakeChild is set in the environment of the child process that runs
// TestFlakeChild into a report directory.
const flakeChild = "WINCONFORM_TEST_FLAKE_DIR"

// TestFlakeChild is the suite TestARealRetryIsAFlake runs in a child
// process, with --ginkgo.flake-attempts=2: a spec that fails once and
// passes on its retry, one that fails every time, one that passes.
func TestFlakeChild(t *testing.T) {
	dir := os.Getenv(flakeChild)
	if dir == "" {
		t.Skip("run by TestARealRetryIsAFlake")
	}
	framework.TestContext.ReportDir = dir
	framework.TestContext.KubeConfig = "unused"
	framework.RunID = "wc-20260301t120000-0a1b2c3d"
	e2e.OwnReports()
	ginkgo.BeforeSuite(func() { record.Add(record.New(string(framework.RunID), "")) })
	ginkgo.ReportAfterSuite("winconform reports", func(r ginkgo.Report) {
		_, err := rundir.Write(dir, r, filepath.Join(dir, reports.JUnitFile))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
	})
	attempts := 0
	ginkgo.Describe("networking", func() {
		ginkgo.It("NET-07 fails once", ginkgo.Label("claim:NET-07", "os:linux", "suite:networking"), func() {
			if attempts++; attempts == 1 {
				ginkgo.Fail("dial tcp 10.0.0.7:80: i/o timeout")
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

// A real Ginkgo run with --ginkgo.flake-attempts=2, read back: the spec
// that passed on its retry is flaky, with its first failure where it
// failed; the one that failed on both attempts is a failure; the one that
// passed at once is neither.
func TestARealRetryIsAFlake(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFlakeChild$", "-test.v", "-ginkgo.flake-attempts=2")
	cmd.Env = append(os.Environ(), flakeChild+"="+dir)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("the child suite: %v\n%s", err, out)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(run.Retried) != 1 {
		t.Fatalf("retried %+v, want the spec that failed once\n%s", run.Retried, out)
	}
	fl := run.Retried[0]
	if fl.Spec != "networking NET-07 fails once" || fl.Attempts != 2 || fl.FirstFailure == nil ||
		fl.FirstFailure.Message != "dial tcp 10.0.0.7:80: i/o timeout" || !strings.Contains(fl.FirstFailure.Location, "flakerun_test.go:") {
		t.Errorf("the flake: %+v, first failure %+v", fl, fl.FirstFailure)
	}
	for _, sp := range run.Summary.Specs {
		switch sp.Name {
		case "networking NET-07 fails once":
			if !sp.Flaky() || sp.Result != reports.SpecPassed {
				t.Errorf("%s: %+v", sp.Name, sp)
			}
		case "networking NET-08 fails every time":
			if sp.Flaky() || sp.Result != reports.SpecFailed || sp.Attempts != 2 {
				t.Errorf("%s: %+v", sp.Name, sp)
			}
		case "networking NET-07 passes":
			if sp.Flaky() || sp.Attempts != 0 || sp.FirstFailure != nil {
				t.Errorf("%s: %+v", sp.Name, sp)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "(of which flaky: 1)") || !strings.Contains(string(md), "**networking NET-07 fails once**: passed on attempt 2; attempt 1 failed at ") {
		t.Errorf("summary.md:\n%s", md)
	}
	if v := run.Summary.Violations; len(v) > 0 {
		t.Errorf("a record Ginkgo wrote with retries breaks its contract: %v", v)
	}
}
