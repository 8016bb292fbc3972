// Package progress posts the suite's progress to the URL of
// --progress-report-url (the upstream e2e framework's flag): inside a
// cluster to Sonobuoy's worker, which relays it to the aggregator so that
// `sonobuoy status` shows it; under `winconform e2e` to the CLI, which
// prints an "N of M" line per spec and passes the run's progress on.
//
// Every update is in the form of Sonobuoy's plugin.ProgressUpdate
// (github.com/vmware-tanzu/sonobuoy v0.57.3, pkg/plugin/interface.go: msg,
// total, completed, failures, the fields a plugin sets; the worker relays
// the body as it is, pkg/worker/worker.go relayProgress, and the
// aggregator decodes it, ignoring other fields, pkg/plugin/aggregation/
// handler.go progressFromRequest). Its counts are absolute: Sonobuoy keeps
// the last non-appending update whole (CombineUpdates), and `sonobuoy
// status` shows "Passed: completed, Failed: len(failures), Remaining:
// total - completed - len(failures)" (FormatPluginProgress). So Completed
// counts the specs that passed and showed a claim, Failures names those
// that failed, and a spec that skipped, or passed below its claims' level
// (a Linux twin, simulated nodes, the API alone: it supports them, it
// shows none), leaves the total: Remaining is the specs still to run, and
// Passed never counts a skip or a spec that only supported its claims. Fields Sonobuoy does not know (event,
// spec, state, seconds, process) say which spec began or ended, for the CLI.
//
// Each process of a parallel run posts its own counts; the CLI, which
// receives every process's updates, counts the run itself (Tally) and
// passes the run's counts on.
package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/labels"
)

