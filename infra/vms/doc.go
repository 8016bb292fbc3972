// Package vms makes the Windows machines a run joins: VMs created from a
// golden image by a provider (libvirt, vSphere, Azure, Hyper-V), or the
// machines of an inventory file (static), and deleted after the run. Its
// output is an inventory (config.Inventory), which join, reset and
// the suites read as any other.
//
// The VM file (config.Machines; docs/config.md describes it) says which
// provider makes the machines, from what image, how many, and what they
// are to the join (an inventory's defaults); config.Load checks it before
// any machine is made. Machines.Inventory writes the inventory of the
// machines a run made from it.
//
// # How a provider plugs in
//
// A provider is a package under infra/vms (infra/vms/libvirt...) that, in
// its init function, calls Register with what its VM file takes (a
// config.Provider: its name, the key of its own block, and its
// connection's endpoint, user and credentials by name), the Go type of
// its block (which config decodes strictly and checks with its Check
// method), and an Open function that gets the block typed, connects,
// checks the connection and returns a Provider. The CLI imports the
// package for its side effect. There is one registry of providers,
// config's (config.RegisterProvider, which Register calls): the VM file's
// loader, in config, must know each provider's name and block, and config
// is below this package, so the registry is there, and the entry carries
// its Open (config.Provider.Open) for Open here to call.
//
// A Provider's contract (vmstest.Conformance checks it against any provider):
//
//   - Create makes one machine from Spec.Image, tagged with Spec.Tags() in
//     the same request that makes it (TagRun, TagCreated), so that a
//     machine whose Create never returned is still found by List. On an
//     error it removes what it made, or returns that machine (its ID) with
//     the error. The lifecycle claims the run ID first (its state file,
//     made exclusively; no machine listed with the ID), then writes each
//     provider ID as its Create returns; a failed or interrupted up
//     deletes the machines whose IDs its own Creates returned, and nothing
//     else. down and sweep, which act on other runs on purpose, find
//     machines by tag and state file.
//   - Delete removes the machine, its disks and its network interfaces;
//     a machine that is not there is no error.
//   - List returns every machine that carries TagRun, any run's, with its
//     creation time and TagKeep.
//   - Addresses returns the addresses the provider sees now. The lifecycle
//     does the rest: it ignores link-local addresses (169.254.0.0/16, which
//     Windows gives itself until DHCP answers) and waits for an address to
//     stay the same for a settle time (Windows changes it during sysprep).
//   - Optionally, ConsoleLogger: the console or serial log, which goes to
//     the run's artifacts.
//
// Every method is bounded by its context and may be called concurrently.
// Errors say what failed and where (the provider's own message, no
// secret). A value of the VM file at fault (an endpoint that does not
// answer, credentials refused, an image the provider does not have) is a
// config.Problem, as the loader's problems are: its *field.Error names the
// field's path and the fix, and its cause stays reachable (errors.Is). The lifecycle (up, down, sweep, the readiness ladder) is
// written once, for every provider, in infra/vms/lifecycle.
package vms
