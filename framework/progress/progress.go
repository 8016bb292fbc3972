// Package progress posts the suite's progress, spec by spec, to the URL
// of --progress-report-url (the upstream e2e framework's flag): to
// Sonobuoy's worker inside a cluster (sonobuoy status shows it), or to the
// CLI, which prints "N of M" lines.
//
// An update is JSON in the shape of upstream e2e's ProgressReporter
// (k8s.io/kubernetes test/e2e/reporters/progress.go: msg, total,
// completed, skipped, failed, failures), with Sonobuoy's appending fields
// (github.com/vmware-tanzu/sonobuoy pkg/plugin/interface.go, ProgressUpdate:
// appendcompleted, appendfailing; CombineUpdates adds an appending update to
// the last absolute one). Upstream's reporter sends each parallel process's
// own counts as if they were the run's, and nothing for a skipped spec; here
// each spec's update appends one spec to the run's counts, whichever
// process ran it, the suite's start and end set them absolutely, and a spec
// that skipped at run time counts as done (it is one of the specs the run
// selected).
package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Update is one progress update.
type Update struct {
	Msg       string   `json:"msg"`
	Total     int      `json:"total"`
	Completed int      `json:"completed"`
	Skipped   int      `json:"skipped"`
	Failed    int      `json:"failed"`
	Failures  []string `json:"failures,omitempty"`
	// AppendCompleted and AppendFailing add one spec to the run's counts
	// (Sonobuoy's appending update).
	AppendCompleted int      `json:"appendcompleted,omitempty"`
	AppendFailing   []string `json:"appendfailing,omitempty"`
	// Spec, State, Seconds and Process say which spec ended, how, in how
	// long, on which parallel process (empty on the suite's start and end).
	Spec    string  `json:"spec,omitempty"`
	State   string  `json:"state,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	Process int     `json:"process,omitempty"`
}

// Messages of the suite's start and end, as upstream's reporter says them.
const (
	Starting  = "Test Suite starting"
	Completed = "Test Suite completed"
)

// Reporter posts updates to a URL; a nil Reporter, or one without a URL,
// does nothing.
type Reporter struct {
	url    string
	client *http.Client
	log    io.Writer
	once   sync.Once
}

// New returns a reporter that posts to url ("" posts nothing).
func New(url string) *Reporter {
	if url == "" {
		return nil
	}
	return &Reporter{url: url, client: &http.Client{Timeout: 5 * time.Second}, log: os.Stderr}
}

// SuiteWillBegin posts the number of specs the run will run (on the first
// process only: Ginkgo runs ReportBeforeSuite there).
func (r *Reporter) SuiteWillBegin(report types.Report) {
	r.post(Update{Msg: Starting, Total: report.PreRunStats.SpecsThatWillRun})
}

// SpecDidEnd posts the end of one spec, appending it to the run's counts.
// Specs the run did not select (filtered out, skipped before they started)
// are not posted.
func (r *Reporter) SpecDidEnd(sr types.SpecReport) {
	if !sr.LeafNodeType.Is(types.NodeTypeIt) || notRun(sr) {
		return
	}
	name := sr.FullText()
	u := Update{Spec: name, State: sr.State.String(), Seconds: sr.RunTime.Seconds(), Process: sr.ParallelProcess}
	switch {
	case sr.State.Is(types.SpecStateFailureStates):
		u.Msg = "FAILED " + name
		u.AppendFailing = []string{name}
	case sr.State == types.SpecStateSkipped:
		u.Msg = "SKIPPED " + name
		u.AppendCompleted = 1
	default:
		u.Msg = strings.ToUpper(u.State) + " " + name
		u.AppendCompleted = 1
	}
	r.post(u)
}

// SuiteDidEnd posts the run's final counts, from the report of every
// process (Ginkgo runs ReportAfterSuite on the first process with them all).
func (r *Reporter) SuiteDidEnd(report types.Report) {
	u := Update{Msg: Completed, Total: report.PreRunStats.SpecsThatWillRun}
	for _, sr := range report.SpecReports {
		if !sr.LeafNodeType.Is(types.NodeTypeIt) || notRun(sr) {
			continue
		}
		switch {
		case sr.State.Is(types.SpecStateFailureStates):
			u.Failed++
			u.Failures = append(u.Failures, sr.FullText())
		case sr.State == types.SpecStateSkipped:
			u.Skipped++
			u.Completed++
		default:
			u.Completed++
		}
	}
	r.post(u)
}

// notRun says the run did not select the spec or never started it: Ginkgo
// reports such a spec skipped, without an attempt.
func notRun(sr types.SpecReport) bool {
	return sr.State == types.SpecStateSkipped && sr.NumAttempts == 0
}

// post sends u, waiting for the answer (an update sent in the background
// could be lost when the process ends); a failure is said once.
func (r *Reporter) post(u Update) {
	if r == nil {
		return
	}
	data, err := json.Marshal(u)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(data))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		if resp, err = r.client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 400 {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
	}
	if err != nil {
		r.once.Do(func() {
			fmt.Fprintf(r.log, "winconform: posting progress to %s: %v (later failures are not said)\n", r.url, err)
		})
	}
}
