package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestConnectAgainstServe(t *testing.T) {
	ts := startTestServer(t, "probe-b")
	hostname, _ := os.Hostname()
	targets := []string{
		"tcp://" + ts.tcpAddr,
		"udp://" + ts.udpAddr,
		"http://" + ts.httpAddr + "/json",
		"http://" + ts.httpAddr + "/",
		"http://" + ts.httpAddr + "/nope",
	}
	got := connectResults(t, connectOptions{}, targets...)
	for i, r := range got {
		if r.Index != i || r.Target != targets[i] {
			t.Errorf("result %d is index %d target %q, want %q", i, r.Index, r.Target, targets[i])
		}
	}

	tcp, udp, js, root, nope := got[0], got[1], got[2], got[3], got[4]
	for _, r := range []result{tcp, udp, js, root} {
		wantClass(t, r, "")
		if r.Attempts != 1 || r.LatencyMs <= 0 {
			t.Errorf("%s: attempts %d latencyMs %v", r.Target, r.Attempts, r.LatencyMs)
		}
	}
	if tcp.Detail.Remote != ts.tcpAddr || !strings.HasPrefix(tcp.Detail.Local, "127.0.0.1:") {
		t.Errorf("tcp detail %+v", tcp.Detail)
	}
	if udp.Detail.Remote != ts.udpAddr {
		t.Errorf("udp detail %+v", udp.Detail)
	}
	if d := js.Detail; d.StatusCode != 200 || d.Hostname != hostname || d.PodIP != "10.9.8.7" ||
		d.Name != "probe-b" || d.Caller != "127.0.0.1" || d.Body != "" || d.Remote != ts.httpAddr {
		t.Errorf("http /json detail %+v", d)
	}
	if d := root.Detail; d.StatusCode != 200 || d.Hostname != "" ||
		!strings.HasPrefix(d.Body, "<html><body><H1>winconform probe web server</H1>") || len(d.Body) > bodyExcerptLen {
		t.Errorf("http / detail %+v", d)
	}
	wantClass(t, nope, classHTTPStatus)
	if nope.Detail.StatusCode != 404 {
		t.Errorf("http /nope status %d, want 404", nope.Detail.StatusCode)
	}
}

func TestConnectRefused(t *testing.T) {
	for _, target := range []string{
		"tcp://" + closedPort(t, "tcp"),
		"udp://" + closedPort(t, "udp"),
		"http://" + closedPort(t, "tcp") + "/",
	} {
		r := connectOne(t, connectOptions{}, target)
		wantClass(t, r, classRefused)
	}
}

// TestConnectBlackholeTimesOut dials TEST-NET-1, which normally goes
// nowhere. Sandboxes whose own network is 192.0.2.0/24, or that proxy every
// connection, make it answer: the test is skipped there (see
// TestConnectTCPTimeout for a deterministic Linux variant).
func TestConnectBlackholeTimesOut(t *testing.T) {
	const blackhole = "192.0.2.1:81"
	if c, err := net.DialTimeout("tcp", blackhole, 300*time.Millisecond); err == nil {
		c.Close()
		t.Skipf("%s accepts connections here", blackhole)
	} else if c := classify(err); c != classTimeout && c != classUnreachable {
		t.Skipf("%s is no blackhole here: %v", blackhole, err)
	}
	start := time.Now()
	r := connectOne(t, connectOptions{timeout: 300 * time.Millisecond}, "tcp://"+blackhole)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("took %v with a 300ms timeout", elapsed)
	}
	// Hosts without a route answer unreachable at once.
	if r.ErrorClass != classTimeout && r.ErrorClass != classUnreachable {
		t.Errorf("errorClass %q (%s), want timeout or unreachable", r.ErrorClass, r.Error)
	}
	if r.OK || r.Attempts != 1 {
		t.Errorf("ok %v attempts %d", r.OK, r.Attempts)
	}
}

func TestConnectHTTPTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	start := time.Now()
	r := connectOne(t, connectOptions{timeout: 200 * time.Millisecond}, srv.URL+"/hang")
	wantClass(t, r, classTimeout)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("took %v with a 200ms timeout", elapsed)
	}
	if r.LatencyMs < 200 {
		t.Errorf("latencyMs %v, want at least the 200ms timeout", r.LatencyMs)
	}
}

func TestConnectUDPSilentPeerTimesOut(t *testing.T) {
	// A bound socket that never answers: the datagram is not refused.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	r := connectOne(t, connectOptions{timeout: 200 * time.Millisecond}, "udp://"+pc.LocalAddr().String())
	wantClass(t, r, classTimeout)
}

func TestConnectUDPWrongAnswerIsMismatch(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 1500)
		n, addr, err := pc.ReadFrom(buf)
		if err == nil {
			pc.WriteTo(append([]byte("not "), buf[:n]...), addr)
		}
	}()
	r := connectOne(t, connectOptions{timeout: 300 * time.Millisecond}, "udp://"+pc.LocalAddr().String())
	wantClass(t, r, classMismatch)
}

func TestConnectDNS(t *testing.T) {
	r := connectOne(t, connectOptions{}, "dns://localhost")
	wantClass(t, r, "")
	if !slices.Contains(r.Detail.Addresses, "127.0.0.1") && !slices.Contains(r.Detail.Addresses, "::1") {
		t.Errorf("localhost resolved to %v", r.Detail.Addresses)
	}
	wantClass(t, connectOne(t, connectOptions{}, "dns://127.0.0.1?expect=127.0.0.1"), "")
	wantClass(t, connectOne(t, connectOptions{}, "dns://127.0.0.1?expect=10.1.1.1"), classMismatch)
	wantClass(t, connectOne(t, connectOptions{}, "dns://does-not-exist.invalid"), classDNS)
	wantClass(t, connectOne(t, connectOptions{}, "tcp://does-not-exist.invalid:80"), classDNS)
}

