package vms_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/vmstest"
)

// misdeclared is the block of a registration that says its machines exist
// already, whose provider makes them (it is no InventorySource): the
// lifecycle would say "listed" of machines it creates.
type misdeclared struct{}

func (*misdeclared) Check(*vms.File, *field.Path) field.ErrorList { return nil }

func init() {
	vms.Register(config.Provider{Name: "misdeclared", Summary: "a provider that says it makes no machine and makes them", Existing: true},
		func(context.Context, *vms.File, *misdeclared) (vms.Provider, error) { return vmstest.New(), nil })
}

// lender is a provider of existing machines.
type lender struct{ *vmstest.Fake }

func (lender) Inventory() *config.Inventory { return &config.Inventory{} }

// Whether a provider makes its machines is whether it is an
// InventorySource, and Open holds the registration to it.
func TestMakesMachines(t *testing.T) {
	if !vms.MakesMachines(vmstest.New()) {
		t.Error("a provider that makes VMs does not make machines")
	}
	if vms.MakesMachines(lender{vmstest.New()}) {
		t.Error("a provider of existing machines makes machines")
	}
	f, err := config.Parse[config.Machines]("vms.yaml", []byte("provider: misdeclared\n"), stdEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vms.Open(t.Context(), f); err == nil || !strings.Contains(err.Error(), "Existing=true") {
		t.Errorf("Open of a provider registered Existing that is no InventorySource: %v", err)
	}
}
