package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/winconform/winconform/internal/redact"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/internal/runid"
)

// Defaults of Options.
const (
	// DefaultReadyTimeout is how long a machine may take from its Create
	// to the last rung: upstream's Windows jobs wait 20 minutes for a
	// Windows node to be Ready; a machine made from a golden image boots,
	// runs sysprep's specialize pass and its first logon before WinRM
	// answers.
	DefaultReadyTimeout = 30 * time.Minute
	// DefaultSettle is how long an address must stay the same.
	DefaultSettle = 20 * time.Second
	// DefaultPoll is the time between two attempts of a rung.
	DefaultPoll = 2 * time.Second
	// DefaultParallel bounds the Creates running at once.
	DefaultParallel = 4
	// DefaultCleanupTimeout bounds the teardown after a failure or an
	// interrupt.
	DefaultCleanupTimeout = 10 * time.Minute
)

// Options tune a run.
type Options struct {
	// RunID is the run's ID (runid.Check), the run tag's value.
	RunID string
	// Dir is the run's directory: its state file, the inventory up writes,
	// and the machines' console logs (console/<machine>.log).
	Dir string
	// Parallel bounds the Creates running at once (DefaultParallel when 0).
	Parallel int
	// ReadyTimeout is each machine's budget from its Create to the last
	// rung (DefaultReadyTimeout when 0).
	ReadyTimeout time.Duration
	// Settle is how long an address must stay the same (DefaultSettle when
	// 0; none for providers of existing machines).
	Settle time.Duration
	// Poll is the time between two attempts of a rung (DefaultPoll when 0).
	Poll time.Duration
	// KeepOnFailure keeps the machines that failed (their Create or the
	// ladder) for debugging, instead of deleting them; the others are
	// deleted. An interrupt deletes every machine.
	KeepOnFailure bool
	// CleanupTimeout bounds the teardown (DefaultCleanupTimeout when 0).
	CleanupTimeout time.Duration
	// Log gets one line per event (nil: none).
	Log io.Writer
	// Secrets are redacted from the console logs (Up adds the VM file's
	// own: the provider's credentials and the machines' passwords).
	Secrets []string

	now       func() time.Time
	connect   func(config.Machine) (winrmClient, error)
	authGrace time.Duration
	words     words
}

// words are what the log and the errors say a provider's Create and
// Delete do to a machine. They follow from whether the provider makes its
// machines (vms.MakesMachines): the providers that make VMs create and
// delete them; a provider of existing machines (static) lists a lab's
// machine and releases it, and neither makes nor deletes it.
type words struct {
	creating, created, deleting, deleted string
}

// wordsFor returns p's words.
func wordsFor(p vms.Provider) words {
	if vms.MakesMachines(p) {
		return words{creating: "creating", created: "created", deleting: "deleting", deleted: "deleted"}
	}
	return words{creating: "listing", created: "listed", deleting: "releasing", deleted: "released"}
}

func (o Options) withDefaults() Options {
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.CleanupTimeout <= 0 {
		o.CleanupTimeout = DefaultCleanupTimeout
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.connect == nil {
		o.connect = connectWinRM
	}
	if o.authGrace <= 0 {
		o.authGrace = authGrace
	}
	if _, locked := o.Log.(*lockedWriter); o.Log != nil && !locked {
		o.Log = &lockedWriter{w: o.Log} // the machines log at once
	}
	return o
}

// lockedWriter writes one line at a time to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "vms: "+format+"\n", args...)
	}
}

// Result is what up made.
type Result struct {
	// RunID is the run's ID; StatePath its state file.
	RunID, StatePath string
	// InventoryPath is the inventory of the ready machines, which join,
	// reset and the suites read; Inventory is it, loaded.
	InventoryPath string
	Inventory     *config.Inventory
	// Machines are the machines made, in order.
	Machines []vms.Machine
}

// InventoryFile is the name of the inventory up writes in the run's
// directory.
const InventoryFile = "machines.yaml"

// ErrLeftBehind is what a run or a down that could not delete every one of
// its machines matches (errors.Is).
var ErrLeftBehind = errors.New("machines left behind")

