package main

import (
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
// to --progress-report-url by every process of the run) on the loopback
// address and prints one line per spec: "12 of 146  passed  <spec>  3.2s" (or "supported only": it passed
// below its claims' level).
// It counts the run itself, whichever process ran a spec, and posts the
// run's progress, in the same form, to the user's own
// --progress-report-url when the suite flags had one.
type progressServer struct {
	out     io.Writer
	forward *progress.Poster

	mu    sync.Mutex
	tally progress.Tally

	srv *http.Server
	URL string
}

// startProgress listens on a free loopback port; total is the number of
// specs the run selected (the dry run's count), until the suite says it.
func startProgress(total int, out io.Writer, forward string) (*progressServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	p := &progressServer{out: out, forward: progress.NewPoster(forward, out), tally: progress.Tally{Selected: total},
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
	var u progress.Update
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if run, ok := p.take(u); ok {
		p.forward.Post(run)
	}
}

// take counts one update into the run and returns the run's update.
func (p *progressServer) take(u progress.Update) (progress.Update, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch u.Event {
	case progress.Start:
		if u.Total > 0 {
			return p.tally.Start(int(u.Total)), true
		}
		return p.tally.Start(p.tally.Selected), true
	case progress.Begin:
		return p.tally.Begin(u.Spec), true
	case progress.End:
		result := u.Result
		if result == "" {
			result = progress.StateResult(u.State)
		}
		run := p.tally.End(u.Spec, u.State, result)
		took := time.Duration(u.Seconds * float64(time.Second)).Round(100 * time.Millisecond)
		fmt.Fprintf(p.out, "%d of %d  %-8s %s  %s\n", p.tally.Done(), p.tally.Selected, result, u.Spec, took)
		return run, true
	case progress.Finish:
		return u, true // the first process's, from every process's report
	}
	return u, false
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
