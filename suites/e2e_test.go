// Package suites is winconform's one Ginkgo suite binary (`go test -c ./suites`).
// Each area is a package under suites/, registered by a blank import below and
// selected at run time by labels (--suite=networking, --claim=NET-03,
// --ginkgo.label-filter). It takes the upstream e2e framework's flags
// (--kubeconfig, --provider, --report-dir, ...).
package suites

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/progress"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/reports/rundir"

	_ "github.com/winconform/winconform/suites/config"
	_ "github.com/winconform/winconform/suites/hostprocess"
	_ "github.com/winconform/winconform/suites/identity"
	_ "github.com/winconform/winconform/suites/infra"
	_ "github.com/winconform/winconform/suites/limitations"
	_ "github.com/winconform/winconform/suites/networking"
	_ "github.com/winconform/winconform/suites/node"
	_ "github.com/winconform/winconform/suites/observability"
	_ "github.com/winconform/winconform/suites/resources"
	_ "github.com/winconform/winconform/suites/scheduling"
	_ "github.com/winconform/winconform/suites/storage"
	_ "github.com/winconform/winconform/suites/workloads"
)

var (
	dryRun  bool
	filters string
)

func TestMain(m *testing.M) {
	e2e.RegisterSuiteFlags(flag.CommandLine)
	flag.Parse()
	// --list-images (the e2e framework's flag) lists the images the suites
	// run, overrides applied, and needs no cluster.
	if framework.TestContext.ListImages {
		err := e2e.LoadImageOverrides()
		if err == nil {
			err = images.WriteList(os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "winconform e2e:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if err := checkFlags(); err != nil {
		fmt.Fprintln(os.Stderr, "winconform e2e:", err)
		os.Exit(2)
	}
	// The harness writes the reports (one JUnit, Ginkgo's JSON), not the e2e framework.
	e2e.OwnReports()
	stop := func() {}
	if !dryRun {
		stop = e2e.Heartbeat()
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// checkFlags validates what the run was asked to do before anything connects
// to a cluster, so that bad input ends in one line naming the fix.
func checkFlags() error {
	if err := e2e.ApplyRunID(); err != nil {
		return err
	}
	suiteConfig, _ := ginkgo.GinkgoConfiguration()
	dryRun = suiteConfig.DryRun
	f, err := labels.Filter(e2e.Options.Suite, e2e.Options.Claim, suiteConfig.LabelFilter)
	if err != nil {
		return err
	}
	filters = f
	if err := e2e.LoadImageOverrides(); err != nil {
		return err
	}
	if dryRun {
		return nil
	}
	kc := framework.TestContext.KubeConfig
	if kc == "" {
		return errors.New("no kubeconfig: pass --kubeconfig (or set KUBECONFIG); `make e2e` makes a local cluster and passes its kubeconfig")
	}
	if _, err := os.Stat(kc); err != nil {
		return fmt.Errorf("kubeconfig %s cannot be read (%v): run `make up` for a local cluster, or pass the kubeconfig of an existing one", kc, err)
	}
	if _, err := clientcmd.LoadFromFile(kc); err != nil {
		return fmt.Errorf("kubeconfig %s is not a valid kubeconfig: %v", kc, err)
	}
	return nil
}

func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	suiteConfig.LabelFilter = filters
	ginkgo.ReportAfterSuite("winconform reports", writeReports)
	// --progress-report-url: the CLI's N of M lines under winconform e2e,
	// Sonobuoy's worker in the suite image (sonobuoy status).
	progress.Register(framework.TestContext.ProgressReportURL, os.Stderr)
	ginkgo.RunSpecs(t, "winconform", suiteConfig, reporterConfig)
}

// The cluster's facts are discovered once per run, before any spec, by the
// first process, kept with the reports, and shared with every parallel process.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx ginkgo.SpecContext) []byte {
	record.Add(record.New(string(framework.RunID), e2e.Options.RerunOf, e2e.Options.JUnitProperties...))
	cs, err := framework.LoadClientset()
	framework.ExpectNoError(err, "connecting to the cluster in %s", framework.TestContext.KubeConfig)
	fs, err := facts.Get(ctx, cs)
	framework.ExpectNoError(err, "reading the cluster in %s", framework.TestContext.KubeConfig)
	framework.Logf("cluster: %s", fs.Summary())
	// The Windows images the suites run, against each real Windows
	// node's update: a variant it cannot start stops the run here, named.
	framework.ExpectNoError(e2e.CheckWindowsImages(ctx, fs, windows.RemoteRegistry{}, framework.Logf), "the Windows images the suites run on the Windows nodes")
	data, err := json.Marshal(fs)
	framework.ExpectNoError(err)
	record.AddCluster(fs)
	return data
}, func(data []byte) {
	var fs facts.Facts
	framework.ExpectNoError(json.Unmarshal(data, &fs), "the cluster's facts from the first process")
	facts.Use(&fs)
})

// The nodes' readiness at the run's end is recorded once every process is
// done: a node counts as one of the run's only when it was Ready at the
// start (the facts) and at the end (docs/record.md).
var _ = ginkgo.SynchronizedAfterSuite(func() {}, func(ctx ginkgo.SpecContext) {
	cs, err := framework.LoadClientset()
	if err == nil {
		record.AddEnd(facts.ReadReadiness(ctx, cs))
		return
	}
	record.AddEnd(facts.Readiness{Nodes: []facts.NodeReadiness{}, Error: err.Error()})
}, ginkgo.NodeTimeout(facts.ReadinessTimeout+10*time.Second))

// writeReports writes the run's reports from its record (rundir.Write)
// after every run, also a failed or interrupted one. A passing spec that
// recorded no evidence fails the run: it would show nothing, silently.
func writeReports(r ginkgo.Report) {
	dir := framework.TestContext.ReportDir
	if r.SuiteConfig.DryRun || dir == "" {
		return
	}
	run, err := rundir.Write(dir, r, filepath.Join(dir, "junit_"+framework.TestContext.ReportPrefix+"01.xml"))
	framework.ExpectNoError(err, "writing the reports")
	s := run.Summary
	fmt.Printf("\nwinconform run %s: %s\n%s\nreports in %s\n", s.RunID, s.Status, s.Headline, dir)
	if len(s.Unrecorded) > 0 {
		framework.Failf("%d passing spec(s) recorded no evidence, so they show nothing (see framework/evidence): %v", len(s.Unrecorded), s.Unrecorded)
	}
}
