package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// connectOptions is the parsed command line of "probe connect".
type connectOptions struct {
	timeout    time.Duration // per attempt
	parallel   int
	attempts   int
	retryDelay time.Duration // pause before each retry
}

const defaultRetryDelay = 250 * time.Millisecond

// result is one JSON line of connect's output.
type result struct {
	Index      int     `json:"index"`
	Target     string  `json:"target"`
	OK         bool    `json:"ok"`
	LatencyMs  float64 `json:"latencyMs"` // of the last attempt
	ErrorClass string  `json:"errorClass"`
	Error      string  `json:"error"`
	Attempts   int     `json:"attempts"`
	Detail     *detail `json:"detail"`
}

// detail holds what a check learnt; which fields are set depends on the
// target's kind.
type detail struct {
	Remote     string   `json:"remote,omitempty"` // peer address (tcp, udp, http, icmp)
	Local      string   `json:"local,omitempty"`  // local address (tcp, udp, http)
	StatusCode int      `json:"statusCode,omitempty"`
	Hostname   string   `json:"hostname,omitempty"` // http, from a probe's /json answer
	PodIP      string   `json:"podIP,omitempty"`    // http, from a probe's /json answer
	Name       string   `json:"name,omitempty"`     // http, from a probe's /json answer
	Caller     string   `json:"caller,omitempty"`   // http: our IP as the probe server saw it
	Body       string   `json:"body,omitempty"`     // http: first 200 bytes of any other body
	Addresses  []string `json:"addresses,omitempty"`
}

// parseConnectArgs parses connect's flags, which may come before, between
// or after the targets. A single "-" target reads a JSON array of targets
// from stdin.
func parseConnectArgs(args []string, stdin io.Reader) (connectOptions, []string, error) {
	opts := connectOptions{retryDelay: defaultRetryDelay}
	fs := newFlagSet("connect")
	fs.DurationVar(&opts.timeout, "timeout", 5*time.Second, "deadline of each attempt")
	fs.IntVar(&opts.parallel, "parallel", 8, "targets checked at once")
	fs.IntVar(&opts.attempts, "attempts", 1, "attempts per target, retrying failures")
	var targets []string
	for {
		if err := fs.Parse(args); err != nil {
			return opts, nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			targets = append(targets, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		targets = append(targets, rest[0])
		args = rest[1:]
	}
	switch {
	case opts.timeout <= 0:
		return opts, nil, fmt.Errorf("--timeout %v: want > 0", opts.timeout)
	case opts.parallel < 1:
		return opts, nil, fmt.Errorf("--parallel %d: want >= 1", opts.parallel)
	case opts.attempts < 1:
		return opts, nil, fmt.Errorf("--attempts %d: want >= 1", opts.attempts)
	case len(targets) == 0:
		return opts, nil, errors.New("no targets given")
	}
	if len(targets) == 1 && targets[0] == "-" {
		targets = nil
		if err := json.NewDecoder(stdin).Decode(&targets); err != nil {
			return opts, nil, fmt.Errorf("reading the JSON array of targets on stdin: %w", err)
		}
		return opts, targets, nil
	}
	for _, t := range targets {
		if t == "-" {
			return opts, nil, errors.New(`"-" (targets on stdin) must be the only target`)
		}
	}
	return opts, targets, nil
}

func runConnect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, targets, err := parseConnectArgs(args, stdin)
	if err != nil {
		return reportArgsError("connect", err, stdout, stderr)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := connectAll(ctx, targets, opts, func(r result) error { return enc.Encode(r) }); err != nil {
		fmt.Fprintf(stderr, "probe connect: writing results: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// connectAll checks up to opts.parallel targets at once and passes each
// result to emit in input order, as soon as it and all earlier ones are done.
// It stops at the first emit error, returning it.
func connectAll(ctx context.Context, targets []string, opts connectOptions, emit func(result) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]result, len(targets))
	done := make([]chan struct{}, len(targets))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		sem := make(chan struct{}, opts.parallel)
		for i, raw := range targets {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = probeTarget(ctx, i, raw, opts)
				close(done[i])
				<-sem
			}()
		}
	}()
	for i := range targets {
		<-done[i]
		if err := emit(results[i]); err != nil {
			cancel()
			return err
		}
	}
	return nil
}

// probeTarget checks one target, retrying failures up to opts.attempts times.
func probeTarget(ctx context.Context, index int, raw string, opts connectOptions) result {
	res := result{Index: index, Target: raw, Detail: &detail{}}
	t, err := parseTarget(raw)
	if err != nil {
		res.ErrorClass = classInvalidTarget
		res.Error = err.Error()
		return res
	}
	for attempt := 1; attempt <= opts.attempts; attempt++ {
		if attempt > 1 && !sleep(ctx, opts.retryDelay) {
			break
		}
		start := time.Now()
		d, err := check(ctx, t, opts.timeout)
		res.Attempts = attempt
		res.LatencyMs = milliseconds(time.Since(start))
		res.Detail = d
		res.OK = err == nil
		res.ErrorClass = classify(err)
		res.Error = ""
		if err != nil {
			res.Error = err.Error()
		}
		if res.OK || ctx.Err() != nil {
			break
		}
	}
	return res
}

// check runs one attempt at t with the given deadline.
func check(ctx context.Context, t target, timeout time.Duration) (*detail, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch t.kind {
	case kindTCP:
		return checkTCP(ctx, t)
	case kindUDP:
		return checkUDP(ctx, t)
	case kindHTTP:
		return checkHTTP(ctx, t)
	case kindDNS:
		return checkDNS(ctx, t)
	case kindICMP:
		return checkICMP(ctx, t)
	}
	return &detail{}, withClass(classInvalidTarget, fmt.Errorf("unknown target kind %q", t.kind))
}

// sleep waits for d or until ctx ends, reporting whether it waited fully.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// milliseconds rounds d to microseconds and expresses it in milliseconds.
func milliseconds(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
