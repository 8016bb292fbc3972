package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/runid"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/infra/windows"
)

// vmsDir is where runs keep their state, inventory and console logs.
var vmsDir = outPath("vms")

func vmsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vms",
		Short: "Make Windows VMs from a golden image (and delete them) with a VM file",
		Long: `vms makes the Windows machines a run joins, from the VM file: which
provider (` + joinNames() + `), its connection, the golden image, how many, their
size, and what each machine is to the join. up writes the inventory that join,
reset and e2e read; down deletes a run's machines; sweep deletes every machine
of the harness older than a cutoff; list shows them. See docs/vms.md.`,
	}
	cmd.AddCommand(vmsUpCmd(), vmsDownCmd(), vmsSweepCmd(), vmsListCmd())
	return cmd
}

// joinNames lists the providers this binary has.
func joinNames() string { return strings.Join(config.ProviderNames(), ", ") }

// openVMs loads the VM file and opens its provider: every problem of the
// file, and a provider that does not answer, are refused here, before any
// machine is made.
func openVMs(ctx context.Context, path string) (*vms.File, vms.Provider, error) {
	f, err := loadVMs(path)
	if err != nil {
		return nil, nil, err
	}
	p, err := openProvider(ctx, path, f)
	return f, p, err
}

// loadVMs loads the VM file at path; its problems are usage errors.
func loadVMs(path string) (*vms.File, error) {
	if path == "" {
		return nil, usage(errors.New("--vms: give the VM file (see docs/vms.md)"))
	}
	f, err := config.Load[config.Machines](path, nil)
	if err != nil {
		return nil, usage(fmt.Errorf("--vms: %w", err))
	}
	return f, nil
}

