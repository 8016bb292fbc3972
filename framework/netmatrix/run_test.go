package netmatrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winconform/winconform/framework/probeclient"
)

// runTargets is a compact set of targets for Run: two pods, a Linux-backed
// Service by every mode with NodePorts through a Linux and a Windows node,
// and the server outside the cluster.
func runTargets() []Target {
	var ts []Target
	ts = append(ts, podTargets(peerLinA)...)
	ts = append(ts, podTargets(peerWinA)...)
	ts = append(ts, serviceTargets(peerSvcLinux, linCP, win1)...)
	ts = append(ts, outsideTarget())
	return ts
}

func TestRunProbesEveryApplicableCellOnceInOneBatchPerSource(t *testing.T) {
	ts := runTargets()
	peers := []Peer{peerLinA, peerWinA, nodeLinCP, nodeWin1, outsideCli}
	var fakes []*fakeSource
	var sources []Source
	for _, p := range peers {
		f := &fakeSource{peer: p, probe: per(answerFromBackend(ts))}
		fakes = append(fakes, f)
		sources = append(sources, f)
	}
	m := &Matrix{Sources: sources, Targets: ts, Claims: ClaimsFor, Applies: Applicable, Workers: 3}
	out := &syncBuffer{}
	m.Run(context.Background(), out)

	u := func(id string) string { return targetByID(t, ts, id).URL }
	want := map[string][]string{
		// A pod: everything but itself and NodePorts.
		"linux-a": {u("windows-a/pod-ip"), u("windows-a/pod-dns"), u("windows-a/icmp"),
			u("svc-linux/cluster-ip"), u("svc-linux/service-dns"), u("svc-linux/service-fqdn"), u("outside-server/address")},
		"windows-a": {u("linux-a/pod-ip"), u("linux-a/pod-dns"), u("linux-a/icmp"),
			u("svc-linux/cluster-ip"), u("svc-linux/service-dns"), u("svc-linux/service-fqdn"), u("outside-server/address")},
		// A node: no names, no ICMP; NodePorts and addresses.
		linCP: {u("linux-a/pod-ip"), u("windows-a/pod-ip"), u("svc-linux/cluster-ip"),
			u("svc-linux/nodeport@" + linCP), u("svc-linux/nodeport@" + win1), u("outside-server/address")},
		win1: {u("linux-a/pod-ip"), u("windows-a/pod-ip"), u("svc-linux/cluster-ip"),
			u("svc-linux/nodeport@" + linCP), u("svc-linux/nodeport@" + win1), u("outside-server/address")},
		// The client outside: NodePorts only.
		"outside-client": {u("svc-linux/nodeport@" + linCP), u("svc-linux/nodeport@" + win1)},
	}
	total := 0
	for _, f := range fakes {
		got := f.Batches()
		w := want[f.peer.Name]
		if len(got) != 1 {
			t.Errorf("%s: %d batches %q, want exactly one", f.peer.Name, len(got), got)
			continue
		}
		if !reflect.DeepEqual(got[0], w) {
			t.Errorf("%s: batch\n%q\nwant\n%q", f.peer.Name, got[0], w)
		}
		// urlsOf is the same thing computed from Applicable.
		if !reflect.DeepEqual(got[0], urlsOf(f.peer, ts)) {
			t.Errorf("%s: batch differs from the applicable targets in order", f.peer.Name)
		}
		total += len(w)
	}

	cells := m.Cells()
	if len(cells) != total {
		t.Fatalf("%d cells, want %d (one per applicable pair)", len(cells), total)
	}
	// Cells come by source, then target order.
	i := 0
	for _, p := range peers {
		for _, tg := range ts {
			if !Applicable(p, tg) {
				continue
			}
			c := cells[i]
			i++
			if c.Source != p.Name || c.Target != tg.ID() {
				t.Fatalf("cell %d is %s -> %s, want %s -> %s", i-1, c.Source, c.Target, p.Name, tg.ID())
			}
			if c.Observed != Reachable || c.Verdict != OK || c.Reprobed || c.First != nil || c.Why != "" {
				t.Errorf("%s -> %s: observed %s verdict %s reprobed %v first %v why %q, want a clean OK",
					c.Source, c.Target, c.Observed, c.Verdict, c.Reprobed, c.First, c.Why)
			}
			if !c.Expect.Reachable {
				t.Errorf("%s -> %s: the zero profile expects %v, want reachable", c.Source, c.Target, c.Expect)
			}
			if c.Result.Target != tg.URL || !c.Result.OK {
				t.Errorf("%s -> %s: result %+v, want the probe's OK result for %s", c.Source, c.Target, c.Result, tg.URL)
			}
			if want := "repro-from " + p.Name + " " + tg.URL; c.Repro != want {
				t.Errorf("%s -> %s: repro %q, want %q", c.Source, c.Target, c.Repro, want)
			}
			if want := ClaimsFor(p, tg); !reflect.DeepEqual(c.Claims, want) {
				t.Errorf("%s -> %s: claims %v, want %v", c.Source, c.Target, c.Claims, want)
			}
		}
	}

	// Not applicable pairs have no cell.
	for _, c := range cells {
		if c.Source == c.Target[:strings.IndexByte(c.Target, '/')] {
			t.Errorf("cell %s -> %s: a pod probed itself", c.Source, c.Target)
		}
	}

	// The printed table: header first, one row per source, footer last.
	s := out.String()
	if !strings.HasPrefix(s, "network matrix: 5 sources x 12 targets") {
		t.Errorf("output does not start with the header:\n%s", s)
	}
	if !strings.Contains(s, fmt.Sprintf("verdicts: %d ok, 0 regression, 0 wrong, 0 flaky, 0 drift, 0 probe error, 0 skipped\n", total)) ||
		!strings.HasSuffix(s, "skipped\n") {
		t.Errorf("output does not end with the footer counting %d ok cells:\n%s", total, s)
	}
	for _, p := range peers {
		if n := strings.Count(s, "\n"+sourceLabel(p)); n != 1 {
			t.Errorf("row of %s printed %d times, want once:\n%s", p.Name, n, s)
		}
	}
}

