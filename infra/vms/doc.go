// Package vms makes the Windows machines a run joins: VMs created from a
// golden image by a provider (libvirt, vSphere, Azure, Hyper-V), or the
// machines of an inventory file (static), and deleted after the run. Its
// output is an inventory (infra/windows/inventory), which join, reset and
// the suites read as any other.
//
// # The VM file
//
//	provider: libvirt               # a registered provider (Names)
//	connection:                     # how to reach it; what it takes is the provider's
//	  endpoint: qemu+tcp://kvm.lab/system
//	  user: admin
//	  credentials:                  # by reference only: name -> {env: VAR} or {file: PATH}
//	    password: {env: LIBVIRT_PASSWORD}
//	image: /var/lib/libvirt/images/win2022.qcow2   # the golden image, as the provider names it
//	count: 2                        # 1 to MaxCount
//	cpus: 2                         # default 2
//	memory: 4Gi                     # with its unit; default 4Gi
//	namePrefix: win                 # machines are <namePrefix>-<run ID>-<n>; default win
//	machine:                        # what every VM is to the join: an inventory's defaults
//	  user: Administrator
//	  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
//	  winrm: {https: false}
//	libvirt:                        # the provider's own block, decoded by the provider
//	  network: kind
//
// Load checks it all before any machine is made and returns a *Error
// listing every problem, each naming the field, its line and the fix. A
// secret written in the file (a credential, a password) is refused: the
// file holds references only. The machine block is checked as the
// inventory checks its defaults (and cannot set name, address or nodeIP,
// which the harness sets per VM); File.Inventory writes the inventory of
// the machines a run made from it.
//
// # How a provider plugs in
//
// A provider is a package under infra/vms (infra/vms/libvirt...) that, in
// its init function, calls Register with a Registration: its name (the VM
// file's provider, and the key of its own block), what its connection
// takes (endpoint, user, credentials by name), a Settings function that
// decodes its block with a *Block (which reports problems with their field
// and line, and reads credentials by reference only), and an Open function
// that connects, checks the connection and returns a Provider. The CLI
// imports the package for its side effect.
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
// secret). The lifecycle (up, down, sweep, the readiness ladder) is
// written once, for every provider, in infra/vms/lifecycle.
package vms
