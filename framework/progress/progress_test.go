package progress

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/evidence"
)

// sink is a stand-in for Sonobuoy's worker progress endpoint: it keeps
// every update posted, decoded by field name as the aggregator decodes
// Sonobuoy's plugin.ProgressUpdate (v0.57.3, pkg/plugin/interface.go: msg,
// total, completed, failures), and refuses a body it cannot decode as the
// aggregator does (pkg/plugin/aggregation/handler.go progressHandler: 400).
type sink struct {
	mu      sync.Mutex
	updates []map[string]any
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var u map[string]any
	if r.Method != http.MethodPost || r.URL.Path != "/progress" || json.NewDecoder(r.Body).Decode(&u) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.updates = append(s.updates, u)
	s.mu.Unlock()
}

func (s *sink) all() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.updates...)
}

// status is what `sonobuoy status` shows of an update (FormatPluginProgress:
// Passed = completed, Failed = len(failures), Remaining = total - both).
func status(u map[string]any) string {
	failed := 0
	if f, ok := u["failures"].([]any); ok {
		failed = len(f)
	}
	total, completed := int(u["total"].(float64)), int(u["completed"].(float64))
	return fmt.Sprintf("Passed %d, Failed %d, Remaining %d", completed, failed, total-completed-failed)
}

// childEnv is set in the environment of the child process that runs a
// small suite (TestSuiteChild) with the reporter registered: its progress URL.
const childEnv = "WINCONFORM_TEST_PROGRESS_URL"

// TestSuiteChild is the suite TestSuitePostsProgress runs in a child
// process (Ginkgo runs one suite per process): a spec that passes, one left
// out by the label filter, one that skips at run time, one that fails.
func TestSuiteChild(t *testing.T) {
	url := os.Getenv(childEnv)
	if url == "" {
		t.Skip("run by TestSuitePostsProgress")
	}
	Register(url, os.Stderr)
	ginkgo.Describe("networking", func() {
		ginkgo.It("NET-07 pod to pod", func() {})
		ginkgo.It("WEB-01 left out by the label filter", ginkgo.Label("filtered"), func() {})
		ginkgo.It("WEB-02 needs a Windows node", func() { ginkgo.Skip("no Windows node") })
		ginkgo.It("NET-08 service DNS", func() { ginkgo.Fail("lookup failed") })
	})
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	suiteConfig.LabelFilter = "!filtered"
	ginkgo.RunSpecs(t, "progress", suiteConfig, reporterConfig)
}

// The suite binary posts its progress to --progress-report-url (Sonobuoy's
// worker in the suite image, the CLI under winconform e2e): the start with
// the number of specs selected, each selected spec's start and end, and the
// end with the counts of the whole run, each an absolute update in
// Sonobuoy's form, so that `sonobuoy status` is true to the run at every
// step (a skip leaves the total, a spec left out by the filter counts
// nowhere), and each end names its spec and state for the CLI's lines.
func TestSuitePostsProgress(t *testing.T) {
	s := &sink{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+srv.URL+"/progress")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "lookup failed") {
		t.Fatalf("the child suite should have run and failed one spec: %v\n%s", err, out)
	}
	type want struct{ event, msg, status, spec, state string }
	wants := []want{
		{"start", "0 of 3 specs done: starting", "Passed 0, Failed 0, Remaining 3", "", ""},
		{"begin", "0 of 3 specs done; running spec 1: networking NET-07 pod to pod", "Passed 0, Failed 0, Remaining 3", "networking NET-07 pod to pod", ""},
		{"end", "1 of 3 specs done (1 passed, 0 failed, 0 skipped); last: passed networking NET-07 pod to pod", "Passed 1, Failed 0, Remaining 2", "networking NET-07 pod to pod", "passed"},
		{"begin", "1 of 3 specs done (1 passed, 0 failed, 0 skipped); running spec 2: networking WEB-02 needs a Windows node", "Passed 1, Failed 0, Remaining 2", "networking WEB-02 needs a Windows node", ""},
		{"end", "2 of 3 specs done (1 passed, 0 failed, 1 skipped); last: skipped networking WEB-02 needs a Windows node", "Passed 1, Failed 0, Remaining 1", "networking WEB-02 needs a Windows node", "skipped"},
		{"begin", "2 of 3 specs done (1 passed, 0 failed, 1 skipped); running spec 3: networking NET-08 service DNS", "Passed 1, Failed 0, Remaining 1", "networking NET-08 service DNS", ""},
		{"end", "3 of 3 specs done (1 passed, 1 failed, 1 skipped); last: failed networking NET-08 service DNS", "Passed 1, Failed 1, Remaining 0", "networking NET-08 service DNS", "failed"},
		{"finish", "finished, failed: 3 of 3 specs done (1 passed, 1 failed, 1 skipped)", "Passed 1, Failed 1, Remaining 0", "", ""},
	}
	got := s.all()
	if len(got) != len(wants) {
		t.Fatalf("%d updates, want %d (the filtered spec posts nothing): %v", len(got), len(wants), got)
	}
	for i, w := range wants {
		u := got[i]
		spec, _ := u["spec"].(string)
		state, _ := u["state"].(string)
		if u["event"] != w.event || u["msg"] != w.msg || status(u) != w.status || spec != w.spec || state != w.state {
			t.Errorf("update %d: %v\n(sonobuoy status: %s)\nwant %+v", i, u, status(u), w)
		}
	}
	if f := got[len(got)-1]["failures"]; len(f.([]any)) != 1 || f.([]any)[0] != "networking NET-08 service DNS" {
		t.Errorf("the last update's failures: %v", f)
	}
}