func TestRunWithoutAppliesOrClaimsProbesEveryPair(t *testing.T) {
	ts := []Target{podTargets(peerLinA)[0], outsideTarget()}
	f := &fakeSource{peer: peerLinA, probe: per(answerFromBackend(ts))}
	m := &Matrix{Sources: []Source{f}, Targets: ts}
	m.Run(context.Background(), nil) // a nil writer is allowed
	if got := f.Batches(); len(got) != 1 || !reflect.DeepEqual(got[0], []string{ts[0].URL, ts[1].URL}) {
		t.Fatalf("batches %q, want every target (Applies is nil)", got)
	}
	for _, c := range m.Cells() {
		if c.Claims != nil {
			t.Errorf("%s: claims %v without a Claims function", c.Target, c.Claims)
		}
	}
}

func TestRunReprobesOnlyMismatchesInOneExtraBatch(t *testing.T) {
	ts := runTargets()
	u := func(id string) string { return targetByID(t, ts, id).URL }
	var (
		flaky      = u("windows-a/pod-ip")       // timeout, then OK: flaky
		dead       = u("windows-a/pod-dns")      // dns twice: regression
		icmp       = u("windows-a/icmp")         // unsupported twice: probe error
		wrongFirst = u("svc-linux/cluster-ip")   // answered by a stranger (a wrong answer, not a blocked path), then by a backend: still wrong
		driftTwice = u("outside-server/address") // expected blocked, reachable twice: drift
		driftOnce  = u("svc-linux/service-fqdn") // expected blocked, reachable then blocked: flaky
		steady     = u("svc-linux/service-dns")  // OK: not reprobed
	)
	answer := func(call int, url string) probeclient.Result {
		switch url {
		case flaky:
			if call == 0 {
				return failResult("timeout", "i/o timeout")
			}
			return okResult(ipWinA)
		case dead:
			return failResult("dns", "no such host")
		case icmp:
			return failResult("unsupported", "raw sockets need privileges")
		case wrongFirst:
			if call == 0 {
				return okResult("10.1.2.3")
			}
			return okResult(ipLinB)
		case driftTwice:
			return okResult("")
		case driftOnce:
			if call == 0 {
				return okResult(ipLinA)
			}
			return failResult("refused", "connection refused")
		case steady:
			return okResult(ipLinA)
		}
		return failResult("invalid-target", "unexpected "+url)
	}
	f := &fakeSource{peer: peerLinA, probe: per(answer)}
	// Two made-up limitations make the outside server and the FQDN expected
	// unreachable from linux-a.
	profile := Profile{Rules: []Rule{
		{ID: "test-no-outside", Claim: "NET-16", Reason: "no way out", Doc: "doc A",
			Match: func(src Peer, t Target) bool { return src.Name == "linux-a" && t.Kind == External }},
		{ID: "test-no-fqdn", Claim: "NET-20", Reason: "no fqdn", Doc: "doc B",
			Match: func(src Peer, t Target) bool { return t.Mode == ServiceFQDN }},
	}}
	m := &Matrix{Sources: []Source{f}, Targets: ts, Profile: profile, Claims: ClaimsFor, Applies: Applicable, Workers: 1}
	m.Run(context.Background(), nil)

	got := f.Batches()
	if len(got) != 2 {
		t.Fatalf("%d batches, want 2 (first, then one re-probe of the mismatches): %q", len(got), got)
	}
	if want := urlsOf(peerLinA, ts); !reflect.DeepEqual(got[0], want) {
		t.Errorf("first batch %q, want every applicable target %q", got[0], want)
	}
	// The second batch: the mismatches only, in target order.
	wantSecond := []string{flaky, dead, icmp, wrongFirst, driftOnce, driftTwice}
	if !reflect.DeepEqual(got[1], wantSecond) {
		t.Errorf("second batch\n%q\nwant\n%q", got[1], wantSecond)
	}

	type want struct {
		observed   Observation
		verdict    Verdict
		reprobed   bool
		firstOK    bool
		firstClass string
	}
	cases := map[string]want{
		"windows-a/pod-ip":            {Reachable, Flaky, true, false, "timeout"},
		"windows-a/pod-dns":           {Blocked, Regression, true, false, "dns"},
		"windows-a/icmp":              {ProbeError, Broken, true, false, "unsupported"},
		"svc-linux/cluster-ip":        {WrongAnswer, Wrong, true, true, ""},
		"svc-linux/service-fqdn":      {Blocked, Flaky, true, true, ""},
		"outside-server/address":      {Reachable, Drift, true, true, ""},
		"svc-linux/service-dns":       {Reachable, OK, false, false, ""},
		"linux-a/pod-ip":              {}, // not applicable
		"svc-linux/nodeport@" + linCP: {},
	}
	for id, w := range cases {
		if w.observed == "" {
			for _, c := range m.Cells() {
				if c.Target == id {
					t.Errorf("%s: has a cell, want none (not applicable)", id)
				}
			}
			continue
		}
		c := cellOf(t, m, "linux-a", id)
		if c.Observed != w.observed || c.Verdict != w.verdict || c.Reprobed != w.reprobed {
			t.Errorf("%s: observed %s verdict %s reprobed %v, want %s %s %v", id, c.Observed, c.Verdict, c.Reprobed, w.observed, w.verdict, w.reprobed)
		}
		if !w.reprobed {
			if c.First != nil {
				t.Errorf("%s: First %+v on a cell probed once", id, *c.First)
			}
			continue
		}
		if c.First == nil {
			t.Errorf("%s: reprobed but First is nil", id)
			continue
		}
		if c.First.OK != w.firstOK || c.First.ErrorClass != w.firstClass || c.First.Target != targetByID(t, ts, id).URL {
			t.Errorf("%s: First %+v, want ok=%v class %q", id, *c.First, w.firstOK, w.firstClass)
		}
		// The final result is the second probe's, whose index is within
		// the second batch.
		idx := -1
		for i, u := range wantSecond {
			if u == c.Result.Target {
				idx = i
			}
		}
		if idx < 0 || c.Result.Index != idx {
			t.Errorf("%s: final result %+v is not the second probe's (index %d in the re-probe)", id, c.Result, idx)
		}
	}

	// The stranger's answer was a wrong answer on the first probe; the
	// second probe's right answer does not erase it.
	if c := cellOf(t, m, "linux-a", "svc-linux/cluster-ip"); c.First.Detail.PodIP != "10.1.2.3" || !strings.Contains(c.Why, "answered by 10.1.2.3") {
		t.Errorf("cluster-ip: first answered by %q, why %q; want the stranger 10.1.2.3 first, and named", c.First.Detail.PodIP, c.Why)
	}
	if c := cellOf(t, m, "linux-a", "windows-a/icmp"); c.Why != "raw sockets need privileges" {
		t.Errorf("icmp: why %q, want the probe's error", c.Why)
	}
	if c := cellOf(t, m, "linux-a", "outside-server/address"); c.Expect.Rule != "test-no-outside" || c.Expect.Reachable {
		t.Errorf("outside: expect %+v, want the test rule", c.Expect)
	}
}

