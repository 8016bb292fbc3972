// Package lifecycletest checks a provider under the shared lifecycle
// (infra/vms/lifecycle) for what no one provider's tests can see alone:
// that runs never touch each other's machines. Each provider's tests run
// Ownership with a Rig of their stand-in (real libvirt under TCG, vcsim,
// the Azure SDK's fakes, the Hyper-V host model, an inventory).
package lifecycletest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
)

// Rig is a provider under test and what the lifecycle needs of it.
type Rig struct {
	Provider vms.Provider
	// File is the VM file of count machines of run runID. The machines of
	// the first run it is asked for must answer WinRM once made (the rig
	// reports their addresses, starts their guests).
	File func(t *testing.T, runID string, count int) *vms.File
	// Options are the lifecycle's timings for the rig (RunID, Dir and
	// Parallel are set here).
	Options lifecycle.Options
	// Existing says the provider's machines are not made (static): a
	// second run cannot be told from the provider, only from the state
	// file, and nothing is ever deleted.
	Existing bool
	// Timeout bounds the whole check (5 minutes when 0).
	Timeout time.Duration
}

// Ownership checks, with the rig's provider under the shared lifecycle:
//
//  1. A run A is made and ready.
//  2. A second up with A's run ID is refused (lifecycle.ErrRunInUse)
//     before any Create: from A's directory by its state file, which it
//     leaves as it was; from another directory by the machines the
//     provider lists with the ID, leaving no state file.
//  3. A's machines still answer WinRM.
//  4. A run B whose second Create makes its machine and then fails (half
//     way), while a machine of another invocation carrying B's run ID
//     appears (one that passed its check at the same moment): B deletes
//     exactly its own machines, by the IDs its Creates returned, and
//     leaves that machine and A's alone.
//  5. down of A deletes A's machines and frees its run ID.
func Ownership(t *testing.T, r Rig) {
	t.Helper()
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	suffix := fmt.Sprintf("%04x", time.Now().UnixNano()&0xffff)
	runA, runB := "own-a"+suffix, "own-b"+suffix
	opts := func(run, dir string) lifecycle.Options {
		o := r.Options
		o.RunID, o.Dir, o.Parallel = run, dir, 1
		if o.Log == nil {
			o.Log = &logBuffer{}
		}
		return o
	}
	dirA := t.TempDir()
	fileA := r.File(t, runA, 2)
	a, err := lifecycle.Up(ctx, fileA, r.Provider, opts(runA, dirA))
	if err != nil {
		t.Fatalf("up of run %s: %v", runA, err)
	}
	downA := func() error {
		st, path, _ := lifecycle.LoadState(dirA)
		return lifecycle.Down(context.WithoutCancel(ctx), r.Provider, runA, lifecycle.DownOptions{State: st, StatePath: path})
	}
	defer func() { _ = downA() }()

	// 2. A second up with A's run ID, from A's directory and from another.
	before, err := os.ReadFile(filepath.Join(dirA, lifecycle.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	counting := &counter{Provider: r.Provider}
	_, err = lifecycle.Up(ctx, fileA, counting, opts(runA, dirA))
	switch {
	case !errors.Is(err, lifecycle.ErrRunInUse) || !strings.Contains(err.Error(), "vms down --run-id "+runA):
		t.Errorf("a second up of run %s from its directory: %v, want it refused (ErrRunInUse) naming `vms down --run-id %s`", runA, err, runA)
	case counting.creates.Load() != 0:
		t.Errorf("the refused up made %d machine(s)", counting.creates.Load())
	}
	if after, _ := os.ReadFile(filepath.Join(dirA, lifecycle.StateFile)); string(after) != string(before) {
		t.Errorf("the refused up rewrote run %s's state file:\nbefore %s\nafter %s", runA, before, after)
	}
	other := t.TempDir()
	_, err = lifecycle.Up(ctx, fileA, counting, opts(runA, other))
	if !r.Existing {
		switch {
		case !errors.Is(err, lifecycle.ErrRunInUse) || !strings.Contains(err.Error(), "made by another invocation"):
			t.Errorf("a second up of run %s from another directory: %v, want it refused (ErrRunInUse) for the machines the provider lists", runA, err)
		case counting.creates.Load() != 0:
			t.Errorf("the refused up made %d machine(s)", counting.creates.Load())
		}
		if _, serr := os.Stat(filepath.Join(other, lifecycle.StateFile)); serr == nil {
			t.Error("the refused up left a state file claiming the run")
		}
	}

	// 3. A's machines still answer.
	for _, m := range a.Inventory.Machines {
		if err := answers(ctx, m); err != nil {
			t.Errorf("run %s's machine %s no longer answers after the refused ups: %v", runA, m.Name, err)
		}
	}
	if r.Existing {
		if err := downA(); err != nil {
			t.Errorf("down of run %s: %v", runA, err)
		}
		return
	}

	// 4. B fails half way, beside another invocation's machine of its run ID.
	hw := &halfway{Provider: r.Provider}
	fileB := r.File(t, runB, 2)
	_, err = lifecycle.Up(ctx, fileB, hw, opts(runB, t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), errHalfway.Error()) {
		t.Fatalf("up of run %s, whose second Create fails half way: %v", runB, err)
	}
	listed, err := r.Provider.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	racer := hw.racer()
	if racer.ID == "" {
		t.Fatal("the other invocation's machine was not made")
	}
	defer func() { _ = r.Provider.Delete(context.WithoutCancel(ctx), racer.ID) }()
	var ofB, ofA []string
	for _, m := range listed {
		switch m.RunID {
		case runB:
			ofB = append(ofB, m.ID)
		case runA:
			ofA = append(ofA, m.ID)
		}
	}
	if !slices.Equal(ofB, []string{racer.ID}) {
		t.Errorf("after run %s failed, the provider lists %v of its run ID, want the other invocation's %s alone (%s deleted %v)", runB, ofB, racer.ID, runB, hw.made())
	}
	if len(ofA) != len(a.Machines) {
		t.Errorf("run %s has %d machine(s) after run %s's teardown, want its %d", runA, len(ofA), runB, len(a.Machines))
	}

	// 5. down of A frees its run ID.
	if err := downA(); err != nil {
		t.Fatalf("down of run %s: %v", runA, err)
	}
	if _, err := os.Stat(filepath.Join(dirA, lifecycle.StateFile)); err == nil {
		t.Errorf("run %s's state file is still there after down: its run ID is not free", runA)
	}
}

// answers says whether machine m answers WinRM: one command.
func answers(ctx context.Context, m config.Machine) error {
	c, err := remote.NewWinRM(windows.RemoteConfig(m))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := c.RunPS(ctx, "still-there", `[Environment]::MachineName`)
	if err != nil {
		return err
	}
	return res.Err()
}

// counter counts Creates.
type counter struct {
	vms.Provider
	creates atomic.Int32
}

func (c *counter) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	c.creates.Add(1)
	return c.Provider.Create(ctx, spec)
}

var errHalfway = errors.New("the machine was made, then its start failed (lifecycletest's half-way failure)")

// halfway is a provider whose first Create, before it makes its machine,
// has another invocation make one of the same run ID, and whose second
// Create makes its machine and then fails: it returns the machine (its
// ID) with the error, as the contract asks of a machine it could not
// remove.
type halfway struct {
	vms.Provider
	mu    sync.Mutex
	calls int
	other vms.Machine
	mine  []vms.Machine
}

func (h *halfway) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.mu.Unlock()
	if n == 1 {
		other := spec
		prefix := spec.Name[:strings.LastIndex(spec.Name, "-"+spec.RunID+"-")]
		other.Name = vms.MachineName(prefix, spec.RunID, 9)
		m, err := h.Provider.Create(ctx, other)
		if err != nil {
			return vms.Machine{}, fmt.Errorf("the other invocation's machine: %w", err)
		}
		h.mu.Lock()
		h.other = m
		h.mu.Unlock()
	}
	m, err := h.Provider.Create(ctx, spec)
	h.mu.Lock()
	if m.ID != "" {
		h.mine = append(h.mine, m)
	}
	h.mu.Unlock()
	if n == 2 && err == nil {
		return m, errHalfway
	}
	return m, err
}

func (h *halfway) racer() vms.Machine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.other
}

func (h *halfway) made() []vms.Machine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.mine)
}

// logBuffer is a log safe for the lifecycle's concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
