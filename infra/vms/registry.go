package vms

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
)

// File is a loaded and checked VM file (config.Machines): load one with
// config.Load[config.Machines].
type File = config.Machines

// Register adds a provider: p is what its VM file takes (its connection,
// its name, the key of its block, whose Go type is S), and open connects
// to it and checks that it answers and takes the credentials, within ctx,
// before any machine is made: a provider that cannot be reached is an
// error there (a config.Problem naming connection.endpoint or the setting
// at fault, with the fix), never a failed Create. A provider package
// registers in its init function; the CLI imports the package.
//
// The registry is config's, the only one: Register sets p.Open to open
// (typed: it gets the block as the loader decoded it) and calls
// config.RegisterProvider, which panics on a name registered twice.
func Register[S any, P interface {
	*S
	config.ProviderBlock
}](p config.Provider, open func(ctx context.Context, f *File, s P) (Provider, error)) {
	p.Open = opener(func(ctx context.Context, f *File) (Provider, error) {
		s, _ := f.Block.(P) // the loader decoded the block into a P
		if s == nil {
			s = new(S)
		}
		return open(ctx, f, s)
	})
	config.RegisterProvider[S, P](p)
}

// opener is a config.Provider's Open, as Register sets it.
type opener func(context.Context, *File) (Provider, error)

// InventorySource is implemented by providers of existing machines
// (config.Provider.Existing): their machines are listed in an inventory
// file, which is up's output as it is. Such a provider makes and deletes no
// machine: its Create takes the inventory's machine, its Delete gives it
// back as it was (MakesMachines).
type InventorySource interface {
	// Inventory returns the inventory the provider's machines come from.
	Inventory() *config.Inventory
}

// MakesMachines says whether p makes the machines its Create returns and
// removes those its Delete is given: true for the providers that make VMs,
// false for a provider of machines that exist already (an
// InventorySource, config.Provider.Existing), whose Create lists a machine
// that is there and whose Delete releases it untouched. What the
// lifecycle says of a machine follows from it: "created" and "deleted",
// or "listed" and "released".
func MakesMachines(p Provider) bool {
	_, existing := p.(InventorySource)
	return !existing
}

// Open opens the provider f names, with f's connection and block. An
// error that is not a problem of a field already (a config.Problem: its
// *field.Error names the field) is made one, naming connection.endpoint:
// the provider could not be reached.
func Open(ctx context.Context, f *File) (Provider, error) {
	r, ok := config.LookupProvider(f.Provider)
	if !ok {
		return nil, config.Problem(field.NewPath("provider"), fmt.Sprintf("%q is not a provider this harness has", f.Provider),
			"use one of "+strings.Join(config.ProviderNames(), ", "), nil)
	}
	open, _ := r.Open.(opener)
	if open == nil {
		return nil, fmt.Errorf("vms: provider %q has no Open: register it with vms.Register, not config.RegisterProvider", r.Name)
	}
	p, err := open(ctx, f)
	if err == nil {
		if existing := !MakesMachines(p); existing != r.Existing {
			// A programming error: the file's rules and the lifecycle's
			// words would disagree about the machines.
			p.Close()
			return nil, fmt.Errorf("vms: provider %q is registered with Existing=%v, but its Provider implementing InventorySource is %v: the two go together", r.Name, r.Existing, existing)
		}
		return p, nil
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return p, err
	}
	what := "cannot reach " + r.Summary
	if f.Connection.Endpoint != "" {
		what += fmt.Sprintf(" at %q", f.Connection.Endpoint)
	}
	return nil, config.Problem(field.NewPath("connection", "endpoint"), what+": "+err.Error(),
		"check the endpoint, that the provider is up and reachable from here, and the credentials", err)
}
