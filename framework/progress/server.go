package progress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server receives the suite's progress (posted by a Reporter of every
// process of the run to its --progress-report-url) on the loopback
// address and prints one line per spec: "12 of 146  passed  <spec>  3.2s" (or "supported only": it passed
// below its claims' level).
// It counts the run itself, whichever process ran a spec, and posts the
// run's progress, in the same form, to the user's own
// --progress-report-url when the suite flags had one.
type Server struct {
	out     io.Writer
	forward *Poster

	mu    sync.Mutex
	tally Tally

	srv *http.Server
	URL string
}

// Serve listens on a free loopback port; total is the number of
// specs the run selected (the dry run's count), until the suite says it.
func Serve(total int, out io.Writer, forward string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	p := &Server{out: out, forward: NewPoster(forward, out), tally: Tally{Selected: total},
		URL: "http://" + l.Addr().String() + "/progress"}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(l)
	return p, nil
}

// ServeHTTP takes one update.
func (p *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST progress updates", http.StatusMethodNotAllowed)
		return
	}
	var u Update
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if run, ok := p.take(u); ok {
		p.forward.Post(run)
	}
}

// take counts one update into the run and returns the run's update.
func (p *Server) take(u Update) (Update, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch u.Event {
	case Start:
		if u.Total > 0 {
			return p.tally.Start(int(u.Total)), true
		}
		return p.tally.Start(p.tally.Selected), true
	case Begin:
		return p.tally.Begin(u.Spec), true
	case End:
		result := u.Result
		if result == "" {
			result = StateResult(u.State)
		}
		run := p.tally.End(u.Spec, u.State, result)
		took := time.Duration(u.Seconds * float64(time.Second)).Round(100 * time.Millisecond)
		fmt.Fprintf(p.out, "%d of %d  %-8s %s  %s\n", p.tally.Done(), p.tally.Selected, result, u.Spec, took)
		return run, true
	case Finish:
		return u, true // the first process's, from every process's report
	}
	return u, false
}

// Close stops listening.
func (p *Server) Close() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}