func TestRunBlockedTwiceIsRegressionAndBlockedThenReachableIsFlaky(t *testing.T) {
	ts := []Target{podTargets(peerWinA)[0], podTargets(peerLinB)[0]}
	f := &fakeSource{peer: peerLinA, probe: per(func(call int, url string) probeclient.Result {
		if url == ts[0].URL {
			return failResult("timeout", "i/o timeout") // blocked twice
		}
		if call == 0 {
			return failResult("reset", "connection reset by peer")
		}
		return okResult(ipLinB)
	})}
	m := &Matrix{Sources: []Source{f}, Targets: ts, Applies: Applicable}
	m.Run(context.Background(), nil)
	if got := f.Batches(); len(got) != 2 || !reflect.DeepEqual(got[1], []string{ts[0].URL, ts[1].URL}) {
		t.Fatalf("batches %q, want the first and a re-probe of both", got)
	}
	if c := cellOf(t, m, "linux-a", ts[0].ID()); c.Verdict != Regression || c.Observed != Blocked || !c.Reprobed || c.First.ErrorClass != "timeout" {
		t.Errorf("blocked twice: %+v, want a re-probed regression", c)
	}
	c := cellOf(t, m, "linux-a", ts[1].ID())
	if c.Verdict != Flaky || c.Observed != Reachable || !c.Reprobed || c.First.ErrorClass != "reset" || c.Symbol() != SymFlaky {
		t.Errorf("flaky: %+v, want a re-probed flaky cell", c)
	}
	if c.Why != "blocked on the first probe, reachable on the second" {
		t.Errorf("flaky: why %q", c.Why)
	}
	if !c.Verdict.Fails(false) || c.Verdict.Fails(true) {
		t.Errorf("a flaky cell must fail its claim unless flaky cells are allowed")
	}
}