// Update is one progress update.
type Update struct {
	// Sonobuoy's fields.
	Msg       string   `json:"msg"`
	Total     int64    `json:"total"`
	Completed int64    `json:"completed"`
	Failures  []string `json:"failures,omitempty"`
	// Event says what happened; Spec, State, Seconds and Process which spec
	// began or ended, how, in how long, on which parallel process.
	Event Event           `json:"event,omitempty"`
	Spec  string          `json:"spec,omitempty"`
	State types.SpecState `json:"state,omitempty"`
	// Result is how the run counts the spec's end (Passed, Supported,
	// Failed, Skipped).
	Result  string  `json:"result,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	Process int     `json:"process,omitempty"`
}

// Event is what an update reports.
type Event string

// The events: the suite's start (with the number of specs it selected), a
// spec's start and end, the suite's end (with the counts of every process).
const (
	Start  Event = "start"
	Begin  Event = "begin"
	End    Event = "end"
	Finish Event = "finish"
)

// Tally counts a run's selected specs as they end, and makes the updates
// that say where the run is.
type Tally struct {
	// Selected is the number of specs the run selected (M); 0 where it is
	// not known (the processes of a parallel run but the first).
	Selected                         int
	done, passed, supported, skipped int
	failures                         []string
}

// How the run counts a spec's end.
const (
	Passed    = "passed"         // passed, and showed a claim (or has none)
	Supported = "supported only" // passed below its claims' level: it shows none
	Failed    = "failed"
	Skipped   = "skipped"
)

// ResultOf is how the run counts spec sr's end: a spec that passed showed
// a claim only when its evidence records show one (evidence.ShowsAny).
func ResultOf(sr types.SpecReport) string {
	if ids := labels.Claims(sr.Labels()); sr.State == types.SpecStatePassed && len(ids) > 0 && !evidence.ShowsAny(evidence.FromEntries(sr.ReportEntries), ids) {
		return Supported
	}
	return StateResult(sr.State)
}

// StateResult is how the run counts a spec that ended in state, its
// evidence unknown.
func StateResult(state types.SpecState) string {
	switch {
	case state == types.SpecStatePassed:
		return Passed
	case state.Is(types.SpecStateFailureStates):
		return Failed
	}
	return Skipped
}

// FromReport is the tally of a finished run: every process's specs.
func FromReport(r types.Report) Tally {
	t := Tally{Selected: r.PreRunStats.SpecsThatWillRun}
	for _, sr := range r.SpecReports {
		if Selected(sr) {
			t.add(ResultOf(sr), sr.FullText())
		}
	}
	return t
}

// Selected says whether sr is a spec the run selected: an It that no
// filter left out (Ginkgo reports those skipped, never attempted, with no
// message) and not pending. A spec skipped at run time, or because an
// earlier spec of its ordered container failed, was selected.
func Selected(sr types.SpecReport) bool {
	return sr.LeafNodeType == types.NodeTypeIt && sr.State != types.SpecStatePending &&
		!(sr.State == types.SpecStateSkipped && sr.NumAttempts == 0 && sr.Failure.Message == "")
}

func (t *Tally) add(result, name string) {
	t.done++
	switch result {
	case Passed:
		t.passed++
	case Supported:
		t.supported++
	case Failed:
		t.failures = append(t.failures, name)
	default:
		t.skipped++
	}
}

// Done is the number of selected specs that ended.
func (t *Tally) Done() int { return t.done }

// Start is the suite's start, with the number of specs it selected.
func (t *Tally) Start(selected int) Update {
	t.Selected = selected
	return t.update(Start, t.counts()+": starting")
}

// Begin is the start of spec name.
func (t *Tally) Begin(name string) Update {
	u := t.update(Begin, fmt.Sprintf("%s; running spec %d: %s", t.counts(), t.done+1, name))
	u.Spec = name
	return u
}

// End is the end of spec name, in state, counted as result (ResultOf).
func (t *Tally) End(name string, state types.SpecState, result string) Update {
	t.add(result, name)
	u := t.update(End, fmt.Sprintf("%s; last: %s %s", t.counts(), result, name))
	u.Spec, u.State, u.Result = name, state, result
	return u
}

// Finish is the suite's end.
func (t *Tally) Finish(succeeded bool) Update {
	how := "finished"
	if !succeeded {
		how = "finished, failed"
	}
	return t.update(Finish, how+": "+t.counts())
}

// counts says where the run is: "4 of 5 specs done (1 passed, 1 supported
// only, 1 failed, 1 skipped)".
func (t *Tally) counts() string {
	of := ""
	if t.Selected > 0 {
		of = fmt.Sprintf(" of %d", t.Selected)
	}
	s := fmt.Sprintf("%d%s specs done", t.done, of)
	if t.done > 0 {
		supported := ""
		if t.supported > 0 {
			supported = fmt.Sprintf(", %d supported only", t.supported)
		}
		s += fmt.Sprintf(" (%d passed%s, %d failed, %d skipped)", t.passed, supported, len(t.failures), t.skipped)
	}
	return s
}

// update is the update of event with msg and the tally's counts, as
// Sonobuoy reads them: a skip, and a spec that only supported its claims,
// leave the total.
func (t *Tally) update(event Event, msg string) Update {
	total := t.Selected - t.skipped - t.supported
	if done := t.passed + len(t.failures); total < done {
		total = done
	}
	return Update{Msg: msg, Event: event, Total: int64(total), Completed: int64(t.passed), Failures: append([]string(nil), t.failures...)}
}

// postTimeout bounds one post: a receiver that does not answer slows no spec.
const postTimeout = 5 * time.Second

// Poster posts updates to a URL; a nil Poster posts nothing.
type Poster struct {
	url    string
	client *http.Client
	log    io.Writer
	once   sync.Once
	// reached: a post got through; warned: one did not.
	reached, warned atomic.Bool
}

// NewPoster posts to url (nil, posting nothing, when url is empty); the
// first problem posting is said on log, the later ones are not.
func NewPoster(url string, log io.Writer) *Poster {
	if url == "" {
		return nil
	}
	return &Poster{url: url, client: &http.Client{Timeout: postTimeout}, log: log}
}

// Post sends u and waits for the answer (an update sent in the background
// could be lost when the process ends). Until a post first gets through, a
// receiver that refuses the connection is tried again for up to startWait:
// Sonobuoy's worker starts beside the plugin, and its progress listener may
// come up after the suite's first post (seen here: connection refused on
// localhost:8099 for the first post of a run whose later posts arrived).
func (p *Poster) Post(u Update) {
	if p == nil {
		return
	}
	data, err := json.Marshal(u)
	if err != nil {
		p.warn(err)
		return
	}
	wait := time.Duration(0)
	if !p.reached.Load() && !p.warned.Load() {
		wait = startWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout+wait)
	defer cancel()
	err = retry.OnError(backoff(wait), func(err error) bool {
		return wait > 0 && errors.Is(err, syscall.ECONNREFUSED)
	}, func() error { return p.post(ctx, data) })
	if err != nil {
		p.warn(err)
		return
	}
	p.reached.Store(true)
}

// startWait is how long a first post waits for its receiver to listen.
const startWait = 3 * time.Second

// backoff tries again every 200 ms for d.
func backoff(d time.Duration) wait.Backoff {
	return wait.Backoff{Duration: 200 * time.Millisecond, Factor: 1, Steps: int(d/(200*time.Millisecond)) + 1}
}

func (p *Poster) post(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s answered %s", p.url, resp.Status)
	}
	return nil
}

func (p *Poster) warn(err error) {
	p.warned.Store(true)
	p.once.Do(func() {
		if p.log != nil {
			fmt.Fprintf(p.log, "winconform: progress to %s: %v (the run goes on; later problems posting progress are not said)\n", p.url, err)
		}
	})
}

// Reporter reports one suite process's progress; a nil Reporter does nothing.
type Reporter struct {
	poster *Poster
	tally  Tally
}

// New reports to url (nil when it is empty); problems posting go to log, once.
func New(url string, log io.Writer) *Reporter {
	p := NewPoster(url, log)
	if p == nil {
		return nil
	}
	return &Reporter{poster: p}
}

// SuiteWillBegin posts the number of specs the run selected (Ginkgo runs
// ReportBeforeSuite on the first process only).
func (r *Reporter) SuiteWillBegin(report types.Report) {
	if r != nil {
		r.poster.Post(r.tally.Start(report.PreRunStats.SpecsThatWillRun))
	}
}

// SpecWillRun posts the start of a spec that will run.
func (r *Reporter) SpecWillRun(sr types.SpecReport) {
	if r == nil || !Selected(sr) || sr.State.Is(types.SpecStateSkipped|types.SpecStateFailureStates) {
		return
	}
	u := r.tally.Begin(sr.FullText())
	u.Process = sr.ParallelProcess
	r.poster.Post(u)
}

// SpecDidEnd posts the end of a selected spec.
func (r *Reporter) SpecDidEnd(sr types.SpecReport) {
	if r == nil || !Selected(sr) {
		return
	}
	u := r.tally.End(sr.FullText(), sr.State, ResultOf(sr))
	u.Seconds, u.Process = sr.RunTime.Seconds(), sr.ParallelProcess
	r.poster.Post(u)
}

// SuiteDidEnd posts the run's counts, from the report of every process
// (Ginkgo runs ReportAfterSuite on the first process with them all).
func (r *Reporter) SuiteDidEnd(report types.Report) {
	if r == nil {
		return
	}
	t := FromReport(report)
	r.poster.Post(t.Finish(report.SuiteSucceeded))
}

// Register reports the suite's progress to url (nothing when it is empty):
// call it before RunSpecs.
func Register(url string, log io.Writer) {
	r := New(url, log)
	if r == nil {
		return
	}
	ginkgo.ReportBeforeSuite(r.SuiteWillBegin)
	ginkgo.ReportBeforeEach(r.SpecWillRun)
	ginkgo.ReportAfterEach(r.SpecDidEnd)
	ginkgo.ReportAfterSuite("winconform progress", r.SuiteDidEnd)
}
