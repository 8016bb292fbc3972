package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/winconform/winconform/framework/progress"
)

// progressServer receives the suite's progress (framework/progress, posted
// to --progress-report-url) on the loopback address and prints one line per
// spec: "12 of 146  passed  <spec>  3.2s". Updates are forwarded to the
// user's own --progress-report-url, when the suite flags had one.
type progressServer struct {
	total   int
	out     io.Writer
	forward string
	client  *http.Client

	mu   sync.Mutex
	done int

	srv *http.Server
	URL string
}

// startProgress listens on a free loopback port; total is the number of
// specs the run selected (the dry run's count).
func startProgress(total int, out io.Writer, forward string) (*progressServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	p := &progressServer{total: total, out: out, forward: forward, client: &http.Client{Timeout: 5 * time.Second},
		URL: "http://" + l.Addr().String() + "/progress"}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(l)
	return p, nil
}

// ServeHTTP takes one update.
func (p *progressServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST progress updates", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var u progress.Update
	if err := json.Unmarshal(body, &u); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.take(u)
	if p.forward != "" {
		if resp, err := p.client.Post(p.forward, "application/json", bytes.NewReader(body)); err == nil {
			resp.Body.Close()
		}
	}
}

func (p *progressServer) take(u progress.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u.Msg == progress.Starting && u.Total > 0 {
		p.total = u.Total
	}
	if u.Spec == "" {
		return
	}
	p.done++
	fmt.Fprintf(p.out, "%d of %d  %-8s %s  %s\n", p.done, p.total, u.State, u.Spec, (time.Duration(u.Seconds * float64(time.Second))).Round(100*time.Millisecond))
}

// Close stops listening.
func (p *progressServer) Close() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}

// colorWanted says whether the suite's output may carry colour codes: not
// when asked not to (--no-color, NO_COLOR), in CI (CI=true, as GitHub
// Actions and most CI systems set it), or when standard output is not a
// terminal (a log file, a pipe).
func colorWanted(noColor bool, getenv func(string) string, stdout *os.File) bool {
	switch {
	case noColor, getenv("NO_COLOR") != "":
		return false
	case ciEnv(getenv("CI")):
		return false
	}
	return stdout != nil && term.IsTerminal(int(stdout.Fd()))
}

// ciEnv reads $CI: set to anything but false or 0.
func ciEnv(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "" && v != "false" && v != "0"
}