func TestConnectInvalidTargets(t *testing.T) {
	targets := []string{"", "bogus", "tcp://10.0.0.1", "ftp://x:21", "dns://a?expect=nope", "tcp://[::1:80"}
	for _, r := range connectResults(t, connectOptions{attempts: 3}, targets...) {
		wantClass(t, r, classInvalidTarget)
		if r.Attempts != 0 || r.Detail == nil {
			t.Errorf("%q: attempts %d detail %v, want 0 attempts and an empty detail", r.Target, r.Attempts, r.Detail)
		}
	}
}

func TestConnectICMPLoopback(t *testing.T) {
	r := connectOne(t, connectOptions{timeout: time.Second}, "icmp://127.0.0.1")
	switch r.ErrorClass {
	case "":
		wantClass(t, r, "")
		if r.Detail.Remote != "127.0.0.1" {
			t.Errorf("remote %q", r.Detail.Remote)
		}
	case classUnsupported:
		t.Logf("ICMP is not permitted here: %s", r.Error)
		if r.Error == "" {
			t.Error("unsupported without an explanation")
		}
	default:
		t.Errorf("icmp://127.0.0.1: errorClass %q (%s), want ok or unsupported", r.ErrorClass, r.Error)
	}
}

// TestConnectParallelKeepsOrder makes target 0 finish last: its handler
// waits for target 1's request. It succeeds only if the targets run at once,
// and its line must still come first.
func TestConnectParallelKeepsOrder(t *testing.T) {
	release := make(chan struct{})
	var released atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wait":
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		case "/release":
			if released.CompareAndSwap(false, true) {
				close(release)
			}
		}
		w.Write([]byte("done " + r.URL.Path))
	}))
	defer srv.Close()
	targets := []string{
		srv.URL + "/wait",
		srv.URL + "/release",
		"not a target",
		"tcp://" + srv.Listener.Addr().String(),
		"tcp://" + closedPort(t, "tcp"),
	}
	var order []int
	err := connectAll(context.Background(), targets, connectOptions{timeout: 3 * time.Second, parallel: 3, attempts: 1},
		func(r result) error {
			order = append(order, r.Index)
			if r.Target != targets[r.Index] {
				t.Errorf("index %d carries target %q, want %q", r.Index, r.Target, targets[r.Index])
			}
			switch r.Index {
			case 0:
				wantClass(t, r, "")
				if r.Detail.Body != "done /wait" {
					t.Errorf("body %q", r.Detail.Body)
				}
			case 1, 3:
				wantClass(t, r, "")
			case 2:
				wantClass(t, r, classInvalidTarget)
			case 4:
				wantClass(t, r, classRefused)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
		t.Errorf("emitted indexes %v, want 0..4 in order", order)
	}
}

func TestConnectSequentialWhenParallelIsOne(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}))
	defer srv.Close()
	got := connectResults(t, connectOptions{parallel: 1}, srv.URL, srv.URL, srv.URL)
	for _, r := range got {
		wantClass(t, r, "")
	}
	if m := maxInFlight.Load(); m != 1 {
		t.Errorf("%d requests in flight at once with --parallel 1", m)
	}
}

func TestConnectRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 2 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	opts := connectOptions{attempts: 3, retryDelay: time.Millisecond}

	r := connectOne(t, opts, srv.URL+"/")
	wantClass(t, r, "")
	if r.Attempts != 2 || r.Detail.StatusCode != 200 {
		t.Errorf("flaky server: attempts %d status %d, want success at attempt 2", r.Attempts, r.Detail.StatusCode)
	}

	r = connectOne(t, opts, "tcp://"+closedPort(t, "tcp"))
	wantClass(t, r, classRefused)
	if r.Attempts != 3 {
		t.Errorf("refused: attempts %d, want 3", r.Attempts)
	}

	r = connectOne(t, opts, "tcp://"+srv.Listener.Addr().String())
	if r.Attempts != 1 || !r.OK {
		t.Errorf("reachable: ok %v attempts %d, want ok at attempt 1", r.OK, r.Attempts)
	}
}

func TestConnectStopsOnEmitError(t *testing.T) {
	errFull := errors.New("disk full")
	calls := 0
	err := connectAll(context.Background(), []string{"bogus", "bogus", "bogus"},
		connectOptions{timeout: time.Second, parallel: 2, attempts: 1},
		func(result) error { calls++; return errFull })
	if !errors.Is(err, errFull) || calls != 1 {
		t.Errorf("err %v after %d emits, want disk full after 1", err, calls)
	}
}

func TestExcerpt(t *testing.T) {
	if got := excerpt([]byte("short"), 200); got != "short" {
		t.Errorf("excerpt = %q", got)
	}
	// "é" is 2 bytes: cutting at 3 bytes must not split it.
	if got := excerpt([]byte("aéé"), 4); got != "aé" {
		t.Errorf("excerpt = %q, want aé", got)
	}
	if got := excerpt([]byte(strings.Repeat("x", 300)), 200); len(got) != 200 {
		t.Errorf("excerpt has %d bytes, want 200", len(got))
	}
}