func TestRunSourceErrorMakesItsCellsProbeErrorsOnly(t *testing.T) {
	ts := runTargets()
	boom := errors.New("exec in ns/windows-a: container not found")
	bad := &fakeSource{peer: peerWinA, probe: func(context.Context, int, []string) ([]probeclient.Result, error) { return nil, boom }}
	good := &fakeSource{peer: peerLinA, probe: per(answerFromBackend(ts))}
	node := &fakeSource{peer: nodeLinCP, probe: per(answerFromBackend(ts))}
	m := &Matrix{Sources: []Source{bad, good, node}, Targets: ts, Claims: ClaimsFor, Applies: Applicable, Workers: 2}
	out := &syncBuffer{}
	m.Run(context.Background(), out)

	b := bad.Batches()
	if len(b) != 2 || !reflect.DeepEqual(b[0], urlsOf(peerWinA, ts)) || !reflect.DeepEqual(b[1], b[0]) {
		t.Errorf("failing source's batches %q, want every target twice (a probe error is re-probed)", b)
	}
	for _, f := range []*fakeSource{good, node} {
		if got := f.Batches(); len(got) != 1 {
			t.Errorf("%s: %d batches, want 1 (unaffected by the other source's failure)", f.peer.Name, len(got))
		}
	}
	n := 0
	for i, u := range urlsOf(peerWinA, ts) {
		var c *Cell
		for _, x := range m.Cells() {
			if x.Source == "windows-a" && x.Result.Target == u {
				c = x
			}
		}
		if c == nil {
			t.Fatalf("no cell for windows-a -> %s", u)
		}
		n++
		if c.Observed != ProbeError || c.Verdict != Broken || c.Why != boom.Error() || !c.Reprobed {
			t.Errorf("%s: observed %s verdict %s why %q reprobed %v, want a re-probed probe error with the source's error",
				c.Target, c.Observed, c.Verdict, c.Why, c.Reprobed)
		}
		if c.Result.ErrorClass != "probe-error" || c.Result.Error != boom.Error() || c.Result.Index != i || c.Result.OK {
			t.Errorf("%s: result %+v, want a synthesized probe-error result at index %d", c.Target, c.Result, i)
		}
		if c.First == nil || c.First.ErrorClass != "probe-error" {
			t.Errorf("%s: first %+v, want the first probe error", c.Target, c.First)
		}
		if c.Symbol() != SymProbeError {
			t.Errorf("%s: symbol %q, want %q", c.Target, c.Symbol(), SymProbeError)
		}
	}
	for _, c := range m.Cells() {
		if c.Source != "windows-a" && c.Verdict != OK {
			t.Errorf("%s -> %s: %s, want ok (another source's failure must not spill over)", c.Source, c.Target, c.Verdict)
		}
	}
	if s := out.String(); !strings.Contains(s, fmt.Sprintf(", %d probe error, ", n)) ||
		!strings.Contains(s, "probe-error: windows-a -> linux-a/pod-ip: expected reachable, probe-error (probe-error: "+boom.Error()+"), also on the second probe; reproduce: repro-from windows-a "+targetByID(t, ts, "linux-a/pod-ip").URL) {
		t.Errorf("footer does not count %d probe errors and describe them:\n%s", n, s)
	}
}

