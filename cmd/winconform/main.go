// Command winconform provisions the clusters the conformance suites run
// against and runs the suites: up, down, node-image, e2e, list, bench, and
// sonobuoy (the suites inside a cluster, as a Sonobuoy plugin).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/docker"
)

// Exit statuses of every command: 0 done (a run whose claims all held), 1
// a failed claim or a failed run, 2 refused input (a usage error, a bad
// flag, file or selection), found before any cluster work, 130 interrupted.
const (
	exitFailed = 1
	exitUsage  = 2
	// exitInterrupted is a command stopped by Ctrl-C or SIGTERM before it
	// finished (128 + SIGINT, as shells report it).
	exitInterrupted = 130
)

func main() {
	// kind runs `docker` from PATH; on a host that needs it, that is this
	// binary under the name docker (see infra/docker).
	if docker.IsShim(os.Args[0]) {
		os.Exit(docker.ShimMain(os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the process's exit status.
// A failure's message is the last line on stderr, said as the command's
// answer ("winconform e2e: ..."), never as a crash; a failure already
// reported (a failed run) adds nothing.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	name := "winconform"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	return exitStatus(ctx, name, err, stderr)
}

// exitStatus says how command name ended (err) on stderr, and returns its
// exit status.
func exitStatus(ctx context.Context, name string, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if exit, ok := err.(exitCode); ok {
		return int(exit) // only a status: the run said why
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "%s: interrupted, stopped before it finished (%v)\n", name, err)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	var exit exitCode
	if errors.As(err, &exit) {
		return int(exit)
	}
	return exitFailed
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "winconform",
		Short:         "Conformance harness for Kubernetes clusters with Windows nodes",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command sees the same image references the suites do.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			_, err := images.FromEnv()
			return usage(err)
		},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usage(fmt.Errorf("unknown command %q (the commands: winconform --help)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.AddCommand(upCmd(), downCmd(), e2eCmd(), listCmd(), nodeImageCmd(), benchCmd(), imagesCmd())
	root.AddCommand(joinCmd(), resetCmd(), sonobuoyCmd(), vmsCmd(), underlayCmd(), sweepCmd())
	root.AddCommand(gateCmd(), diffCmd(), reportCmd())
	root.AddCommand(versionCmd(), resultsCmd())
	// A bad flag or argument is a usage error, wherever it is.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usage(fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath()))
	})
	var argsAreUsage func(*cobra.Command)
	argsAreUsage = func(c *cobra.Command) {
		if check := c.Args; check != nil && c != root {
			c.Args = func(cmd *cobra.Command, args []string) error { return usage(check(cmd, args)) }
		}
		for _, sub := range c.Commands() {
			argsAreUsage(sub)
		}
	}
	argsAreUsage(root)
	return root
}

// exitCode is an error that only carries a process exit status (the failure
// was already reported, as by a test run).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usage marks err (nil stays nil) as refused input: exit status 2.
func usage(err error) error {
	if err == nil {
		return nil
	}
	var u unusable
	if errors.As(err, &u) {
		return err
	}
	return unusable{err}
}
