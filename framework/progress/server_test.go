package progress

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/evidence"
)

// syncBuffer is a bytes.Buffer that the server's handlers may write to at
// once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The server prints an N of M line per spec from the progress of every
// process of a parallel run, counts the run itself, and passes the run's
// progress (in Sonobuoy's form, as framework/progress posts it) on to the
// user's own --progress-report-url: each process's own counts would say
// less than the run.
func TestProgressLines(t *testing.T) {
	var (
		mu        sync.Mutex
		forwarded []Update
	)
	user := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var u Update
		json.NewDecoder(r.Body).Decode(&u)
		mu.Lock()
		forwarded = append(forwarded, u)
		mu.Unlock()
	}))
	defer user.Close()
	var out syncBuffer
	p, err := Serve(4, &out, user.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first, second := New(p.URL, &out), New(p.URL, &out)
	first.SuiteWillBegin(types.Report{PreRunStats: types.PreRunStats{TotalSpecs: 9, SpecsThatWillRun: 4}})
	spec := func(text string, state types.SpecState, attempts, process int) types.SpecReport {
		return types.SpecReport{ContainerHierarchyTexts: []string{"[networking]"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: text,
			State: state, NumAttempts: attempts, ParallelProcess: process, RunTime: 1500 * time.Millisecond}
	}
	// A Linux twin of a Windows claim passes: it supports the claim, it
	// shows nothing on Windows, and no count takes it for a pass.
	twin := spec("WEB-01 on a Linux twin", types.SpecStatePassed, 1, 2)
	twin.LeafNodeLabels = []string{"claim:WEB-01", "os:linux"}
	twin.ReportEntries = types.ReportEntries{{Name: evidence.EntryName, Value: types.WrapEntryValue(`{"level":"linux","nodes":["lin-w"]}`)}}
	first.SpecDidEnd(spec("pods reach pods", types.SpecStatePassed, 1, 1))
	second.SpecDidEnd(spec("a filtered spec", types.SpecStateSkipped, 0, 2))
	second.SpecDidEnd(spec("a Windows pod reaches a Service", types.SpecStateFailed, 1, 2))
	second.SpecDidEnd(twin)
	first.SpecDidEnd(spec("needs a Windows node", types.SpecStateSkipped, 1, 1))
	want := "1 of 4  passed   [networking] pods reach pods  1.5s\n" +
		"2 of 4  failed   [networking] a Windows pod reaches a Service  1.5s\n" +
		"3 of 4  supported only [networking] WEB-01 on a Linux twin  1.5s\n" +
		"4 of 4  skipped  [networking] needs a Windows node  1.5s\n"
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", out.String(), want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forwarded) != 5 || forwarded[0].Event != Start || forwarded[0].Total != 4 {
		t.Fatalf("forwarded %+v", forwarded)
	}
	last := forwarded[4]
	if last.Total != 2 || last.Completed != 1 || len(last.Failures) != 1 || last.Msg != "4 of 4 specs done (1 passed, 1 supported only, 1 failed, 1 skipped); last: skipped [networking] needs a Windows node" {
		t.Errorf("the run's last update %+v: want the run's counts (total 2: a skip and a twin leave it, completed 1, one failure), not a process's", last)
	}
}
