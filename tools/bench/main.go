// Command bench times the harness's whole commands against what a person
// would do without it, and prints ratios rather than asserting times (make
// bench runs it): up against plain kind, the network matrix against bare
// kubectl exec probes, the suites serially against in parallel, and
// stand-in VMs under libvirt against bare QEMU boots of the same image. It
// drives the winconform binary as a user does; it is a developer program,
// and nothing in the product calls it (the VM benchmark links the libvirt
// stand-in guest and the WS-Management stand-in, which the product
// binaries never do).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/internal/flagvalue"
)

// maxRuns bounds a benchmark's --runs.
const maxRuns = 100

func main() {
	// kind, run in this process for the warm-up, runs `docker` from PATH;
	// on a host that needs it, that is this binary under the name docker.
	if docker.IsShim(os.Args[0]) {
		os.Exit(docker.ShimMain(os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rootCmd().ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	var w winconform
	cmd := &cobra.Command{
		Use:           "bench",
		Short:         "Benchmarks of the harness's commands that print ratios (make bench)",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	cmd.PersistentFlags().Var(flagvalue.Name(&w.bin, filepath.Join("_output", "bin", "winconform"), "the winconform binary's path"), "winconform", "the winconform binary to time (make build writes it)")
	cmd.AddCommand(upCmd(&w), matrixCmd(&w), suitesCmd(&w), vmsCmd())
	return cmd
}

// winconform runs the harness's binary as a user does, its output on this
// program's standard error.
type winconform struct{ bin string }

// run runs winconform with args and returns its exit status: 0, or the
// status it ended with; err is only for a binary that could not be run.
func (w *winconform) run(ctx context.Context, log io.Writer, args ...string) (int, error) {
	c := exec.CommandContext(ctx, w.bin, args...)
	c.Stdout, c.Stderr = log, log
	err := c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && ctx.Err() == nil {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return -1, fmt.Errorf("%s %s: %w", w.bin, args[0], err)
	}
	return 0, nil
}

// must runs winconform and fails unless it ends with status 0.
func (w *winconform) must(ctx context.Context, log io.Writer, args ...string) error {
	code, err := w.run(ctx, log, args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("winconform %s: exit status %d", args[0], code)
	}
	return err
}

func timeIt(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration { return slices.Sorted(slices.Values(ds))[len(ds)/2] }

func within(ok bool) string {
	if ok {
		return "within"
	}
	return "OVER"
}