// Up makes f.Count machines with p, concurrently (at most o.Parallel
// Creates at once), readies each through the ladder (address, TCP, WinRM
// Identify, an authenticated command) and writes the inventory of them.
//
// The run ID must be free: Up makes the run's state file exclusively
// (one that exists, of a run that has not ended with every machine
// deleted, is another invocation's) and refuses a run ID the provider
// lists a machine with (ErrRunInUse), before any machine is made. The
// state file is written before the first Create starts, and each provider
// ID as its Create returns, so that a run that crashes can be torn down
// (Down) from it. On a failure, or when ctx ends (Ctrl-C), Up deletes what
// this invocation made, by the IDs its own Creates returned, and nothing
// else (keeping the failed machines under KeepOnFailure), and fails; it
// also fails when a machine it meant to delete is still there
// (ErrLeftBehind).
func Up(ctx context.Context, f *vms.File, p vms.Provider, o Options) (*Result, error) {
	o = o.withDefaults()
	o.words = wordsFor(p)
	if err := runid.Check(o.RunID); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("the run's directory: %w", err)
	}
	src, existing := p.(vms.InventorySource)
	o.Secrets = append(o.Secrets, Secrets(f, src)...)
	var names []string
	if existing {
		inv := src.Inventory()
		for _, m := range inv.Machines {
			names = append(names, m.Name)
		}
		o.Settle = time.Nanosecond // an inventory's address does not move
	} else {
		for i := 1; i <= f.Count; i++ {
			names = append(names, vms.MachineName(f.NamePrefix, o.RunID, i))
		}
	}
	vmFile, _ := filepath.Abs(f.Path)
	host, _ := os.Hostname()
	w := &stateWriter{path: filepath.Join(o.Dir, StateFile), state: State{
		RunID: o.RunID, Host: host, PID: os.Getpid(), Provider: f.Provider, VMFile: vmFile, Started: o.now().UTC(), Phase: PhaseCreating,
	}}
	for _, n := range names {
		w.state.Machines = append(w.state.Machines, StateMachine{Name: n})
	}
	// Before the first Create: the run ID is claimed (a crash from here on
	// leaves a state file that names the run), and no machine of the
	// provider carries it.
	if err := w.claim(); err != nil {
		return nil, err
	}
	if err := unused(ctx, p, o.RunID); err != nil {
		os.Remove(w.path) // nothing was made: the claim is given back
		return nil, err
	}
	o.logf("run %s: %d machine(s) from %s, state in %s", o.RunID, len(names), f.Provider, w.path)

	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	type outcome struct {
		machine vms.Machine
		created bool
		inv     config.Machine
		err     error
	}
	results := make([]outcome, len(names))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[i]
			select {
			case sem <- struct{}{}:
			case <-runCtx.Done():
				res.err = runCtx.Err()
				return
			}
			started := o.now()
			spec := vms.Spec{Name: name, RunID: o.RunID, Created: started.UTC().Truncate(time.Second), Image: f.Image,
				CPUs: f.CPUs, MemoryMiB: int(f.MemoryMiB)}
			m, err := p.Create(runCtx, spec)
			<-sem
			if m.ID != "" {
				// This invocation's machine, by the ID its Create returned
				// (also with an error: one it made and could not remove).
				m.Name, m.RunID = name, o.RunID
				res.machine, res.created = m, true
				if werr := w.machine(name, func(sm *StateMachine) { sm.ID = m.ID }); werr != nil && err == nil {
					err = werr
				}
			}
			if err != nil {
				res.err = fmt.Errorf("%s machine %s: %w", o.words.creating, name, err)
				_ = w.machine(name, func(sm *StateMachine) { sm.Error = res.err.Error() })
				cancelRun()
				return
			}
			o.logf("%s: %s (%s) in %v", name, o.words.created, m.ID, o.now().Sub(started).Round(time.Millisecond))
			l := &ladder{p: p, id: m.ID, name: name, settle: o.Settle, budget: o.ReadyTimeout, poll: o.Poll, grace: o.authGrace, now: o.now,
				connect: o.connect, log: o.logf, machine: machineFor(f, src, name)}
			res.inv, res.err = l.climb(runCtx)
			console := writeConsole(context.WithoutCancel(runCtx), p, m, o)
			var nr *NotReadyError
			if errors.As(res.err, &nr) {
				nr.ConsoleLog = console
			}
			if res.err != nil {
				_ = w.machine(name, func(sm *StateMachine) { sm.Error = res.err.Error() })
				cancelRun()
				return
			}
			_ = w.machine(name, func(sm *StateMachine) { sm.Address, sm.Ready = res.inv.Address, true })
		}()
	}
	wg.Wait()

	var failures []error
	var made []vms.Machine
	failed := map[string]bool{}
	for i, r := range results {
		if r.created {
			made = append(made, r.machine)
		}
		if r.err != nil && !errors.Is(r.err, context.Canceled) {
			failures = append(failures, r.err)
			failed[names[i]] = true
		}
	}
	if ctx.Err() == nil && len(failures) == 0 {
		ready := make([]config.Machine, len(results))
		for i, r := range results {
			ready[i] = r.inv
		}
		res, err := finish(f, src, existing, ready, o, w, made)
		if err == nil {
			return res, nil
		}
		failures = append(failures, err)
	}

	// A failure or an interrupt: tear down what the run made.
	if ctx.Err() != nil {
		failures = append([]error{fmt.Errorf("run %s interrupted (%w): deleting its machines", o.RunID, context.Cause(ctx))}, failures...)
		failed = nil // an interrupt keeps nothing
	}
	var targets []vms.Machine
	for _, m := range made {
		if o.KeepOnFailure && failed[m.Name] {
			o.logf("%s: kept (%s) for debugging: delete it with `winconform vms down --run-id %s`", m.Name, m.ID, o.RunID)
			_ = w.machine(m.Name, func(sm *StateMachine) { sm.Kept = true })
			continue
		}
		targets = append(targets, m)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.CleanupTimeout)
	defer cancel()
	if err := teardown(cctx, p, o.RunID, targets, len(targets) < len(made), o, w); err != nil {
		failures = append(failures, err)
	}
	return nil, errors.Join(failures...)
}

