// Package static is the provider of existing machines: the machines of an
// inventory file (config.Inventory), as the harness took them
// before it made VMs, behind the same interface. Create takes the
// inventory's machine of that name, Addresses is its address, Delete does
// nothing, and List lists nothing: an inventory's machines carry no run
// tag, they are not the harness's to delete. up's output is the inventory
// file itself; the readiness ladder still runs (TCP, WinRM Identify, one
// command), so that a machine that is off fails before the join.
//
//	provider: static
//	static:
//	  inventory: machines.yaml   # relative to the VM file's directory
package static

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// Name is the provider's name.
const Name = "static"

// Settings is the static block: the inventory, loaded.
type Settings struct {
	// Path is the inventory file, relative to the VM file's directory.
	Path      string            `yaml:"inventory"`
	Inventory *config.Inventory `yaml:"-"`
}

func init() {
	vms.Register(config.Provider{Name: Name, Summary: "an inventory file's machines", Existing: true},
		func(_ context.Context, _ *vms.File, s *Settings) (vms.Provider, error) {
			if s.Inventory == nil {
				return nil, config.Problem(field.NewPath("static", "inventory"), "is missing", "set static.inventory to the inventory file", nil)
			}
			return &provider{inv: s.Inventory}, nil
		})
}

// Check loads the inventory, as join does.
func (s *Settings) Check(f *vms.File, p *field.Path) field.ErrorList {
	p = p.Child("inventory")
	if s.Path == "" {
		return field.ErrorList{config.Missing(p, "set inventory to the inventory file of the machines (relative to the VM file's directory)")}
	}
	inv, err := f.LoadInventory(s.Path)
	if err != nil {
		return field.ErrorList{config.Invalid(p, "the inventory does not load:\n"+err.Error(), "fix the inventory file")}
	}
	s.Inventory = inv
	return nil
}

// provider is an inventory behind the Provider interface.
type provider struct {
	inv *config.Inventory
}

var _ vms.InventorySource = (*provider)(nil)

func (p *provider) Inventory() *config.Inventory { return p.inv }

// Create takes the inventory's machine named spec.Name.
func (p *provider) Create(_ context.Context, spec vms.Spec) (vms.Machine, error) {
	m, ok := p.inv.Machine(spec.Name)
	if !ok {
		return vms.Machine{}, fmt.Errorf("%s has no machine %s", p.inv.Path, spec.Name)
	}
	created := spec.Created
	if created.IsZero() {
		created = time.Now().UTC()
	}
	return vms.Machine{ID: m.Name, Name: m.Name, RunID: spec.RunID, Created: created}, nil
}

// Delete does nothing: the machine is not the harness's.
func (p *provider) Delete(context.Context, string) error { return nil }

// List lists nothing: an inventory's machines carry no run tag.
func (p *provider) List(context.Context) ([]vms.Machine, error) { return nil, nil }

// Addresses is the inventory's address of the machine.
func (p *provider) Addresses(_ context.Context, id string) ([]string, error) {
	m, ok := p.inv.Machine(id)
	if !ok {
		return nil, fmt.Errorf("%s has no machine %s: %w", p.inv.Path, id, vms.ErrNotFound)
	}
	return []string{m.Address}, nil
}

func (p *provider) Close() error { return nil }