// Which specs a run selected: a filtered spec (skipped, never attempted, no
// message), a pending one and a suite node count nowhere; a spec skipped
// because an earlier spec of its ordered container failed (never attempted,
// with Ginkgo's message) and one that skipped at run time do. The tally of
// a finished run is every process's specs.
func TestTallyFromReport(t *testing.T) {
	it := func(text string, state types.SpecState, attempts, process int, msg string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state, NumAttempts: attempts,
			ParallelProcess: process, Failure: types.Failure{Message: msg}, RunTime: 1500 * time.Millisecond}
	}
	r := types.Report{PreRunStats: types.PreRunStats{SpecsThatWillRun: 5}, SuiteSucceeded: false, SpecReports: []types.SpecReport{
		it("a", types.SpecStatePassed, 1, 1, ""),
		it("filtered", types.SpecStateSkipped, 0, 1, ""),
		it("pending", types.SpecStatePending, 0, 1, ""),
		it("b", types.SpecStateFailed, 1, 2, "boom"),
		it("c", types.SpecStateSkipped, 0, 2, "Spec skipped because an earlier spec in an ordered container failed"),
		it("d", types.SpecStateSkipped, 1, 1, "no Windows node"),
		it("e", types.SpecStateTimedout, 1, 2, "timed out"),
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed, NumAttempts: 1},
	}}
	// An API echo of a claim on Windows (LIM-09's level is windows-node):
	// it supports the claim, and counts as no pass.
	echo := it("lim-09 echo", types.SpecStatePassed, 1, 1, "")
	echo.LeafNodeLabels = []string{"claim:LIM-09"}
	echo.ReportEntries = types.ReportEntries{{Name: evidence.EntryName, Value: types.WrapEntryValue(`{"level":"api","detail":"dry-run create"}`)}}
	r.SpecReports = append(r.SpecReports, echo)
	r.PreRunStats.SpecsThatWillRun = 6
	tally := FromReport(r)
	u := tally.Finish(r.SuiteSucceeded)
	if tally.Done() != 6 || u.Total != 3 || u.Completed != 1 || strings.Join(u.Failures, ",") != "b,e" ||
		u.Msg != "finished, failed: 6 of 6 specs done (1 passed, 1 supported only, 2 failed, 2 skipped)" || u.Event != Finish {
		t.Errorf("%d done, %+v", tally.Done(), u)
	}
}

// A receiver that is down slows nothing and fails nothing: one warning.
// Without a URL nothing is posted.
func TestPosterDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/progress"
	srv.Close()
	var log strings.Builder
	r := New(url, &log)
	r.SuiteWillBegin(types.Report{PreRunStats: types.PreRunStats{SpecsThatWillRun: 1}})
	r.SpecDidEnd(types.SpecReport{LeafNodeType: types.NodeTypeIt, State: types.SpecStatePassed, NumAttempts: 1})
	if strings.Count(log.String(), "progress to") != 1 {
		t.Errorf("warnings: %q, want one", log.String())
	}
	if New("", &log) != nil || NewPoster("", &log) != nil {
		t.Error("a reporter without a URL")
	}
	var none *Reporter
	none.SuiteWillBegin(types.Report{})
	none.SpecWillRun(types.SpecReport{})
	none.SpecDidEnd(types.SpecReport{})
	none.SuiteDidEnd(types.Report{})
}

// A receiver that starts listening after the first post (Sonobuoy's
// worker, started beside the plugin) still gets it, and nothing is said.
func TestPosterWaitsForALateReceiver(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused until the receiver listens
	got := make(chan Update, 1)
	go func() {
		time.Sleep(time.Second)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var u Update
			json.NewDecoder(r.Body).Decode(&u)
			got <- u
		})}
		t.Cleanup(func() { srv.Close() })
		srv.Serve(l)
	}()
	var log strings.Builder
	NewPoster("http://"+addr+"/progress", &log).Post(Update{Msg: "first", Total: 3})
	select {
	case u := <-got:
		if u.Msg != "first" || u.Total != 3 {
			t.Errorf("received %+v", u)
		}
	default:
		t.Errorf("the first update was lost; said: %q", log.String())
	}
	if log.Len() != 0 {
		t.Errorf("said %q of a receiver that came up", log.String())
	}
}
