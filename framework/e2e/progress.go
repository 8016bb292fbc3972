package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/kubernetes/test/e2e/framework"
)

// ProgressUpdate is what a Sonobuoy plugin posts to its worker's progress
// endpoint (http://localhost:8099/progress, the port in
// $SONOBUOY_PROGRESS_PORT): the fields of Sonobuoy's plugin.ProgressUpdate
// that a plugin sets (github.com/vmware-tanzu/sonobuoy v0.57.3,
// pkg/plugin/interface.go; the worker relays the body to the aggregator,
// pkg/worker/worker.go relayProgress, which names the plugin and node
// itself, pkg/plugin/aggregation/handler.go progressFromRequest).
// `sonobuoy status` shows "Passed: Completed, Failed: len(Failures),
// Remaining: Total - Completed - len(Failures)" (FormatPluginProgress).
type ProgressUpdate struct {
	Message   string   `json:"msg"`
	Total     int64    `json:"total"`
	Completed int64    `json:"completed"`
	Failures  []string `json:"failures,omitempty"`
}

// progressTimeout bounds one post: a worker that does not answer slows no spec.
const progressTimeout = 5 * time.Second

// Progress reports a run's progress, N of M specs, to a progress URL. Of
// the specs the run selected (M), Completed counts those that passed and
// Failures names those that failed; a spec that skipped leaves the total,
// so that Remaining counts the specs still to run and Passed never counts
// a skip. Each update's message says where the run is.
type Progress struct {
	url    string
	client *http.Client
	log    io.Writer
	warned bool

	selected, done, passed, skipped int
	failures                        []string
}

// NewProgress reports to url (nothing when it is empty); problems posting
// go to log, once.
func NewProgress(url string, log io.Writer) *Progress {
	return &Progress{url: url, client: &http.Client{Timeout: progressTimeout}, log: log, failures: []string{}}
}

// Start is the suite's start: the number of specs it will run.
func (p *Progress) Start(selected int) {
	p.selected = selected
	p.post(fmt.Sprintf("0 of %d specs done: starting", selected))
}

// Begin is a spec's start; a spec the run did not select is not counted.
func (p *Progress) Begin(r types.SpecReport) {
	if !counts(r) || r.State.Is(types.SpecStateSkipped) {
		return
	}
	p.post(fmt.Sprintf("%d of %d specs done; running spec %d: %s", p.done, p.selected, p.done+1, r.FullText()))
}

// End is a spec's end.
func (p *Progress) End(r types.SpecReport) {
	if !counts(r) {
		return
	}
	p.done++
	switch {
	case r.State == types.SpecStatePassed:
		p.passed++
	case r.State.Is(types.SpecStateFailureStates):
		p.failures = append(p.failures, r.FullText())
	default:
		p.skipped++
	}
	p.post(fmt.Sprintf("%d of %d specs done (%d passed, %d failed, %d skipped); last: %s %s", p.done, p.selected, p.passed, len(p.failures), p.skipped, r.State, r.FullText()))
}

// Finish is the suite's end.
func (p *Progress) Finish(r types.Report) {
	how := "finished"
	if !r.SuiteSucceeded {
		how = "finished, failed"
	}
	p.post(fmt.Sprintf("%s: %d of %d specs done (%d passed, %d failed, %d skipped)", how, p.done, p.selected, p.passed, len(p.failures), p.skipped))
}

// counts says whether r is a spec the run selected: an It that the run's
// filters did not skip (Ginkgo reports those as skipped with no message).
func counts(r types.SpecReport) bool {
	return r.LeafNodeType == types.NodeTypeIt && r.State != types.SpecStatePending &&
		!(r.State == types.SpecStateSkipped && r.Failure.Message == "")
}

// Update is the update the run is at, with message msg.
func (p *Progress) Update(msg string) ProgressUpdate {
	total := p.selected - p.skipped
	if total < p.passed+len(p.failures) {
		total = p.passed + len(p.failures)
	}
	return ProgressUpdate{Message: msg, Total: int64(total), Completed: int64(p.passed), Failures: append([]string(nil), p.failures...)}
}

func (p *Progress) post(msg string) {
	if p.url == "" {
		return
	}
	body, err := json.Marshal(p.Update(msg))
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), progressTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		p.warn(err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		p.warn(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		p.warn(fmt.Errorf("%s answered %s", p.url, resp.Status))
	}
}

func (p *Progress) warn(err error) {
	if !p.warned && p.log != nil {
		p.warned = true
		fmt.Fprintf(p.log, "winconform: progress to %s: %v (the run goes on; further problems posting progress are not shown)\n", p.url, err)
	}
}

// RegisterProgress reports the run's progress to --progress-report-url
// (the upstream e2e framework's flag; the suite image's runner sets it to
// Sonobuoy's worker), so that `sonobuoy status` shows it. Call it before
// RunSpecs. The run must be one process: parallel processes would each
// report their own part.
func RegisterProgress() {
	url := framework.TestContext.ProgressReportURL
	if url == "" {
		return
	}
	suiteConfig, _ := ginkgo.GinkgoConfiguration()
	if suiteConfig.ParallelTotal > 1 {
		fmt.Fprintf(ginkgo.GinkgoWriter, "winconform: --progress-report-url needs the suite in one process; %d run it: no progress is posted\n", suiteConfig.ParallelTotal)
		return
	}
	p := NewProgress(url, ginkgo.GinkgoWriter)
	ginkgo.ReportBeforeSuite(func(r ginkgo.Report) { p.Start(r.PreRunStats.SpecsThatWillRun) })
	ginkgo.ReportBeforeEach(func(r ginkgo.SpecReport) { p.Begin(r) })
	ginkgo.ReportAfterEach(func(r ginkgo.SpecReport) { p.End(r) })
	ginkgo.ReportAfterSuite("winconform progress", func(r ginkgo.Report) { p.Finish(r) })
}
