package vms_test

import (
	"context"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/windows/inventory"
	"github.com/winconform/winconform/internal/testing/vmstest"
)

// A registration that says its machines exist already, whose provider
// makes them (it is no InventorySource): the lifecycle would say "listed"
// of machines it creates.
func init() {
	vms.Register(vms.Registration{Name: "misdeclared", Summary: "a provider that says it makes no machine and makes them", Existing: true,
		Open: func(context.Context, vms.Config) (vms.Provider, error) { return vmstest.New(), nil }})
}

// lender is a provider of existing machines.
type lender struct{ *vmstest.Fake }

func (lender) Inventory() *inventory.Inventory { return &inventory.Inventory{} }

// Whether a provider makes its machines is whether it is an
// InventorySource, and Open holds the registration to it.
func TestMakesMachines(t *testing.T) {
	if !vms.MakesMachines(vmstest.New()) {
		t.Error("a provider that makes VMs does not make machines")
	}
	if vms.MakesMachines(lender{vmstest.New()}) {
		t.Error("a provider of existing machines makes machines")
	}
	f, err := vms.Parse("vms.yaml", []byte("provider: misdeclared\n"), stdEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vms.Open(t.Context(), f); err == nil || !strings.Contains(err.Error(), "Existing=true") {
		t.Errorf("Open of a provider registered Existing that is no InventorySource: %v", err)
	}
}
