package vms

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/winconform/winconform/infra/windows/inventory"
)

// Registration is a provider as the VM file and the CLI know it. A provider
// package registers one in its init function; the CLI imports the package.
type Registration struct {
	// Name is the provider's name: the VM file's provider, and the key of
	// its own block (libvirt, vsphere, azure, hyperv, static).
	Name string
	// Summary says in a few words what the provider drives, for messages:
	// "a libvirt host (KVM or QEMU)".
	Summary string
	// Existing is true for a provider of machines that exist already
	// (static): the VM file's image, count, cpus, memory, namePrefix and
	// machine are refused (every machine of its inventory is taken), and
	// the provider implements InventorySource, as it must exactly when
	// Existing is true (Open checks): it neither makes nor deletes
	// machines (MakesMachines).
	Existing bool
	// Endpoint says whether connection.endpoint is required, optional or
	// refused; EndpointExample is one, for messages ("qemu+tcp://kvm.lab/system").
	Endpoint        Need
	EndpointExample string
	// User says whether connection.user is required, optional or refused.
	User Need
	// Credentials are the names connection.credentials accepts, each a
	// reference ({env: VAR} or {file: PATH}); the required ones are
	// required. Any other name is refused.
	Credentials []Credential
	// Settings decodes the provider's block (the VM file's key named Name)
	// with b, reporting its problems through b, and returns what Spec.Settings
	// and Config.Settings then hold. It is called with an empty block when
	// the file has none, so that it can report required fields. nil: the
	// provider has no block, and one written is refused.
	Settings func(b *Block) any
	// Open connects to the provider and checks that it answers and takes
	// the credentials, within ctx, before any machine is made: a provider
	// that cannot be reached is an error here (a *FieldError naming
	// connection.endpoint or the setting at fault, with the fix), never a
	// failed Create.
	Open func(ctx context.Context, cfg Config) (Provider, error)
}

// Need says whether a field is required, optional or refused.
type Need int

// The needs.
const (
	Refused Need = iota
	Optional
	Required
)

// Credential is a name connection.credentials accepts.
type Credential struct {
	Name     string
	Required bool
}

// Config is what Open gets: the VM file's connection and the provider's
// block, decoded.
type Config struct {
	// File is the VM file's path, Dir its directory (absolute): relative
	// paths in the provider's block are relative to it (Block.Path resolves
	// them).
	File, Dir string
	// Connection is the VM file's connection.
	Connection Connection
	// Settings is what Registration.Settings returned.
	Settings any
	// Image is the VM file's golden image, which Open may check before any
	// machine is made ("" for providers of existing machines).
	Image string
}

// Connection is how to reach the provider.
type Connection struct {
	// Endpoint is where the provider is: a libvirt URI, a vCenter URL, a
	// Hyper-V host, an Azure subscription's endpoint. "" when not set.
	Endpoint string
	// User is the account the provider is reached as, "" when not set.
	User string
	// Credentials are the secrets connection.credentials references, by
	// name, read when the file was loaded. Each prints as "********".
	Credentials map[string]Secret
}

// Secret is a credential's value: it prints and encodes as "********"
// (Reveal returns it).
type Secret = inventory.Secret

// InventorySource is implemented by providers of existing machines
// (Registration.Existing): their machines are listed in an inventory file,
// which is up's output as it is. Such a provider makes and deletes no
// machine: its Create takes the inventory's machine, its Delete gives it
// back as it was (MakesMachines).
type InventorySource interface {
	// Inventory returns the inventory the provider's machines come from.
	Inventory() *inventory.Inventory
}

// MakesMachines says whether p makes the machines its Create returns and
// removes those its Delete is given: true for the providers that make VMs,
// false for a provider of machines that exist already (an
// InventorySource, Registration.Existing), whose Create lists a machine
// that is there and whose Delete releases it untouched. What the
// lifecycle says of a machine follows from it: "created" and "deleted",
// or "listed" and "released".
func MakesMachines(p Provider) bool {
	_, existing := p.(InventorySource)
	return !existing
}

// FieldError is a problem with a field of the VM file that Open (or the
// lifecycle) found: a provider that does not answer, credentials it
// refuses, an image it does not have.
type FieldError struct {
	// Field is the field's path from the top of the VM file:
	// connection.endpoint, image, libvirt.network.
	Field string
	// Message says what is wrong, Fix what to do about it.
	Message, Fix string
	// Err is the cause, if any.
	Err error
}

func (e *FieldError) Error() string {
	s := e.Field + ": " + e.Message
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

func (e *FieldError) Unwrap() error { return e.Err }

var (
	registryMu sync.RWMutex
	registry   = map[string]Registration{}
)

// Register adds a provider. It panics on a registration without a name or
// Open, and on a name registered twice: both are programming errors.
func Register(r Registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	switch {
	case r.Name == "" || r.Open == nil:
		panic("vms: a registration needs a Name and an Open")
	case reserved[r.Name]:
		panic(fmt.Sprintf("vms: %q is a field of the VM file, not a provider name", r.Name))
	}
	if _, dup := registry[r.Name]; dup {
		panic(fmt.Sprintf("vms: provider %q registered twice", r.Name))
	}
	registry[r.Name] = r
}

// Lookup returns the provider registered as name.
func Lookup(name string) (Registration, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	r, ok := registry[name]
	return r, ok
}

// Names returns the registered providers' names, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open opens the provider f names, with f's connection and settings. An
// error that is not a *FieldError already is made one, naming
// connection.endpoint: the provider could not be reached.
func Open(ctx context.Context, f *File) (Provider, error) {
	r, ok := Lookup(f.Provider)
	if !ok {
		return nil, &FieldError{Field: "provider", Message: fmt.Sprintf("%q is not a provider this harness has", f.Provider),
			Fix: "use one of " + joinOr(Names())}
	}
	p, err := r.Open(ctx, Config{File: f.Path, Dir: f.Dir, Connection: f.Connection, Settings: f.Settings, Image: f.Image})
	if err == nil {
		if existing := !MakesMachines(p); existing != r.Existing {
			// A programming error: the file's rules and the lifecycle's
			// words would disagree about the machines.
			p.Close()
			return nil, fmt.Errorf("vms: provider %q is registered with Existing=%v, but its Provider implementing InventorySource is %v: the two go together", r.Name, r.Existing, existing)
		}
		return p, nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return nil, err
	}
	where := "connection.endpoint"
	what := fmt.Sprintf("cannot reach %s", r.Summary)
	if f.Connection.Endpoint != "" {
		what += " at " + quote(f.Connection.Endpoint)
	}
	return nil, &FieldError{Field: where, Message: what + ": " + err.Error(),
		Fix: "check the endpoint, that the provider is up and reachable from here, and the credentials", Err: err}
}
