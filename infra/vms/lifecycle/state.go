package lifecycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/winconform/winconform/internal/atomicfile"

	"github.com/winconform/winconform/internal/runid"
	"github.com/winconform/winconform/internal/userfile"

	"github.com/winconform/winconform/infra/vms"
)

// StateFile is the state file's name in a run's directory.
const StateFile = "state.json"

// State is what a run records of its machines, so that another process
// (down, sweep, the next run) can remove them after a crash. up makes it,
// exclusively (a run ID whose state file exists is in use: Claim), before
// its first Create starts, with the names it is about to create, then
// writes each machine's provider ID as its Create returns. Only the
// invocation that made it rewrites it; down retires it once the run's
// machines are gone.
type State struct {
	// RunID is the run's ID: the run tag's value on each machine.
	RunID string `json:"runID"`
	// Host and PID are the invocation that owns the run.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// Provider is the VM file's provider; VMFile the VM file (absolute),
	// which down opens the provider with.
	Provider string `json:"provider"`
	VMFile   string `json:"vmFile"`
	// Started is when up started.
	Started time.Time `json:"started"`
	// Machines are the run's machines, in order.
	Machines []StateMachine `json:"machines"`
	// Phase is what the run got to: creating, ready, failed, deleted, kept.
	Phase string `json:"phase"`
	// Inventory is the inventory up wrote, once every machine was ready.
	Inventory string `json:"inventory,omitempty"`
}

// StateMachine is one machine of a run.
type StateMachine struct {
	// Name is the machine's name, known before it is created.
	Name string `json:"name"`
	// ID is its provider ID, "" until its Create returned.
	ID string `json:"id,omitempty"`
	// Address is the address the ladder settled on.
	Address string `json:"address,omitempty"`
	// Ready is true once the machine passed the readiness ladder.
	Ready bool `json:"ready,omitempty"`
	// Deleted is true once down or the run's teardown deleted it; Kept
	// when --keep-on-failure kept it.
	Deleted bool `json:"deleted,omitempty"`
	Kept    bool `json:"kept,omitempty"`
	// Error is why it failed, if it did.
	Error string `json:"error,omitempty"`
}

// The phases of a run.
const (
	PhaseCreating = "creating"
	PhaseReady    = "ready"
	PhaseFailed   = "failed"
	PhaseDeleted  = "deleted"
	PhaseKept     = "kept"
)

// stateWriter writes a run's state file, whole, each time it changes.
type stateWriter struct {
	mu    sync.Mutex
	path  string
	state State
}

// update changes the state under the lock and writes it: to a temporary
// file, synced, then renamed over the old one, so that a crash leaves the
// old state or the new one, never half of one.
func (w *stateWriter) update(change func(s *State)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	change(&w.state)
	data, err := json.MarshalIndent(w.state, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(w.path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the state file: %w", err)
	}
	return nil
}

// EndedStateFile is what down renames a run's state file to once the run's
// machines are gone: the run's ID is free again.
const EndedStateFile = "state.ended.json"

// ErrRunInUse is what Up matches (errors.Is) when its run ID is another
// invocation's: its state file exists, or the provider lists a machine
// tagged with it (vms.ErrRunInUse).
var ErrRunInUse = vms.ErrRunInUse

// claim makes the run's state file, exclusively: when one exists, the run
// ID is another invocation's (ErrRunInUse), unless that run ended with
// every machine deleted, whose file is retired first. A file made here is
// this invocation's alone to rewrite.
func (w *stateWriter) claim() error {
	for range 2 {
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return w.update(func(*State) {})
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("making the state file: %w", err)
		}
		old, _, lerr := LoadState(w.path)
		switch {
		case lerr != nil:
			return fmt.Errorf("%w: run %s: %s exists and cannot be read (%v): another invocation may be writing it; end that run with `winconform vms down --run-id %s`, or pick another --run-id",
				ErrRunInUse, w.state.RunID, w.path, lerr, w.state.RunID)
		case old.Phase != PhaseDeleted:
			return fmt.Errorf("%w: run %s is %s (%s, started %s%s): its machines are its own; end it with `winconform vms down --run-id %s`, or pick another --run-id",
				ErrRunInUse, old.RunID, old.Phase, w.path, old.Started.Format(time.RFC3339), old.owner(), old.RunID)
		}
		// The run ended and deleted every machine: its ID is free. Of two
		// invocations that both see it so, one renames the file; the
		// other finds it gone, and the exclusive create decides.
		if err := os.Rename(w.path, filepath.Join(filepath.Dir(w.path), EndedStateFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("retiring the ended run's state file: %w", err)
		}
	}
	return fmt.Errorf("%w: run %s: its state file %s appeared again while it was retired: another invocation claimed it", ErrRunInUse, w.state.RunID, w.path)
}

func (s *State) owner() string {
	if s.Host == "" {
		return ""
	}
	return fmt.Sprintf(", by pid %d on %s", s.PID, s.Host)
}

// Retire renames a run's state file (path is the file) to EndedStateFile
// beside it: the run's machines are gone, its ID free.
func Retire(path string) error {
	err := os.Rename(path, filepath.Join(filepath.Dir(path), EndedStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// machine changes the named machine's entry.
func (w *stateWriter) machine(name string, change func(m *StateMachine)) error {
	return w.update(func(s *State) {
		for i := range s.Machines {
			if s.Machines[i].Name == name {
				change(&s.Machines[i])
			}
		}
	})
}

// stateKind is a run's state file, as a user names it (vms down --state):
// read through the door for users' files.
var stateKind = userfile.Kind{What: "state file (state.json)", Max: userfile.StateMax}

// LoadState reads a run's state file: path is the file, or the run's
// directory. It is read through the door for users' files
// (internal/userfile): a regular file, at most userfile.StateMax.
func LoadState(path string) (*State, string, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, StateFile)
	}
	data, err := userfile.Read("", path, stateKind)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, path, fmt.Errorf("state file %s does not exist: give the state.json of a run (under _output/vms/<run ID>/) or --run-id", path)
		}
		return nil, path, fmt.Errorf("state file %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, path, fmt.Errorf("state file %s does not read: %w", path, err)
	}
	if err := runid.Check(s.RunID); err != nil {
		return nil, path, fmt.Errorf("state file %s: %w", path, err)
	}
	return &s, path, nil
}

// IDs returns the provider IDs the state knows.
func (s *State) IDs() []string {
	var ids []string
	for _, m := range s.Machines {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids
}
