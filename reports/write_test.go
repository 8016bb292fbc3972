package reports_test

import (
	"encoding/json"
	"encoding/xml"
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
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// reportsChild is set in the environment of the child process that runs
// a small suite (TestReportsChild) into a report directory.
const reportsChild = "WINCONFORM_TEST_REPORTS_DIR"

// TestReportsChild is the suite TestOneJUnitPerRun runs in a child process
// (Ginkgo runs one suite per process).
func TestReportsChild(t *testing.T) {
	dir := os.Getenv(reportsChild)
	if dir == "" {
		t.Skip("run by TestOneJUnitPerRun")
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
	ginkgo.Describe("networking", func() {
		ginkgo.It("NET-07 passes", ginkgo.Label("claim:NET-07", "os:linux", "suite:networking"), func() {
			evidence.Add(claims.Linux, "real linux node(s)")
		})
		ginkgo.It("NET-16 skips for its reason", ginkgo.Label("claim:NET-16", "os:linux", "suite:networking"), func() {
			skips.Skip(skips.NoLoadBalancer)
		})
		ginkgo.It("left out by the label filter", ginkgo.Label("claim:NET-08", "filtered-out"), func() {})
		ginkgo.It("left out by the skip string NOT-THIS-ONE", ginkgo.Label("claim:NET-08"), func() {})
		ginkgo.PIt("NET-08 pending", ginkgo.Label("claim:NET-08"), func() {})
	})
	ginkgo.Describe("ordered", ginkgo.Ordered, func() {
		ginkgo.BeforeAll(func() { skips.Skip(skips.NoInventory) })
		ginkgo.It("INF-01 skipped in its setup", ginkgo.Label("claim:INF-01"), func() {})
		ginkgo.It("INF-02 skipped with it", ginkgo.Label("claim:INF-02"), func() {})
	})
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "winconform")
}

// A run writes one JUnit file, once, with the run's properties; beside it
// Ginkgo's JSON report and no other XML (the e2e framework's own writers,
// which --report-complete-ginkgo extends with ginkgo/report.xml, an
// unamended second JUnit that CI globs such as **/*.xml count twice, are
// not registered). Every JSON file carries the run's ID and the harness.
func TestOneJUnitPerRun(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReportsChild$", "-test.v", "-ginkgo.label-filter=!filtered-out", "-ginkgo.skip=NOT-THIS-ONE")
	cmd.Env = append(os.Environ(), reportsChild+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child suite: %v\n%s", err, out)
	}
	var xmls []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".xml") {
			rel, _ := filepath.Rel(dir, path)
			xmls = append(xmls, rel)
		}
		return nil
	})
	if strings.Join(xmls, " ") != reports.JUnitFile {
		t.Errorf("XML files %q, want %s alone", xmls, reports.JUnitFile)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.GinkgoFile)); err != nil {
		t.Errorf("Ginkgo's JSON report: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	var junit struct {
		Suites []struct {
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &junit); err != nil || len(junit.Suites) != 1 {
		t.Fatalf("junit: %v\n%s", err, data)
	}
	props := map[string]string{}
	for _, p := range junit.Suites[0].Properties {
		props[p.Name] = p.Value
	}
	if props[reports.PropRunID] != "wc-20260301t120000-0a1b2c3d" || props[reports.PropShown] != "1" || props[reports.PropVersion] == "" {
		t.Errorf("the JUnit's run properties %v lack the run ID, the shown count or the version", props)
	}
	// What Ginkgo itself recorded keeps the record's contract: its
	// success, its specs' states and its count before the run agree.
	if props[reports.PropViolations] != "0" {
		t.Errorf("a record Ginkgo wrote breaks its contract (%s violations): %s", props[reports.PropViolations], props[reports.PropStatus])
	}
	for _, name := range []string{"summary.json", "limitations.json"} {
		var head struct {
			RunID   string `json:"runID"`
			Harness struct {
				Version string `json:"version"`
			} `json:"harness"`
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &head); err != nil || head.RunID != "wc-20260301t120000-0a1b2c3d" || head.Harness.Version == "" {
			t.Errorf("%s: %v, run %q, harness %q: want the run's ID and the harness's version", name, err, head.RunID, head.Harness.Version)
		}
	}
}
