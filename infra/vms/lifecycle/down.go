package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/winconform/winconform/internal/runid"

	"github.com/winconform/winconform/infra/vms"
)

// DownOptions tune Down.
type DownOptions struct {
	// State is the run's state file, when down goes by one: its IDs are
	// deleted too (a machine the provider no longer lists by tag), and it
	// records what was deleted. Nil: by run ID alone.
	State *State
	// StatePath is State's file.
	StatePath string
	// Dir, when set, gets the machines' console logs before they go.
	Dir string
	// Parallel bounds the Deletes running at once (DefaultParallel when 0).
	Parallel int
	// Log gets one line per event.
	Log io.Writer
	// Secrets are redacted from the console logs (Secrets of the VM file).
	Secrets []string
	// Sweep only: Live says whether a run is still going (its heartbeat
	// in the cluster is renewed), whose machines it leaves; DryRun lists
	// what it would delete and deletes nothing.
	Live   func(runID string) bool
	DryRun bool
}

// Down deletes every machine of run runID: those p lists with the run's
// tag and those the state file knows, whatever invocation made them. It
// fails, naming them, when any is still there afterwards (ErrLeftBehind);
// else it retires the state file (EndedStateFile): the run ID is free.
func Down(ctx context.Context, p vms.Provider, runID string, o DownOptions) error {
	if err := runid.Check(runID); err != nil {
		return err
	}
	lo := Options{RunID: runID, Dir: o.Dir, Parallel: o.Parallel, Log: o.Log, Secrets: o.Secrets}.withDefaults()
	lo.words = wordsFor(p)
	var known []vms.Machine
	var w *stateWriter
	if o.State != nil {
		if o.State.RunID != runID {
			return fmt.Errorf("the state file is of run %s, not %s", o.State.RunID, runID)
		}
		for _, m := range o.State.Machines {
			known = append(known, vms.Machine{ID: m.ID, Name: m.Name, RunID: runID})
		}
		if o.StatePath != "" {
			if _, err := os.Stat(filepath.Dir(o.StatePath)); err == nil {
				w = &stateWriter{path: o.StatePath, state: *o.State}
			}
		}
	}
	targets, listErr := runMachines(ctx, p, runID, known)
	if err := errors.Join(listErr, teardown(ctx, p, runID, targets, false, lo, w)); err != nil {
		return err
	}
	if w != nil {
		if err := Retire(w.path); err != nil {
			return fmt.Errorf("run %s: its machines are gone, but its state file stays (%v): remove %s by hand to use the run ID again", runID, err, w.path)
		}
	}
	lo.logf("run %s: nothing of it is left", runID)
	return nil
}

// SweepResult is what a sweep did.
type SweepResult struct {
	// Deleted are the machines it deleted (or, dry, would delete); Kept
	// those tagged keep that it left; Young those made after the cutoff;
	// Live those of runs still going.
	Deleted, Kept, Young, Live []vms.Machine
}

// Sweep deletes every machine p lists with the run tag, of any run, made
// before now minus olderThan, but those tagged keep (vms.TagKeep). A
// machine with no creation time counts as old: the harness tags each with
// one, so it is one whose tags were damaged. It fails when a machine it
// deleted is still there (ErrLeftBehind). With o.Live, the machines of
// runs still going stay whatever their age; with o.DryRun, nothing goes.
func Sweep(ctx context.Context, p vms.Provider, olderThan time.Duration, now time.Time, o DownOptions) (SweepResult, error) {
	var res SweepResult
	if olderThan < 0 {
		return res, fmt.Errorf("--older-than %v is negative: give a duration such as 24h", olderThan)
	}
	lo := Options{Dir: o.Dir, Parallel: o.Parallel, Log: o.Log}.withDefaults()
	lo.words = wordsFor(p) // before sweepRun wraps p
	all, err := p.List(ctx)
	if err != nil {
		return res, fmt.Errorf("listing the harness's machines: %w", err)
	}
	cutoff := now.Add(-olderThan)
	byRun := map[string][]vms.Machine{}
	for _, m := range all {
		switch {
		case m.Keep:
			res.Kept = append(res.Kept, m)
			lo.logf("%s (%s, run %s): tagged %s=true, left", m.Name, m.ID, m.RunID, vms.TagKeep)
		case !m.Created.IsZero() && !m.Created.Before(cutoff):
			res.Young = append(res.Young, m)
		case o.Live != nil && o.Live(m.RunID):
			res.Live = append(res.Live, m)
			lo.logf("%s (%s, run %s): its run is still going, left", m.Name, m.ID, m.RunID)
		case o.DryRun:
			res.Deleted = append(res.Deleted, m)
			lo.logf("%s (%s, run %s): made %s, would be %s", m.Name, m.ID, m.RunID, m.Created.UTC().Format(time.RFC3339), lo.words.deleted)
		default:
			byRun[m.RunID] = append(byRun[m.RunID], m)
		}
	}
	runs := make([]string, 0, len(byRun))
	for r := range byRun {
		runs = append(runs, r)
	}
	sort.Strings(runs)
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, run := range runs {
		ms := byRun[run]
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo.logf("run %s: %d machine(s) made before %s", run, len(ms), cutoff.UTC().Format(time.RFC3339))
			rl := lo
			rl.RunID = run
			err := sweepRun(ctx, p, run, ms, rl)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			res.Deleted = append(res.Deleted, ms...)
		}()
	}
	wg.Wait()
	sort.Slice(res.Deleted, func(i, j int) bool { return res.Deleted[i].Name < res.Deleted[j].Name })
	return res, errors.Join(errs...)
}

// sweepRun deletes the given machines of one run: only those, not the
// run's younger ones or kept ones.
func sweepRun(ctx context.Context, p vms.Provider, run string, ms []vms.Machine, o Options) error {
	sp := &subsetProvider{Provider: p, ids: map[string]bool{}}
	for _, m := range ms {
		sp.ids[m.ID] = true
	}
	return teardown(ctx, sp, run, ms, false, o, nil)
}

// subsetProvider lists only some machines of a provider.
type subsetProvider struct {
	vms.Provider
	ids map[string]bool
}

func (s *subsetProvider) List(ctx context.Context) ([]vms.Machine, error) {
	all, err := s.Provider.List(ctx)
	var out []vms.Machine
	for _, m := range all {
		if s.ids[m.ID] {
			out = append(out, m)
		}
	}
	return out, err
}

// Runs groups the machines p lists by run, for `vms list`: each run's
// machines sorted by name, the runs by their oldest machine.
func Runs(ctx context.Context, p vms.Provider) ([][]vms.Machine, error) {
	all, err := p.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the harness's machines: %w", err)
	}
	byRun := map[string][]vms.Machine{}
	for _, m := range all {
		byRun[m.RunID] = append(byRun[m.RunID], m)
	}
	var out [][]vms.Machine
	for _, ms := range byRun {
		sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
		out = append(out, ms)
	}
	oldest := func(ms []vms.Machine) time.Time {
		t := ms[0].Created
		for _, m := range ms {
			if m.Created.Before(t) {
				t = m.Created
			}
		}
		return t
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := oldest(out[i]), oldest(out[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return out[i][0].RunID < out[j][0].RunID
	})
	return out, nil
}
