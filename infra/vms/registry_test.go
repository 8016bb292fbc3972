package vms_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/configtest"
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

// bare is the block of a provider registered in config alone, without an
// Open.
type bare struct{}

func (*bare) Check(*vms.File, *field.Path) field.ErrorList { return nil }

func init() {
	config.RegisterProvider[bare](config.Provider{Name: "bare", Summary: "a provider without an Open", Existing: true})
}

// The registry is config's: a provider registered with vms.Register is
// one config knows (its name listed, its block decoded), and Open opens
// it; one registered in config alone is refused at Open, naming the way.
func TestOneRegistry(t *testing.T) {
	names := config.ProviderNames()
	for _, n := range []string{"misdeclared", "bare", "fake"} {
		if !slices.Contains(names, n) {
			t.Errorf("config.ProviderNames() = %v, want %s in it", names, n)
		}
	}
	r, ok := config.LookupProvider("misdeclared")
	if !ok || r.Open == nil {
		t.Errorf("config.LookupProvider(misdeclared) = %+v, %v, want its Open set by vms.Register", r, ok)
	}
	f, err := config.Parse[config.Machines]("vms.yaml", []byte("provider: bare\n"), stdEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vms.Open(t.Context(), f); err == nil || !strings.Contains(err.Error(), "vms.Register") {
		t.Errorf("Open of a provider registered in config alone: %v, want it refused, naming vms.Register", err)
	}
}

// errDown is what the provider "down" answers Open with.
var errDown = errors.New("dial tcp 192.0.2.1:1: connection refused")

// down is the block of a provider that never answers.
type down struct{}

func (*down) Check(*vms.File, *field.Path) field.ErrorList { return nil }

func init() {
	vms.Register(config.Provider{Name: "down", Summary: "a provider that does not answer", Existing: true},
		func(context.Context, *vms.File, *down) (vms.Provider, error) { return nil, errDown })
}

// An error of a provider's Open that names no field is a problem of
// connection.endpoint, with the fix, its cause reachable.
func TestOpenNamesTheEndpoint(t *testing.T) {
	f, err := config.Parse[config.Machines]("vms.yaml", []byte("provider: down\n"), stdEnv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = vms.Open(t.Context(), f)
	configtest.Refused(t, err, "connection.endpoint", "cannot reach a provider that does not answer: "+errDown.Error())
	if !errors.Is(err, errDown) {
		t.Errorf("Open = %v, want its cause reachable (errors.Is)", err)
	}
}
