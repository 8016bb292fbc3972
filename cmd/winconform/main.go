// Command winconform provisions the clusters the conformance suites run
// against and runs the suites: up, down, node-image, e2e, list, and
// sonobuoy (the suites inside a cluster, as a Sonobuoy plugin).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/redact"
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

// errOut is the process's standard error behind the one redaction: every
// secret a run loads is kept out of what the commands say there. No
// command writes to os.Stderr itself (TestStderrOnlyThroughTheRedaction);
// the programs they run write to it directly, as their own output.
var errOut io.Writer = redact.Writer(os.Stderr)

func main() {
	// kind runs `docker` from PATH; on a host that needs it, that is this
	// binary under the name docker (see infra/docker).
	if docker.IsShim(os.Args[0]) {
		os.Exit(docker.ShimMain(os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, errOut)
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
	// Every command's own error comes as a ranError; any other is cobra's
	// refusal of the command line before the command ran (a required flag
	// missing, an unknown command).
	r, ran := err.(ranError)
	if ran {
		err = r.error
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
	switch {
	case errors.As(err, &exit):
		return int(exit)
	case !ran:
		return exitUsage
	}
	return exitFailed
}

// ranError is an error of a command that ran: a failure (exit 1) unless it
// says otherwise (usage, exitCode). Any other error is cobra's refusal of
// the command line, a usage error.
type ranError struct{ error }

func (e ranError) Unwrap() error { return e.error }

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
	root.AddCommand(upCmd(), downCmd(), e2eCmd(), listCmd(), nodeImageCmd(), imagesCmd())
	root.AddCommand(joinCmd(), resetCmd(), sonobuoyCmd(), vmsCmd(), underlayCmd(), sweepCmd())
	root.AddCommand(gateCmd(), diffCmd(), reportCmd())
	root.AddCommand(versionCmd(), resultsCmd())
	// help and completion are in the tree the rule walks: an unknown topic
	// or shell is refused as any unknown command is.
	root.SetHelpCommand(helpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	// A bad flag or argument is a usage error, wherever it is.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if hint := flagHint(cmd, err); hint != "" {
			return usage(fmt.Errorf("%w: %s", err, hint))
		}
		return usage(fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath()))
	})
	given := flagvalue.Repeats{}
	var oneRule func(*cobra.Command)
	oneRule = func(c *cobra.Command) {
		// A flag of one value given twice is refused (a list accumulates).
		flagvalue.RefuseRepeats(c.PersistentFlags(), given)
		flagvalue.RefuseRepeats(c.Flags(), given)
		if c != root && c.HasSubCommands() && !c.Runnable() {
			c.Args, c.RunE = cobra.ArbitraryArgs, groupNeedsACommand
		}
		if check := c.Args; check != nil && c != root {
			c.Args = func(cmd *cobra.Command, args []string) error { return usage(check(cmd, args)) }
		}
		if runE := c.RunE; runE != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if err := runE(cmd, args); err != nil {
					return ranError{err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			oneRule(sub)
		}
	}
	// One rule for exit statuses: input refused (a bad flag or argument, a
	// flag of one value given twice, a required flag missing, an unknown
	// command, help topic or shell, a group command without one) exits 2, a
	// run that failed 1.
	oneRule(root)
	return root
}

// habits are flags of the tools winconform's users know (Ginkgo, upstream
// e2e, hydrophone, Sonobuoy, kind, cilium), and what they are here.
var habits = map[string]string{
	"focus":               "select specs with --claim or --labels (Ginkgo's regular expression: -- --ginkgo.focus=...)",
	"skip":                "leave specs out with --labels, e.g. '!needs:windows-node' (Ginkgo's regular expression: -- --ginkgo.skip=...)",
	"parallel":            "parallel processes are --procs",
	"ginkgo.procs":        "parallel processes are --procs",
	"ginkgo.nodes":        "parallel processes are --procs",
	"output-dir":          "the reports go to --report-dir",
	"results-dir":         "the reports go to --report-dir",
	"version":             "the version is `winconform version`",
	"ginkgo.v":            "suite binary flags go after --: e2e -- --ginkgo.v",
	"label-filter":        "a label filter is --labels",
	"ginkgo.label-filter": "a label filter is --labels (or after --)",
}

// flagHint is what an unknown flag is called here, from a habit of a
// related tool, "" when it is no habit.
func flagHint(cmd *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	if hint, ok := habits[name]; ok && cmd.Flags().Lookup(name) == nil {
		return hint
	}
	return ""
}

// helpCmd is `winconform help [COMMAND]`: the command's help, and an
// unknown command refused (cobra's own printed the root's help and exited
// 0).
func helpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			c, _, err := cmd.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), typed) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, rest, err := cmd.Root().Find(args)
			if err == nil && len(rest) > 0 {
				err = fmt.Errorf("unknown help topic %q", strings.Join(args, " "))
			}
			if err != nil {
				return usage(fmt.Errorf("%v: give a command, as `winconform help vms up` (the commands: winconform --help)", err))
			}
			return c.Help()
		},
	}
}

// groupNeedsACommand is the run of a command that only groups others (vms,
// images, sonobuoy...): without one of them, or with an unknown one, it is a
// usage error naming them.
func groupNeedsACommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	if len(args) > 0 {
		return usage(fmt.Errorf("unknown command %q for %s (its commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", ")))
	}
	return usage(fmt.Errorf("%s needs a command: %s (see %s --help)", cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath()))
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
