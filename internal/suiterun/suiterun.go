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
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
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
	// Timeout is the whole suite's time limit (Ginkgo's --timeout; 0:
	// Ginkgo's default, one hour).
	Timeout time.Duration
	// FlakeAttempts is how many times a failing spec runs before it
	// fails (Ginkgo's --flake-attempts; 0 or 1: once). A spec that passes
	// on a later attempt is flaky, and Ginkgo's report keeps the failures
	// of its attempts before (SpecReport.AdditionalFailures).
	FlakeAttempts int
	// Verbose has Ginkgo say every spec and its output as it runs (-v);
	// otherwise it says only failures and the summary.
	Verbose bool
	// Color lets Ginkgo write colour codes.
	Color bool
}

// Command is the program and arguments that run the suite. Alone, the
// suite binary takes Ginkgo's settings as --ginkgo.* flags; under Ginkgo's
// CLI, which reports for every process and enforces the timeout, they are
// the CLI's own flags. Ginkgo renders both (ginkgoFlags).
func (o Options) Command() (string, []string, error) {
	if o.Procs <= 1 {
		args, err := o.ginkgoFlags("ginkgo", true)
		if err != nil {
			return "", nil, err
		}
		return o.Binary, append(args, o.Args...), nil
	}
	if o.Ginkgo == "" {
		return "", nil, errors.New("parallel processes need Ginkgo's CLI (make build puts it in _output/bin/ginkgo)")
	}
	own, err := o.ginkgoFlags("", true)
	if err != nil {
		return "", nil, err
	}
	args := append([]string{"run", "--procs=" + strconv.Itoa(o.Procs)}, own...)
	args = append(args, o.Binary, "--")
	return o.Ginkgo, append(args, o.Args...), nil
}

// SuiteFlags are the suite's own settings of o (its time limit and flake
// attempts) as the suite binary takes them (--ginkgo.*), rendered by
// Ginkgo, for a runner that runs the binary itself and decides its output
// (Sonobuoy's plugin, images/suiterunner).
func (o Options) SuiteFlags() ([]string, error) { return o.ginkgoFlags("ginkgo", false) }

// ginkgoFlags is Ginkgo's own rendering of the options (its timeout,
// flake attempts, and with reporter its verbosity and colour) as flags: the
// suite binary's, prefix "ginkgo", or the CLI's, no prefix. Only the
// settings' own flags are rendered (not the deprecated ones, bound to a
// configuration of Ginkgo's own); Ginkgo exports the random seed always,
// and a run that gives none lets the suite pick one, so it is left out.
func (o Options) ginkgoFlags(prefix string, reporter bool) ([]string, error) {
	suite := types.SuiteConfig{Timeout: o.Timeout, FlakeAttempts: o.FlakeAttempts}
	rc := types.ReporterConfig{Verbose: o.Verbose, NoColor: !o.Color}
	var flags types.GinkgoFlags
	for _, f := range types.SuiteConfigFlags.CopyAppend(types.ReporterConfigFlags...) {
		if f.KeyPath != "S.RandomSeed" && (strings.HasPrefix(f.KeyPath, "S.") || reporter && strings.HasPrefix(f.KeyPath, "R.")) {
			flags = append(flags, f)
		}
	}
	if prefix != "" {
		flags = flags.WithPrefix(prefix)
	}
	return types.GenerateFlagArgs(flags, map[string]any{"S": &suite, "R": &rc})
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

// Procs checks a requested number of parallel processes (--procs, make's
// PROCS): a number, at least 1, and at most what the cluster can hold (max).
func Procs(value string, max int, why string) (int, error) {
	n, err := strconv.Atoi(value)
	switch {
	case err != nil:
		return 0, fmt.Errorf("--procs (PROCS) %q is not a number of parallel processes: use 1 (serial) up to %d", value, max)
	case n < 1:
		return 0, fmt.Errorf("--procs (PROCS) %d: at least one process runs the suite; use 1 (serial) up to %d", n, max)
	case n > max:
		return 0, fmt.Errorf("--procs (PROCS) %d is more than the cluster can hold (%s): use at most %d", n, why, max)
	}
	return n, nil
}

// Focus is the Ginkgo focus that selects exactly the spec named name (its
// full text) of the suite described as suite: Ginkgo matches a focus
// against the suite's description, a space, and the spec's full text.
func Focus(suite, name string) string {
	return "^" + regexp.QuoteMeta(suite+" "+name) + "$"
}
