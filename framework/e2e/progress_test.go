package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// progressSink is a stand-in for Sonobuoy's worker progress endpoint: it
// keeps every update posted, decoded by the field names of Sonobuoy's
// plugin.ProgressUpdate (v0.57.3, pkg/plugin/interface.go: msg, total,
// completed, failures), refusing a body it cannot decode as the
// aggregator does (pkg/plugin/aggregation/handler.go progressHandler: 400).
type progressSink struct {
	mu      sync.Mutex
	updates []map[string]any
}

func (s *progressSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var u map[string]any
	if r.Method != http.MethodPost || r.URL.Path != "/progress" || json.NewDecoder(r.Body).Decode(&u) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.updates = append(s.updates, u)
	s.mu.Unlock()
}

func (s *progressSink) last(t *testing.T) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.updates) == 0 {
		t.Fatal("no progress update was posted")
	}
	return s.updates[len(s.updates)-1]
}

func spec(text string, state types.SpecState, msg string) types.SpecReport {
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state, Failure: types.Failure{Message: msg}}
}

// Progress counts N of M selected specs: passed specs as Sonobuoy's
// "completed", failed ones by name, and a skip leaves the total, so that
// `sonobuoy status` shows Passed/Failed/Remaining true to the run; a spec
// the filters left out counts nowhere.
func TestProgressCountsSelectedSpecs(t *testing.T) {
	sink := &progressSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	p := NewProgress(srv.URL+"/progress", nil)
	p.Start(3)
	if u := sink.last(t); u["msg"] != "0 of 3 specs done: starting" || u["total"] != float64(3) || u["completed"] != float64(0) {
		t.Errorf("start: %v", u)
	}
	p.Begin(spec("NET-07 pod to pod", types.SpecStatePassed, ""))
	if u := sink.last(t); !strings.Contains(u["msg"].(string), "running spec 1: NET-07 pod to pod") {
		t.Errorf("begin: %v", u)
	}
	p.End(spec("NET-07 pod to pod", types.SpecStatePassed, ""))
	filtered := spec("WEB-01 left out by the label filter", types.SpecStateSkipped, "")
	p.Begin(filtered)
	p.End(filtered)
	p.End(spec("WEB-02 needs a Windows node", types.SpecStateSkipped, "no Windows node"))
	p.End(spec("NET-08 service DNS", types.SpecStateFailed, "lookup failed"))
	p.Finish(types.Report{SuiteSucceeded: false})
	u := sink.last(t)
	if u["total"] != float64(2) || u["completed"] != float64(1) || len(u["failures"].([]any)) != 1 || u["failures"].([]any)[0] != "NET-08 service DNS" {
		t.Errorf("the last update %v: want total 2 (3 selected, 1 skipped), completed 1, failures [NET-08 service DNS]", u)
	}
	if u["msg"] != "finished, failed: 3 of 3 specs done (1 passed, 1 failed, 1 skipped)" {
		t.Errorf("the last message %q", u["msg"])
	}
	if n := len(sink.updates); n != 6 {
		t.Errorf("%d updates, want 6 (start, one begin, three ends, finish): the filtered spec posted", n)
	}
}

// A progress endpoint that is down slows nothing and fails nothing: one
// warning.
func TestProgressEndpointDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/progress"
	srv.Close()
	var log strings.Builder
	p := NewProgress(url, &log)
	p.Start(1)
	p.End(spec("x", types.SpecStatePassed, ""))
	if strings.Count(log.String(), "progress to") != 1 {
		t.Errorf("warnings: %q, want one", log.String())
	}
}

// The suite binary posts its progress to --progress-report-url (the flag
// the suite image's runner sets to Sonobuoy's worker): a small suite, run
// in a child process, reaches the stand-in's endpoint from start to end.
func TestSuitePostsProgress(t *testing.T) {
	sink := &progressSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReportsChild$")
	cmd.Env = append(os.Environ(), reportsChild+"="+t.TempDir(), progressChild+"="+srv.URL+"/progress")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child suite: %v\n%s", err, out)
	}
	u := sink.last(t)
	if u["msg"] != "finished: 1 of 1 specs done (1 passed, 0 failed, 0 skipped)" || u["completed"] != float64(1) || u["total"] != float64(1) {
		t.Errorf("the suite's last update: %v", u)
	}
	if len(sink.updates) < 4 {
		t.Errorf("%d updates, want start, begin, end and finish", len(sink.updates))
	}
}