// slowSources are n sources that record how many Probe calls run at once;
// each call waits until `until` calls are in flight (or a second passes),
// then holds a little longer.
func slowSources(n, until int, inFlight, maxInFlight *atomic.Int32) ([]*fakeSource, []Source, []Target) {
	ts := []Target{outsideTarget()}
	var fakes []*fakeSource
	var sources []Source
	for i := 0; i < n; i++ {
		p := Peer{Name: fmt.Sprintf("pod-%d", i), Kind: Pod, OS: "linux", Node: linW, BackendIPs: []string{fmt.Sprintf("10.0.0.%d", i+1)}}
		f := &fakeSource{peer: p, probe: func(ctx context.Context, call int, targets []string) ([]probeclient.Result, error) {
			cur := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				old := maxInFlight.Load()
				if cur <= old || maxInFlight.CompareAndSwap(old, cur) {
					break
				}
			}
			deadline := time.Now().Add(time.Second)
			for inFlight.Load() < int32(until) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			return per(func(int, string) probeclient.Result { return okResult("") })(ctx, call, targets)
		}}
		fakes = append(fakes, f)
		sources = append(sources, f)
	}
	return fakes, sources, ts
}

func TestRunWorkersBoundConcurrentProbes(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	fakes, sources, ts := slowSources(4, 2, &inFlight, &maxInFlight)
	m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable, Workers: 2}
	start := time.Now()
	m.Run(context.Background(), &syncBuffer{})
	if got := maxInFlight.Load(); got != 2 {
		t.Errorf("at most %d Probe calls ran at once with Workers=2, want exactly 2", got)
	}
	for _, f := range fakes {
		if got := f.Batches(); len(got) != 1 {
			t.Errorf("%s: %d batches, want 1", f.peer.Name, len(got))
		}
	}
	for _, c := range m.Cells() {
		if c.Verdict != OK {
			t.Errorf("%s: %s, want ok", c.Source, c.Verdict)
		}
	}
	if len(m.Cells()) != 4 {
		t.Errorf("%d cells, want 4", len(m.Cells()))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v", d)
	}
}

func TestRunDefaultsToFourWorkers(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	fakes, sources, ts := slowSources(6, 4, &inFlight, &maxInFlight)
	m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable} // Workers 0
	m.Run(context.Background(), nil)
	if got := maxInFlight.Load(); got != 4 {
		t.Errorf("at most %d Probe calls ran at once with Workers unset, want the default 4", got)
	}
	for _, f := range fakes {
		if got := f.Batches(); len(got) != 1 {
			t.Errorf("%s: %d batches, want 1", f.peer.Name, len(got))
		}
	}
}

