// Package static is the provider of existing machines: the machines of an
// inventory file (infra/windows/inventory), as the harness took them
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
	"errors"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/windows/inventory"
)

// Name is the provider's name.
const Name = "static"

// Settings is the static block: the inventory, loaded.
type Settings struct {
	Inventory *inventory.Inventory
}

type settingsDoc struct {
	Inventory yaml.Node            `yaml:"inventory"`
	Unknown   map[string]yaml.Node `yaml:",inline"`
}

func init() {
	vms.Register(vms.Registration{
		Name:     Name,
		Summary:  "an inventory file's machines",
		Existing: true,
		Settings: decode,
		Open: func(_ context.Context, cfg vms.Config) (vms.Provider, error) {
			s, ok := cfg.Settings.(Settings)
			if !ok || s.Inventory == nil {
				return nil, &vms.FieldError{Field: "static.inventory", Message: "is missing", Fix: "set static.inventory to the inventory file"}
			}
			return &provider{inv: s.Inventory}, nil
		},
	})
}

func decode(b *vms.Block) any {
	var doc settingsDoc
	if !b.Decode(&doc, "write a mapping such as {inventory: machines.yaml}") {
		return nil
	}
	const fix = "set inventory to the inventory file of the machines (relative to the VM file's directory)"
	if b.Required("inventory", &doc.Inventory, fix) == "" {
		return nil
	}
	path := b.Path("inventory", &doc.Inventory)
	inv, err := inventory.Load(path, b.Env)
	if err != nil {
		var ie *inventory.Error
		msg := err.Error()
		if errors.As(err, &ie) {
			msg = fmt.Sprintf("%d problem(s):\n%s", len(ie.Problems), ie.Error())
		}
		b.Report("inventory", &doc.Inventory, "the inventory does not load: "+msg, "fix the inventory file")
		return nil
	}
	return Settings{Inventory: inv}
}

// provider is an inventory behind the Provider interface.
type provider struct {
	inv *inventory.Inventory
}

var _ vms.InventorySource = (*provider)(nil)

func (p *provider) Inventory() *inventory.Inventory { return p.inv }

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
