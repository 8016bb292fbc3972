// Package vmstest holds a fake provider for the lifecycle's own tests, and
// Conformance, which checks a provider against the contract of
// vms.Provider.
//
// The fake keeps its machines in memory and behaves as the contract says
// a provider does: a machine is tagged from the moment it exists (List
// finds it while Create is still running), Delete of an absent machine is
// no error, and Addresses reports what the test's plan says the machine
// has at its age, link-local addresses included, as a real provider
// reports what DHCP, the guest agent or VMware Tools say.
//
// It registers itself as provider "fake". A VM file reaches a fake the
// test made with connection.endpoint fake://<name> (Serve); an endpoint
// that no fake serves fails Open as an unreachable provider does.
package vmstest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// Fake is a provider in memory. Set its hooks before the first call.
type Fake struct {
	// CreateDelay is how long Create takes after the machine exists (a
	// clone, a boot); Create returns early when its context ends, leaving
	// the machine, which it returns (its ID) with the context's error, as
	// the contract asks of a provider that could not remove it.
	CreateDelay time.Duration
	// CreateErr, when set, fails the Create of the machine it returns an
	// error for (the machine is not made).
	CreateErr func(spec vms.Spec) error
	// Plan says which addresses a machine has at an age (since its
	// Create); nil: none ever.
	Plan func(name string, age time.Duration) []string
	// Stuck, when set, says which machines Delete leaves where they are
	// while it reports success (a resource group stuck deleting).
	Stuck func(name string) bool
	// Console, when set, is what a machine's console printed.
	Console func(name string) string
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu       sync.Mutex
	machines map[string]*machine
	next     int
	creates  int
	deletes  []string
	closed   bool
}

type machine struct {
	vms.Machine
	spec vms.Spec
	born time.Time
}

// New returns an empty fake.
func New() *Fake { return &Fake{machines: map[string]*machine{}} }

func (f *Fake) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Create makes the machine at once, tagged, then takes CreateDelay.
func (f *Fake) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	if f.CreateErr != nil {
		if err := f.CreateErr(spec); err != nil {
			return vms.Machine{}, err
		}
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return vms.Machine{}, errors.New("fake: provider closed")
	}
	f.next++
	f.creates++
	tags := spec.Tags()
	created, err := time.Parse(time.RFC3339, tags[vms.TagCreated])
	if err != nil {
		f.mu.Unlock()
		return vms.Machine{}, fmt.Errorf("fake: the spec's creation tag: %w", err)
	}
	m := &machine{Machine: vms.Machine{ID: fmt.Sprintf("fake-%d", f.next), Name: spec.Name, RunID: tags[vms.TagRun], Created: created},
		spec: spec, born: f.now()}
	f.machines[m.ID] = m
	f.mu.Unlock()
	if f.CreateDelay > 0 {
		t := time.NewTimer(f.CreateDelay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			// Made, and not removed: returned with the error, by its ID,
			// for the caller to delete (the contract).
			return m.Machine, ctx.Err()
		case <-t.C:
		}
	}
	return m.Machine, nil
}

// Delete removes the machine; an absent one is no error.
func (f *Fake) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, id)
	if m, ok := f.machines[id]; ok && f.Stuck != nil && f.Stuck(m.Name) {
		return nil
	}
	delete(f.machines, id)
	return nil
}

// List returns every machine (all carry the run tag), by ID.
func (f *Fake) List(ctx context.Context) ([]vms.Machine, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []vms.Machine
	for _, id := range slices.Sorted(maps.Keys(f.machines)) {
		out = append(out, f.machines[id].Machine)
	}
	return out, nil
}

// Addresses returns what Plan says the machine has now.
func (f *Fake) Addresses(ctx context.Context, id string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	m, ok := f.machines[id]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("fake: machine %s: %w", id, vms.ErrNotFound)
	}
	if f.Plan == nil {
		return nil, nil
	}
	return f.Plan(m.Name, f.now().Sub(m.born)), nil
}

// ConsoleLog writes Console's text for the machine.
func (f *Fake) ConsoleLog(ctx context.Context, id string, w io.Writer) error {
	f.mu.Lock()
	m, ok := f.machines[id]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("fake: machine %s: %w", id, vms.ErrNotFound)
	}
	if f.Console == nil {
		return nil
	}
	_, err := io.WriteString(w, f.Console(m.Name))
	return err
}

// Close marks the fake closed: Create fails after it.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// Put adds a machine as another run (or a crashed one) left it, tagged
// with runID and made at created.
func (f *Fake) Put(name, runID string, created time.Time, keep bool) vms.Machine {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	m := &machine{Machine: vms.Machine{ID: fmt.Sprintf("fake-%d", f.next), Name: name, RunID: runID, Created: created, Keep: keep}, born: f.now()}
	f.machines[m.ID] = m
	return m.Machine
}

// Spec returns the spec a machine was created with.
func (f *Fake) Spec(id string) (vms.Spec, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.machines[id]
	if !ok {
		return vms.Spec{}, false
	}
	return m.spec, true
}

// Creates is how many machines Create made; Deletes the IDs Delete was
// called with, in order.
func (f *Fake) Creates() int { f.mu.Lock(); defer f.mu.Unlock(); return f.creates }

// Deletes returns the IDs Delete was called with, in order.
func (f *Fake) Deletes() []string { f.mu.Lock(); defer f.mu.Unlock(); return slices.Clone(f.deletes) }

var (
	servedMu sync.Mutex
	served   = map[string]*Fake{}
)

// Serve makes f the fake that connection.endpoint fake://<name> reaches,
// until the returned function is called.
func Serve(name string, f *Fake) (stop func()) {
	servedMu.Lock()
	defer servedMu.Unlock()
	served[name] = f
	return func() {
		servedMu.Lock()
		defer servedMu.Unlock()
		delete(served, name)
	}
}

// Settings is the fake's block: nothing but a label, to test that a
// provider's block reaches it.
type Settings struct {
	// Label is the block's label.
	Label string `yaml:"label"`
}

// Check accepts any label.
func (*Settings) Check(*vms.File, *field.Path) field.ErrorList { return nil }

func init() {
	vms.Register(config.Provider{Name: "fake", Summary: "the test's fake provider", Endpoint: config.Required,
		EndpointExample: "fake://name", User: config.Optional, Credentials: []config.Credential{{Name: "token"}}},
		func(ctx context.Context, f *vms.File, _ *Settings) (vms.Provider, error) {
			name, ok := strings.CutPrefix(f.Connection.Endpoint, "fake://")
			if !ok {
				return nil, config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("%q is not a fake's endpoint", f.Connection.Endpoint),
					"write fake://<name>", nil)
			}
			servedMu.Lock()
			fake, ok := served[name]
			servedMu.Unlock()
			if !ok {
				return nil, fmt.Errorf("dial fake %s: connection refused", name)
			}
			return fake, nil
		})
}