// cancelSources are n sources; the first cancels the run's context when it
// is probed. Probe counts calls.
func cancelSources(n int, cancel context.CancelFunc, calls *atomic.Int32) ([]*fakeSource, []Source, []Target) {
	ts := []Target{outsideTarget()}
	var fakes []*fakeSource
	var sources []Source
	for i := 0; i < n; i++ {
		i := i
		p := Peer{Name: fmt.Sprintf("pod-%02d", i), Kind: Pod, OS: "linux", Node: linW}
		f := &fakeSource{peer: p, probe: func(ctx context.Context, call int, targets []string) ([]probeclient.Result, error) {
			calls.Add(1)
			if i == 0 && cancel != nil {
				cancel()
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return per(func(int, string) probeclient.Result { return okResult("") })(ctx, call, targets)
		}}
		fakes = append(fakes, f)
		sources = append(sources, f)
	}
	return fakes, sources, ts
}

func TestRunCancelledContextStopsSchedulingAndReturns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	fakes, sources, ts := cancelSources(30, cancel, &calls)
	m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable, Workers: 1}
	done := make(chan struct{})
	go func() { m.Run(ctx, &syncBuffer{}); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	probed := 0
	for _, f := range fakes {
		if len(f.Batches()) > 0 {
			probed++
		}
	}
	// Scheduling stops: most sources were never handed to a worker.
	if probed == len(fakes) {
		t.Errorf("all %d sources were probed after the context was cancelled by the first", probed)
	}
	if fakes[0].Batches() == nil {
		t.Errorf("the first source was not probed")
	}
	// Cells never probed stay not-probed, and show as such.
	for _, f := range fakes {
		if len(f.Batches()) > 0 {
			continue
		}
		c := cellOf(t, m, f.peer.Name, ts[0].ID())
		if c.Observed != NotProbed || c.Symbol() != SymSkipped || c.Reprobed || c.First != nil {
			t.Errorf("%s: observed %s symbol %q, want not probed (-)", f.peer.Name, c.Observed, c.Symbol())
		}
	}
}

func TestRunCancelledContextSchedulesNoFurtherSource(t *testing.T) {
	// Whether an idle worker is parked on the channel when the loop reaches
	// a source is up to the scheduler, so try a few times: a correct Run
	// never probes a source after the context is done.
	for attempt := 0; attempt < 20; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var calls atomic.Int32
		_, sources, ts := cancelSources(200, nil, &calls)
		m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable, Workers: 8}
		m.Run(ctx, nil)
		if n := calls.Load(); n > 0 {
			t.Fatalf("attempt %d: %d Probe calls with a context cancelled before Run", attempt, n)
		}
	}
	for attempt := 0; attempt < 20; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int32
		fakes, sources, ts := cancelSources(200, cancel, &calls)
		m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable, Workers: 1}
		m.Run(ctx, nil)
		cancel()
		var probed []string
		for _, f := range fakes[1:] {
			if len(f.Batches()) > 0 {
				probed = append(probed, f.peer.Name)
			}
		}
		if len(probed) > 0 {
			t.Fatalf("attempt %d: %d sources were probed after the first cancelled the context: %v", attempt, len(probed), probed)
		}
	}
}

func TestRunUnprobedCellsAreSkipped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	_, sources, ts := cancelSources(1, nil, &calls)
	// No worker can take the source, so it is never probed... except that
	// the random select may still hand it over; run until one is unprobed.
	for attempt := 0; attempt < 50; attempt++ {
		m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable, Workers: 1}
		out := &syncBuffer{}
		m.Run(ctx, out)
		c := m.Cells()[0]
		if c.Observed != NotProbed {
			continue
		}
		if c.Verdict != Skipped {
			t.Errorf("unprobed cell's verdict %q, want %q", c.Verdict, Skipped)
		}
		if !strings.Contains(out.String(), "0 ok, 0 regression, 0 wrong, 0 flaky, 0 drift, 0 probe error, 1 skipped") {
			t.Errorf("footer does not count the unprobed cell as skipped:\n%s", out.String())
		}
		if md := m.Markdown(); !strings.Contains(md, "## Cells that are not as expected\n\nNone.\n") {
			t.Errorf("Markdown lists an unprobed cell as not as expected:\n%s", md)
		}
		return
	}
	t.Fatal("the source was probed in every attempt")
}

func TestRunWritesRowsFromWorkersWithoutARace(t *testing.T) {
	// Four sources on four workers finish their probes together, so their
	// rows are written at about the same time.
	var inFlight, maxInFlight atomic.Int32
	_, sources, ts := slowSources(4, 4, &inFlight, &maxInFlight)
	m := &Matrix{Sources: sources, Targets: ts, Applies: Applicable, Workers: 4}
	var out bytes.Buffer
	m.Run(context.Background(), &out)
	for _, s := range sources {
		if !strings.Contains(out.String(), "\n"+sourceLabel(s.Peer())+" ") {
			t.Errorf("row of %s missing:\n%s", s.Peer().Name, out.String())
		}
	}
}