// openProvider opens the provider of the VM file f (read from path).
func openProvider(ctx context.Context, path string, f *vms.File) (vms.Provider, error) {
	octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p, err := vms.Open(octx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// vmsUpInputs is vms up's validation, the same for --check and the run,
// made before the provider is contacted: the flags, the VM file (its
// fields and references), the versions its machine block names (those the
// join would refuse, checked as windows.CheckMachineVersions checks them
// without a cluster), and the run's directory. It returns the file, and
// sets o's defaults (the run ID, the directory).
func vmsUpInputs(cmd *cobra.Command, file string, o *lifecycle.Options) (*vms.File, error) {
	id, err := runid.Begin(o.RunID)
	if err != nil {
		return nil, usage(fmt.Errorf("--run-id: %w", err))
	}
	o.RunID = id
	f, err := loadVMs(file)
	if err != nil {
		return nil, err
	}
	if err := windows.CheckMachineVersions(f.Machine); err != nil {
		return nil, usage(fmt.Errorf("%s (its machine block): %w", file, err))
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(vmsDir, o.RunID)
	}
	if info, err := os.Stat(o.Dir); err == nil && !info.IsDir() {
		return nil, usage(fmt.Errorf("--dir %s is a file: give the run's directory (it holds the state file, the inventory and the console logs), a new or empty one, or leave --dir out for %s", o.Dir, filepath.Join(vmsDir, "<run ID>")))
	}
	return f, nil
}

func vmsUpCmd() *cobra.Command {
	var (
		file      string
		o         lifecycle.Options
		checkOnly bool
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Make the VM file's machines, wait for each to answer WinRM, write their inventory",
		Long: `up makes the machines concurrently and readies each through a ladder, every
rung a named failure: an address that is not link-local and stays the same for
--settle, WinRM's port accepting, WinRM answering the unauthenticated Identify,
one authenticated command. A run ID in use is refused before anything is made:
its state file exists (of a run not ended with down), or the provider lists a
machine with it. It writes the run's state file (before the first machine is
made), the inventory of the machines (printed on stdout) and their console logs
under --dir. A failure or Ctrl-C deletes what this invocation made, by the IDs
its own creates returned, and nothing else (--keep-on-failure keeps the failed
ones), and a machine left behind fails the run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := vmsUpInputs(cmd, file, &o)
			if err != nil {
				return err
			}
			if checkOnly {
				fmt.Fprintf(cmd.ErrOrStderr(), "VM file %s can be used: provider %s, %d machine(s) (--check: the provider was not contacted)\n", file, f.Provider, f.Count)
				return nil
			}
			p, err := openProvider(cmd.Context(), file, f)
			if err != nil {
				return err
			}
			defer p.Close()
			o.Log = cmd.ErrOrStderr()
			res, err := lifecycle.Up(cmd.Context(), f, p, o)
			if errors.Is(err, lifecycle.ErrRunInUse) {
				return usage(err) // refused: nothing was made
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), res.InventoryPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "vms", "", "the VM file (YAML)")
	cmd.Flags().StringVar(&o.RunID, "run-id", "", "the run's ID, its machines' run tag (default: the time and a random part)")
	cmd.Flags().Var(flagvalue.Dir(&o.Dir, "", "the run's state, inventory and console logs"), "dir", "the run's directory: state, inventory, console logs (default: _output/vms/<run ID>)")
	cmd.Flags().Var(flagvalue.Duration(&o.ReadyTimeout, lifecycle.DefaultReadyTimeout, 0, "", "30m"), "ready-timeout", "how long each machine may take from its creation to the last rung")
	cmd.Flags().Var(flagvalue.Duration(&o.Settle, lifecycle.DefaultSettle, 0, "", "20s"), "settle", "how long a machine's address must stay the same")
	cmd.Flags().Var(flagvalue.Int(&o.Parallel, lifecycle.DefaultParallel, 1, maxParallel, "how many machines are created at once"), "parallel", "machines created at once")
	cmd.Flags().BoolVar(&checkOnly, "check", false, "only check the VM file (its fields, values and references), without contacting the provider")
	cmd.Flags().BoolVar(&o.KeepOnFailure, "keep-on-failure", false, "keep the machines that fail, for debugging (delete them with vms down --run-id)")
	_ = cmd.MarkFlagRequired("vms")
	return cmd
}

func vmsDownCmd() *cobra.Command {
	var file, state, runID string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Delete a run's machines, by its state file or its run ID",
		Long: `down deletes every machine of a run: those the provider lists with the run's
tag, and those its state file names (--state, or the run's own under
_output/vms/<run ID>), whatever invocation made them. With --state, the VM
file is the one the run used unless --vms names another. It fails, naming
them, when a machine is still there afterwards; else it retires the state
file, and the run ID can be used again. Deleting a machine that is gone is no
error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st *lifecycle.State
			var statePath string
			switch {
			case state != "" && runID != "":
				return usage(errors.New("give --state or --run-id, not both"))
			case state != "":
				var err error
				if st, statePath, err = lifecycle.LoadState(state); err != nil {
					return usage(fmt.Errorf("--state: %w", err))
				}
				runID = st.RunID
				if file == "" {
					file = st.VMFile
				}
			case runID == "":
				return usage(errors.New("down needs --state FILE (a run's state.json) or --run-id ID"))
			}
			if err := runid.Check(runID); err != nil {
				return usage(fmt.Errorf("--run-id: %w", err))
			}
			if st == nil {
				// The run's own state file, where up keeps it: its IDs
				// are deleted too, and it is retired (the run ID freed).
				if found, path, err := lifecycle.LoadState(filepath.Join(vmsDir, runID)); err == nil && found.RunID == runID {
					st, statePath = found, path
				}
			}
			f, p, err := openVMs(cmd.Context(), file)
			if err != nil {
				return err
			}
			defer p.Close()
			src, _ := p.(vms.InventorySource)
			dir := filepath.Join(vmsDir, runID)
			if statePath != "" {
				dir = filepath.Dir(statePath)
			}
			return lifecycle.Down(cmd.Context(), p, runID, lifecycle.DownOptions{State: st, StatePath: statePath, Dir: dir, Log: cmd.ErrOrStderr(),
				Secrets: lifecycle.Secrets(f, src)})
		},
	}
	cmd.Flags().StringVar(&file, "vms", "", "the VM file (default with --state: the one the run used)")
	cmd.Flags().StringVar(&state, "state", "", "the run's state file (or its directory, _output/vms/<run ID>)")
	cmd.Flags().StringVar(&runID, "run-id", "", "the run's ID")
	return cmd
}

func vmsSweepCmd() *cobra.Command {
	var file string
	var olderThan time.Duration
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Delete every machine of the harness older than --older-than, of any run, but those tagged keep (winconform sweep --vms, without the cluster)",
		Long: `sweep deletes every machine the provider lists with the harness's run tag
(` + vms.TagRun + `=<run ID>) made before now minus --older-than, whatever its run,
and leaves those tagged ` + vms.TagKeep + `=true. The nightly job runs it first, so
that what a killed run left is gone. winconform sweep --vms does the same and
also sweeps the cluster, leaving the machines of runs whose heartbeat is alive.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("older-than") {
				return usage(fmt.Errorf("sweep needs --older-than DURATION (%s or more, such as 24h): machines younger than that may belong to a run still going", machineSweepFloor))
			}
			return sweepVMs(cmd.Context(), file, olderThan, lifecycle.DownOptions{DryRun: dryRun, Log: cmd.ErrOrStderr()}, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&file, "vms", "", "the VM file (its provider and connection)")
	cmd.Flags().Var(machineAge(&olderThan), "older-than", fmt.Sprintf("delete machines made longer ago than this (such as 24h; at least %s)", machineSweepFloor))
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list the machines that would be deleted, delete none")
	_ = cmd.MarkFlagRequired("vms")
	return cmd
}

// maxParallel bounds vms up --parallel.
const maxParallel = 32

// machineSweepFloor is the least --older-than that deletes machines (vms
// sweep, sweep --vms): a machine has no heartbeat of its own while it is
// made and readied (up to --ready-timeout, 30 minutes by default), so a
// younger one may be a live run's. 0 would take every machine of every
// run.
const machineSweepFloor = time.Hour

// machineAge is --older-than of a sweep of machines: positive, and at
// least machineSweepFloor.
func machineAge(p *time.Duration) pflag.Value {
	return flagvalue.Duration(p, 0, machineSweepFloor, "a younger machine may be one a live run is still making", "24h")
}

func vmsListCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the machines of the harness (carrying its run tag) by run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, p, err := openVMs(cmd.Context(), file)
			if err != nil {
				return err
			}
			defer p.Close()
			runs, err := lifecycle.Runs(cmd.Context(), p)
			if err != nil {
				return err
			}
			return printRuns(cmd.OutOrStdout(), runs, time.Now())
		},
	}
	cmd.Flags().StringVar(&file, "vms", "", "the VM file (its provider and connection)")
	_ = cmd.MarkFlagRequired("vms")
	return cmd
}

// printRuns writes a table of the machines, by run.
func printRuns(w io.Writer, runs [][]vms.Machine, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tNAME\tID\tCREATED\tAGE\tKEEP")
	for _, ms := range runs {
		for _, m := range ms {
			created, age := "-", "-"
			if !m.Created.IsZero() {
				created, age = m.Created.UTC().Format(time.RFC3339), now.Sub(m.Created).Round(time.Minute).String()
			}
			keep := ""
			if m.Keep {
				keep = "keep"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.RunID, m.Name, m.ID, created, age, keep)
		}
	}
	return tw.Flush()
}
