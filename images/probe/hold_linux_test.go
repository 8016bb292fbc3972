package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a buffer written by one goroutine and read by another;
// started is closed on the first write.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	once    sync.Once
	started chan struct{}
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.once.Do(func() { close(b.started) })
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestHoldOutlivesTermination(t *testing.T) {
	out := &lockedBuffer{started: make(chan struct{})}
	var errOut bytes.Buffer
	done := make(chan int)
	start := time.Now()
	go func() {
		done <- run(context.Background(), []string{"hold", "--for", "1s"}, strings.NewReader(""), out, &errOut)
	}()
	select {
	case <-out.started:
	case <-time.After(5 * time.Second):
		t.Fatal("hold did not start")
	}
	// It holds: ask it (this very process) to terminate, twice.
	for range 2 {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code := <-done
	if code != exitOK || time.Since(start) < time.Second {
		t.Fatalf("hold = %d after %s: %q %q", code, time.Since(start), out.String(), errOut.String())
	}
	if got := out.String(); strings.Count(got, `{"ignored":"terminated"}`) != 2 || !strings.HasSuffix(strings.TrimSpace(got), `{"held":true}`) {
		t.Errorf("output %q", got)
	}
}

func TestHoldUsage(t *testing.T) {
	for _, args := range [][]string{{"hold", "x"}, {"hold", "--for", "-1s"}, {"hold", "--for", "soon"}} {
		if code, _, _ := runTool(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}
