// Package lifecycle is the machines' lifecycle, written once for every
// provider (infra/vms): Up makes a run's machines concurrently, readies
// each through a ladder of named rungs (an address that is not link-local
// and has settled, WinRM's port, WinRM's unauthenticated Identify, one
// authenticated command) and writes the inventory join, reset and the
// suites read; Down deletes a run's machines by its run ID or its state
// file; Sweep deletes every tagged machine older than a cutoff but those
// tagged keep; Runs lists them.
//
// A run's directory (Options.Dir, by default _output/vms/<run ID>) holds
// its state file (state.json: the run ID, then each machine's provider ID,
// written before the first Create returns), the inventory (machines.yaml)
// and the machines' console logs (console/<machine>.log). A run that fails
// or is interrupted deletes what it made (KeepOnFailure keeps the failed
// machines) and fails when anything it meant to delete is still there.
package lifecycle
