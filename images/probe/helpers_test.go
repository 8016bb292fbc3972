package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a server's log and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is a probe server on loopback ephemeral ports.
type testServer struct {
	srv                        *server
	httpAddr, tcpAddr, udpAddr string
	log                        *syncBuffer
}

// startTestServer starts a server on 127.0.0.1 with $POD_IP=10.9.8.7 and
// stops it when the test ends.
func startTestServer(t *testing.T, name string) *testServer {
	t.Helper()
	t.Setenv("POD_IP", "10.9.8.7")
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udpPC, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	srv := newServer(name, log)
	run := srv.start(listeners{http: httpLn, tcp: tcpLn, udp: udpPC})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := run.stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		select {
		case err := <-run.failed:
			t.Errorf("a listener failed: %v", err)
		default:
		}
	})
	return &testServer{
		srv:      srv,
		httpAddr: httpLn.Addr().String(),
		tcpAddr:  tcpLn.Addr().String(),
		udpAddr:  udpPC.LocalAddr().String(),
		log:      log,
	}
}

// closedPort returns a loopback address on which nothing listens for network
// ("tcp" or "udp").
func closedPort(t *testing.T, network string) string {
	t.Helper()
	var addr string
	switch network {
	case "tcp":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = ln.Addr().String()
		ln.Close()
	case "udp":
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = pc.LocalAddr().String()
		pc.Close()
	}
	return addr
}

// connectResults runs the connect engine and returns its results in emit
// order.
func connectResults(t *testing.T, opts connectOptions, targets ...string) []result {
	t.Helper()
	if opts.parallel == 0 {
		opts.parallel = 4
	}
	if opts.attempts == 0 {
		opts.attempts = 1
	}
	if opts.timeout == 0 {
		opts.timeout = 2 * time.Second
	}
	var got []result
	err := connectAll(context.Background(), targets, opts, func(r result) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatalf("connectAll: %v", err)
	}
	if len(got) != len(targets) {
		t.Fatalf("got %d results for %d targets", len(got), len(targets))
	}
	return got
}

// connectOne runs the engine on one target.
func connectOne(t *testing.T, opts connectOptions, target string) result {
	t.Helper()
	return connectResults(t, opts, target)[0]
}

func wantClass(t *testing.T, r result, class string) {
	t.Helper()
	if r.ErrorClass != class {
		t.Errorf("%s: errorClass = %q (error %q), want %q", r.Target, r.ErrorClass, r.Error, class)
	}
	if wantOK := class == ""; r.OK != wantOK {
		t.Errorf("%s: ok = %v, want %v", r.Target, r.OK, wantOK)
	}
	if class != "" && strings.TrimSpace(r.Error) == "" {
		t.Errorf("%s: failed without an error message", r.Target)
	}
	if class == "" && r.Error != "" {
		t.Errorf("%s: succeeded with error %q", r.Target, r.Error)
	}
}
