// Command winconform provisions the clusters the conformance suites run
// against and runs the suites: up, down, node-image, e2e, list, bench, and
// sonobuoy (the suites inside a cluster, as a Sonobuoy plugin).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/docker"
)

func main() {
	// kind runs `docker` from PATH; on a host that needs it, that is this
	// binary under the name docker (see infra/docker).
	if docker.IsShim(os.Args[0]) {
		os.Exit(docker.ShimMain(os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "winconform",
		Short:         "Conformance harness for Kubernetes clusters with Windows nodes",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command sees the same image references the suites do.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			_, err := images.FromEnv()
			return err
		},
	}
	root.AddCommand(upCmd(), downCmd(), e2eCmd(), listCmd(), nodeImageCmd(), benchCmd(), imagesCmd())
	root.AddCommand(joinCmd(), resetCmd(), sonobuoyCmd(), vmsCmd())
	root.AddCommand(gateCmd(), diffCmd(), reportCmd())
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "winconform:", err)
		var exit exitCode
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		os.Exit(1)
	}
}

// exitCode is an error that only carries a process exit status (the failure
// was already reported, as by a test run).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
