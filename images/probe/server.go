package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// server holds the state shared by the probe's HTTP, TCP and UDP endpoints.
type server struct {
	name     string // reported by /json; the hostname unless --name is given
	hostname string
	podIP    string

	logMu sync.Mutex
	log   io.Writer

	mu     sync.Mutex
	counts map[string]int // requests to / and /json per caller IP

	// exit ends the process (POST /exit): os.Exit, replaced in tests.
	exit func(code int)
}

func newServer(name string, log io.Writer) *server {
	hostname, err := os.Hostname()
	if err != nil {
		hostname = "unknown"
	}
	if name == "" {
		name = hostname
	}
	return &server{
		name:     name,
		hostname: hostname,
		podIP:    podIP(),
		log:      log,
		exit:     os.Exit,
		counts:   make(map[string]int),
	}
}

// logf writes to the server log (stdout, read back with kubectl logs) without
// interleaving concurrent writers.
func (s *server) logf(format string, a ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, format, a...)
}

// countCaller records one more request from ip and returns its new count and a
// copy of all counts.
func (s *server) countCaller(ip string) (int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[ip]++
	return s.counts[ip], maps.Clone(s.counts)
}

// listeners are the sockets a server answers on; nil members are disabled.
type listeners struct {
	http net.Listener
	tcp  net.Listener
	udp  net.PacketConn
}

func (ls listeners) close() {
	if ls.http != nil {
		ls.http.Close()
	}
	if ls.tcp != nil {
		ls.tcp.Close()
	}
	if ls.udp != nil {
		ls.udp.Close()
	}
}

// String describes the bound addresses, e.g. "http=[::]:8080 tcp=[::]:8081".
func (ls listeners) String() string {
	var parts []string
	if ls.http != nil {
		parts = append(parts, "http="+ls.http.Addr().String())
	}
	if ls.tcp != nil {
		parts = append(parts, "tcp="+ls.tcp.Addr().String())
	}
	if ls.udp != nil {
		parts = append(parts, "udp="+ls.udp.LocalAddr().String())
	}
	return strings.Join(parts, " ")
}

// running is a server answering on its listeners, until stop.
type running struct {
	ls      listeners
	httpSrv *http.Server
	failed  chan error // a listener died for another reason than stop

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{} // open TCP echo connections
}

// start serves on every non-nil listener of ls and returns at once. The
// listeners belong to the returned value from then on; stop closes them.
func (s *server) start(ls listeners) *running {
	r := &running{
		ls:     ls,
		failed: make(chan error, 3),
		conns:  make(map[net.Conn]struct{}),
	}
	if ls.http != nil {
		r.httpSrv = &http.Server{
			Handler:           s.handler(),
			ReadHeaderTimeout: 10 * time.Second,
		}
		r.goServe(func() error {
			if err := r.httpSrv.Serve(ls.http); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("http: %w", err)
			}
			return nil
		})
	}
	if ls.tcp != nil {
		r.goServe(func() error { return r.serveTCPEcho(ls.tcp) })
	}
	if ls.udp != nil {
		r.goServe(func() error { return r.serveUDPEcho(ls.udp) })
	}
	return r
}

func (r *running) goServe(serve func() error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := serve(); err != nil {
			r.failed <- err
		}
	}()
}

// stop closes the listeners and open connections, lets in-flight HTTP
// requests finish until ctx ends, and waits for every goroutine of r.
func (r *running) stop(ctx context.Context) error {
	var err error
	if r.httpSrv != nil {
		if err = r.httpSrv.Shutdown(ctx); err != nil {
			r.httpSrv.Close()
		}
	}
	r.ls.close()
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.wg.Wait()
	return err
}
