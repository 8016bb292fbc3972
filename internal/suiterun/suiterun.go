// Package suiterun runs the suite binary the way the CLI needs it: alone or
// under Ginkgo's parallel processes, in a process group of its own so that
// an interrupt reaches it exactly once (a second interrupt makes Ginkgo skip
// its cleanup), with time to clean up and write its reports; then it removes
// whatever the run left in the cluster, found by the run's ID.
package suiterun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// DefaultGrace is how long the suite gets, after an interrupt, to run its
// cleanup (namespaces, simulated nodes) and write its reports.
const DefaultGrace = 5 * time.Minute

// Options say how to run the suite.
type Options struct {
	// Binary is the suite binary (go test -c ./suites).
	Binary string
	// Ginkgo is Ginkgo's CLI, which runs the binary in parallel processes.
	Ginkgo string
	// Procs is the number of parallel processes; 1 runs the binary alone.
	Procs int
	// Args are the suite binary's flags.
	Args []string
	// Stdout and Stderr get the suite's output.
	Stdout, Stderr io.Writer
	// Grace bounds the wait after an interrupt (DefaultGrace).
	Grace time.Duration
}

// Command is the program and arguments that run the suite.
func (o Options) Command() (string, []string, error) {
	if o.Procs <= 1 {
		return o.Binary, append([]string(nil), o.Args...), nil
	}
	if o.Ginkgo == "" {
		return "", nil, errors.New("parallel processes need Ginkgo's CLI (make build puts it in _output/bin/ginkgo)")
	}
	args := []string{"run", "--procs=" + strconv.Itoa(o.Procs), "--no-color", o.Binary, "--"}
	return o.Ginkgo, append(args, o.Args...), nil
}

// ExitError is the suite's exit status when it ran and failed.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("the suite exited with status %d", e.Code) }

// Run runs the suite until it ends. When ctx is cancelled (an interrupt),
// the suite gets one SIGINT, and Grace to end by itself; then its process
// group is killed.
func Run(ctx context.Context, o Options) error {
	name, args, err := o.Command()
	if err != nil {
		return err
	}
	if _, err := os.Stat(name); err != nil {
		return fmt.Errorf("%s: %v (build it with `make build`)", name, err)
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		interrupt(cmd)
		select {
		case err = <-done:
		case <-time.After(o.Grace):
			kill(cmd)
			err = <-done
			if err == nil {
				err = fmt.Errorf("the suite did not end within %s of the interrupt and was killed", o.Grace)
			}
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return ExitError{Code: exit.ExitCode()}
	}
	return err
}

// Procs checks a requested number of parallel processes: a number, at
// least 1, and at most what the cluster can hold (max).
func Procs(value string, max int, why string) (int, error) {
	n, err := strconv.Atoi(value)
	switch {
	case err != nil:
		return 0, fmt.Errorf("NODES=%q is not a number of parallel processes: use NODES=1 (serial) up to NODES=%d", value, max)
	case n < 1:
		return 0, fmt.Errorf("NODES=%d: at least one process runs the suite; use NODES=1 (serial) up to NODES=%d", n, max)
	case n > max:
		return 0, fmt.Errorf("NODES=%d is more than the cluster can hold (%s): use NODES<=%d", n, why, max)
	}
	return n, nil
}

// Focus is the Ginkgo focus that selects exactly the spec named name (its
// full text) of the suite described as suite: Ginkgo matches a focus
// against the suite's description, a space, and the spec's full text.
func Focus(suite, name string) string {
	return "^" + regexp.QuoteMeta(suite+" "+name) + "$"
}
