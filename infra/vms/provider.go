package vms

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"
)

// Provider makes and unmakes machines in one place (a libvirt host, a
// vCenter, an Azure subscription, a Hyper-V host, or an inventory file).
// Every method is bounded by its ctx and safe to call from several
// goroutines at once. See the package documentation for the contract.
type Provider interface {
	// Create makes one machine from spec.Image and returns it once the
	// provider has it (it need not have booted). The machine carries the
	// run tag (TagRun=spec.RunID) and the creation tag (TagCreated) from
	// the moment it exists, set in the same request that makes it, so
	// that List finds a machine whose Create never returned. On an error
	// Create removes what it made; a machine it made and could not remove
	// it returns with the error, its ID set, for the caller to delete.
	// The caller deletes nothing else: a machine's ID is the only proof
	// that an invocation made it (a name or a run tag may be another
	// invocation's).
	Create(ctx context.Context, spec Spec) (Machine, error)
	// Delete removes the machine with the provider ID id, with its disks
	// and network interfaces (the overlay, the linked clone's delta, the
	// NIC and public address, the differencing VHDX). A machine that is
	// not there is no error: Delete is idempotent.
	Delete(ctx context.Context, id string) error
	// List returns every machine that carries TagRun, whatever its run,
	// including the ones tagged TagKeep. Machines without the tag are
	// never listed: they are not the harness's.
	List(ctx context.Context) ([]Machine, error)
	// Addresses returns the machine's addresses as the provider sees them
	// now (a DHCP lease, the guest agent, VMware Tools, Hyper-V's KVP, the
	// inventory), IP addresses as text or, for a machine known by name,
	// its DNS name. Empty while the provider knows none. The lifecycle
	// filters and settles them: a provider returns what it sees, link-local
	// addresses included. An absent machine is an error matching
	// ErrNotFound.
	Addresses(ctx context.Context, id string) ([]string, error)
	// Close releases the provider's connection.
	Close() error
}

// ConsoleLogger is implemented by providers that keep a machine's console
// or serial output. The lifecycle writes it to the run's artifacts when a
// machine is ready or fails, and before it is deleted.
type ConsoleLogger interface {
	// ConsoleLog writes what the machine's console or serial port printed
	// so far to w. An absent machine is an error matching ErrNotFound.
	ConsoleLog(ctx context.Context, id string, w io.Writer) error
}

// ErrNotFound is what Addresses and ConsoleLog match (errors.Is) for a
// machine the provider does not have.
var ErrNotFound = errors.New("no such machine")

// ErrRunInUse is what a run's ID in use by another invocation matches
// (errors.Is): the lifecycle's refusal (its state file exists, or the
// provider lists a machine with it), and a provider's, which finds what
// another invocation of the run made (Azure's resource group).
var ErrRunInUse = errors.New("run ID in use")

// Spec is one machine to create.
type Spec struct {
	// Name is the machine's name, unique within the run and among the
	// runs' machines: "<namePrefix>-<runID>-<n>" (MachineName). It becomes
	// the Kubernetes node name, so it is a lower-case DNS label.
	Name string
	// RunID is the run that creates it: TagRun's value.
	RunID string
	// Created is when the run asked for it: TagCreated's value, for
	// providers that keep no creation time of their own.
	Created time.Time
	// Image is the golden image, as the VM file's image: a path, a
	// template, an image ID. "" for providers of existing machines.
	Image string
	// CPUs is the number of virtual CPUs.
	CPUs int
	// MemoryMiB is the memory in MiB.
	MemoryMiB int
}

// Tags returns the tags (name, value) a provider puts on the machine spec
// makes: TagRun and TagCreated.
func (s Spec) Tags() map[string]string {
	return map[string]string{TagRun: s.RunID, TagCreated: s.Created.UTC().Format(time.RFC3339)}
}

// Machine is a machine as the provider sees it.
type Machine struct {
	// ID is the provider's own identifier, what Delete, Addresses and
	// ConsoleLog take: a libvirt domain's UUID, a vSphere managed object
	// reference, an Azure resource ID, a Hyper-V VM's ID, an inventory's
	// machine name.
	ID string `json:"id"`
	// Name is the machine's name (Spec.Name).
	Name string `json:"name"`
	// RunID is TagRun's value.
	RunID string `json:"runID"`
	// Created is when it was made: the provider's own creation time, else
	// TagCreated's value.
	Created time.Time `json:"created"`
	// Keep is true when the machine carries TagKeep set to "true": sweep
	// leaves it alone.
	Keep bool `json:"keep,omitempty"`
}

// The tags the harness puts on its machines, the same name for every
// provider (a libvirt domain's <metadata>, vSphere's extraConfig, Azure's
// resource tags, a Hyper-V VM's Notes as name=value lines). A provider that
// cannot hold "-" in a name may spell it its own way, as long as List reads
// it back.
const (
	// TagRun marks a machine as the harness's and names its run:
	// winconform-run=<run ID>.
	TagRun = "winconform-run"
	// TagCreated holds when the machine was made, in RFC 3339 (UTC):
	// winconform-created=2026-01-02T03:04:05Z.
	TagCreated = "winconform-created"
	// TagKeep, set to "true" (winconform-keep=true), keeps a machine from
	// sweep. The harness never sets it: a user does, by hand, on a machine
	// they want to keep.
	TagKeep = "winconform-keep"
)

// MachineName is the name of a run's n-th machine (from 1):
// "<prefix>-<runID>-<n>".
func MachineName(prefix, runID string, n int) string {
	return prefix + "-" + runID + "-" + strconv.Itoa(n)
}

// ParseKeep reads TagKeep's value: true for "true" (any case), else false.
func ParseKeep(v string) bool { b, _ := strconv.ParseBool(v); return b }