// unused refuses a run ID that a machine p lists carries: the machine is
// another invocation's (its state file elsewhere, or gone), and a run of
// this ID would be taken for it, or take it.
func unused(ctx context.Context, p vms.Provider, runID string) error {
	listed, err := p.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the provider's machines to check that run %s is free: %w", runID, err)
	}
	var theirs []string
	for _, m := range listed {
		if m.RunID == runID {
			theirs = append(theirs, fmt.Sprintf("%s (%s)", m.Name, m.ID))
		}
	}
	if len(theirs) > 0 {
		return fmt.Errorf("%w: run %s has machine(s) already, made by another invocation: %s; end that run with `winconform vms down --run-id %s`, or pick another --run-id",
			ErrRunInUse, runID, strings.Join(theirs, ", "), runID)
	}
	return nil
}

// finish writes the inventory of the ready machines, checks that it
// loads, and marks the run ready.
func finish(f *vms.File, src vms.InventorySource, existing bool, ready []config.Machine, o Options, w *stateWriter, made []vms.Machine) (*Result, error) {
	res := &Result{RunID: o.RunID, StatePath: w.path, Machines: made}
	if existing {
		inv := src.Inventory()
		res.InventoryPath, res.Inventory = inv.Path, inv
	} else {
		path := filepath.Join(o.Dir, InventoryFile)
		data, inv, err := f.Inventory(path, ready)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("writing the inventory: %w", err)
		}
		res.InventoryPath, res.Inventory = path, inv
	}
	if err := w.update(func(s *State) { s.Phase, s.Inventory = PhaseReady, res.InventoryPath }); err != nil {
		return nil, err
	}
	o.logf("run %s: %d machine(s) ready; inventory %s", o.RunID, len(ready), res.InventoryPath)
	return res, nil
}

// machineFor returns how the ladder makes the inventory machine of name at
// an address: the VM file's machine block with that name and address, or
// the existing machine of the provider's inventory.
func machineFor(f *vms.File, src vms.InventorySource, name string) func(addr string) (config.Machine, error) {
	return func(addr string) (config.Machine, error) {
		if src != nil {
			m, ok := src.Inventory().Machine(name)
			if !ok {
				return config.Machine{}, fmt.Errorf("the inventory has no machine %s", name)
			}
			return m, nil
		}
		_, inv, err := f.Inventory(f.Path, []config.Machine{{Name: name, Address: addr}})
		if err != nil {
			return config.Machine{}, fmt.Errorf("machine %s at %s: %w", name, addr, err)
		}
		return inv.Machines[0], nil
	}
}

