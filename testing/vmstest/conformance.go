package vmstest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/vms"
)

// Conformance checks provider p against the contract of vms.Provider with
// one machine made from spec (Name, RunID and Created are filled in when
// empty): Create returns it named and tagged; List finds it with its run
// and a creation time; Addresses answers; Delete removes it and a second
// Delete is no error; then List no longer has it and Addresses says
// ErrNotFound. Each provider's tests run it against the provider's own
// stand-in (the simulator, the fake transport, the real libvirt).
func Conformance(t *testing.T, p vms.Provider, spec vms.Spec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if spec.RunID == "" {
		spec.RunID = "conformance"
	}
	if spec.Name == "" {
		spec.Name = vms.MachineName("win", spec.RunID, 1)
	}
	if spec.Created.IsZero() {
		spec.Created = time.Now().UTC().Truncate(time.Second)
	}
	m, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create(%s): %v", spec.Name, err)
	}
	deleted := false
	defer func() {
		if !deleted {
			_ = p.Delete(context.WithoutCancel(ctx), m.ID)
		}
	}()
	if m.ID == "" || m.Name != spec.Name || m.RunID != spec.RunID {
		t.Errorf("Create returned %+v, want a provider ID, name %s and run %s", m, spec.Name, spec.RunID)
	}
	listed, ok := find(ctx, t, p, m.ID)
	switch {
	case !ok:
		t.Errorf("List does not have machine %s (%s) after Create", m.ID, spec.Name)
	case listed.RunID != spec.RunID || listed.Name != spec.Name:
		t.Errorf("List has %+v, want name %s and run %s (the tag %s)", listed, spec.Name, spec.RunID, vms.TagRun)
	case listed.Created.IsZero() || listed.Created.Sub(spec.Created).Abs() > 10*time.Minute:
		t.Errorf("List says machine %s was made at %s, want about %s", m.ID, listed.Created, spec.Created)
	case listed.Keep:
		t.Errorf("List says machine %s is tagged %s: the harness never sets it", m.ID, vms.TagKeep)
	}
	if _, err := p.Addresses(ctx, m.ID); err != nil {
		t.Errorf("Addresses(%s): %v", m.ID, err)
	}
	if err := p.Delete(ctx, m.ID); err != nil {
		t.Fatalf("Delete(%s): %v", m.ID, err)
	}
	deleted = true
	if err := p.Delete(ctx, m.ID); err != nil {
		t.Errorf("a second Delete(%s): %v, want nil (Delete is idempotent)", m.ID, err)
	}
	if _, ok := find(ctx, t, p, m.ID); ok {
		t.Errorf("List still has machine %s after Delete", m.ID)
	}
	if _, err := p.Addresses(ctx, m.ID); !errors.Is(err, vms.ErrNotFound) {
		t.Errorf("Addresses of a deleted machine: %v, want an error matching vms.ErrNotFound", err)
	}
}

func find(ctx context.Context, t *testing.T, p vms.Provider, id string) (vms.Machine, bool) {
	t.Helper()
	ms, err := p.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return vms.Machine{}, false
}
