package progress

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func spec(text string, state types.SpecState, attempts, process int) types.SpecReport {
	return types.SpecReport{ContainerHierarchyTexts: []string{"[networking]"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: text,
		State: state, NumAttempts: attempts, ParallelProcess: process, RunTime: 1500 * time.Millisecond}
}

// The suite's progress reaches the URL of --progress-report-url (accepted
// and ignored before): the start with the number of specs, one update per
// spec that ran (appending it to the run's counts, as Sonobuoy's
// ProgressUpdate combines them: github.com/vmware-tanzu/sonobuoy v0.57.3
// pkg/plugin/interface.go CombineUpdates), none for specs the run did not
// select, and the final counts of every process.
func TestReporterPostsEachSpec(t *testing.T) {
	var (
		mu  sync.Mutex
		got []Update
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var u Update
		if err := json.NewDecoder(r.Body).Decode(&u); err != nil || r.Method != http.MethodPost {
			t.Errorf("%s: %v", r.Method, err)
		}
		mu.Lock()
		got = append(got, u)
		mu.Unlock()
	}))
	defer srv.Close()
	r := New(srv.URL + "/progress")
	r.SuiteWillBegin(types.Report{PreRunStats: types.PreRunStats{TotalSpecs: 5, SpecsThatWillRun: 3}})
	specs := []types.SpecReport{
		spec("pods reach pods", types.SpecStatePassed, 1, 1),
		spec("a filtered spec", types.SpecStateSkipped, 0, 1),
		spec("a Windows pod reaches a Service", types.SpecStateFailed, 1, 2),
		spec("needs a Windows node", types.SpecStateSkipped, 1, 2),
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed, NumAttempts: 1},
	}
	for _, sr := range specs {
		r.SpecDidEnd(sr)
	}
	r.SuiteDidEnd(types.Report{PreRunStats: types.PreRunStats{SpecsThatWillRun: 3}, SpecReports: specs})

	want := []Update{
		{Msg: Starting, Total: 3},
		{Msg: "PASSED [networking] pods reach pods", AppendCompleted: 1, Spec: "[networking] pods reach pods", State: "passed", Seconds: 1.5, Process: 1},
		{Msg: "FAILED [networking] a Windows pod reaches a Service", AppendFailing: []string{"[networking] a Windows pod reaches a Service"},
			Spec: "[networking] a Windows pod reaches a Service", State: "failed", Seconds: 1.5, Process: 2},
		{Msg: "SKIPPED [networking] needs a Windows node", AppendCompleted: 1, Spec: "[networking] needs a Windows node", State: "skipped", Seconds: 1.5, Process: 2},
		{Msg: Completed, Total: 3, Completed: 2, Skipped: 1, Failed: 1, Failures: []string{"[networking] a Windows pod reaches a Service"}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d updates, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		a, _ := json.Marshal(got[i])
		b, _ := json.Marshal(want[i])
		if string(a) != string(b) {
			t.Errorf("update %d:\n got %s\nwant %s", i, a, b)
		}
	}
}

// Without a URL nothing is posted, and nothing fails.
func TestReporterWithoutURL(t *testing.T) {
	r := New("")
	r.SuiteWillBegin(types.Report{})
	r.SpecDidEnd(spec("x", types.SpecStatePassed, 1, 1))
	r.SuiteDidEnd(types.Report{})
}