// Secrets are the secrets a VM file reads, to be kept out of what a run
// writes: its provider's credentials and its machines' passwords.
func Secrets(f *vms.File, src vms.InventorySource) []string {
	var out []string
	for _, c := range f.Connection.Credentials {
		out = append(out, c.Secret.Reveal())
	}
	machines := []config.Machine{f.Machine}
	if src != nil {
		machines = src.Inventory().Machines
	}
	for _, m := range machines {
		out = append(out, m.PasswordFrom.Secret.Reveal())
	}
	return out
}

// ConsoleDir is where console logs go in the run's directory.
const ConsoleDir = "console"

// writeConsole writes the machine's console log, when the provider keeps
// one, to the run's directory, secret redacted, and returns its path.
func writeConsole(ctx context.Context, p vms.Provider, m vms.Machine, o Options) string {
	cl, ok := p.(vms.ConsoleLogger)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var buf bytes.Buffer
	if err := cl.ConsoleLog(ctx, m.ID, &buf); err != nil {
		o.logf("%s: its console log: %v", m.Name, err)
		if buf.Len() == 0 {
			return ""
		}
	}
	data := []byte(redact.New(o.Secrets...).String(buf.String()))
	dir := filepath.Join(o.Dir, ConsoleDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		o.logf("%s: its console log: %v", m.Name, err)
		return ""
	}
	path := filepath.Join(dir, m.Name+".log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		o.logf("%s: its console log: %v", m.Name, err)
		return ""
	}
	return path
}

// teardown deletes targets, machines of run runID by their provider IDs,
// and nothing else. Then it lists again: a target still there is an
// ErrLeftBehind; a machine of the run that is no target is said and left
// alone (another invocation's, or one this invocation never got the ID
// of: down removes it). kept says some machines were kept on purpose.
func teardown(ctx context.Context, p vms.Provider, runID string, targets []vms.Machine, kept bool, o Options, w *stateWriter) error {
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, max(o.Parallel, 1))
	var wg sync.WaitGroup
	for _, m := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if o.Dir != "" {
				writeConsole(ctx, p, m, o)
			}
			if err := p.Delete(ctx, m.ID); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s machine %s (%s): %w", o.words.deleting, m.Name, m.ID, err))
				mu.Unlock()
				return
			}
			o.logf("%s: %s (%s)", m.Name, o.words.deleted, m.ID)
			if w != nil {
				_ = w.machine(m.Name, func(sm *StateMachine) { sm.Deleted = true })
			}
		}()
	}
	wg.Wait()
	// What is still there?
	after, err := p.List(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the machines after the teardown: %w", err))
	}
	gone := map[string]bool{}
	for _, m := range targets {
		gone[m.ID] = true
	}
	var left []string
	for _, m := range after {
		switch {
		case m.RunID != runID:
		case gone[m.ID]:
			left = append(left, fmt.Sprintf("%s (%s)", m.Name, m.ID))
		default:
			o.logf("%s (%s): tagged with run %s, but not made by this invocation: left alone (`winconform vms down --run-id %s` removes it)", m.Name, m.ID, runID, runID)
		}
	}
	if len(left) > 0 {
		errs = append(errs, fmt.Errorf("run %s: %w: %s; delete them with `winconform vms down --run-id %s`, or by hand", runID, ErrLeftBehind, strings.Join(left, ", "), runID))
	}
	if w != nil {
		phase := PhaseDeleted
		if kept {
			phase = PhaseKept
		}
		if len(errs) > 0 {
			phase = PhaseFailed
		}
		_ = w.update(func(s *State) { s.Phase = phase })
	}
	return errors.Join(errs...)
}

// runMachines returns the run's machines: those the provider lists with
// the run's tag, and those known (by ID) that it does not list.
func runMachines(ctx context.Context, p vms.Provider, runID string, known []vms.Machine) ([]vms.Machine, error) {
	listed, err := p.List(ctx)
	if err != nil {
		err = fmt.Errorf("listing the run's machines: %w", err)
	}
	var out []vms.Machine
	seen := map[string]bool{}
	for _, m := range listed {
		if m.RunID == runID {
			out = append(out, m)
			seen[m.ID] = true
		}
	}
	for _, m := range known {
		if m.ID != "" && !seen[m.ID] {
			out = append(out, m)
			seen[m.ID] = true
		}
	}
	slices.SortFunc(out, func(a, b vms.Machine) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}
