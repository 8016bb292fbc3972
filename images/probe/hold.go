package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// runHold keeps running until --for elapses (forever by default), ignoring
// requests to terminate (SIGTERM and interrupts; on Windows, Go delivers
// the console's close, logoff and shutdown events as SIGTERM), so that only
// a kill ends it: a container that uses all of its grace period, as a
// slow-stopping workload does.
func runHold(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("hold")
	d := fs.Duration("for", 0, "how long to run (0: until killed)")
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil && *d < 0 {
		err = fmt.Errorf("--for %s is negative", *d)
	}
	if err != nil {
		return reportArgsError("hold", err, stdout, stderr)
	}
	// Notified, not ignored: each request is reported, and outlived.
	requests := make(chan os.Signal, 4)
	signal.Notify(requests, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(requests)
	fmt.Fprintln(stdout, `{"holding":true}`)
	var deadline <-chan time.Time
	if *d > 0 {
		t := time.NewTimer(*d)
		defer t.Stop()
		deadline = t.C
	}
	for {
		select {
		case s := <-requests:
			fmt.Fprintf(stdout, "{\"ignored\":%q}\n", s.String())
		case <-deadline:
			fmt.Fprintln(stdout, `{"held":true}`)
			return exitOK
		case <-ctx.Done():
			return exitOK
		}
	}
}
