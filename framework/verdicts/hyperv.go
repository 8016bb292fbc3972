package verdicts

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The exit statuses of the utility VM count (UtilityVMScript).
const (
	exitNoVM           = 1
	exitNoComputeTools = 3
)

// UtilityVMScript counts the host's Hyper-V utility VMs of the Windows
// containerd shim (the Host Compute Service's VirtualMachine compute
// processes), exiting exitNoVM when there are none. A HostProcess pod on
// the node runs it.
var UtilityVMScript = fmt.Sprintf(`if (-not (Get-Command Get-ComputeProcess -ErrorAction SilentlyContinue)) { exit %d }
$vms = @(Get-ComputeProcess | Where-Object { $_.Type -eq 'VirtualMachine' -and $_.Owner -eq 'containerd-shim-runhcs-v1.exe' })
Write-Output $vms.Count
if ($vms.Count -lt 1) { exit %d }`, exitNoComputeTools, exitNoVM)

// UtilityVMs reads the count from what the HostProcess pod that ran
// UtilityVMScript left: its phase, its container's exit code (-1 when it
// has none) and its output.
func UtilityVMs(phase corev1.PodPhase, exit int32, output string) (int, error) {
	if phase == corev1.PodSucceeded {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(output), &n); err != nil {
			return 0, fmt.Errorf("the count printed %q: %w", output, err)
		}
		return n, nil
	}
	if exit == exitNoVM {
		return 0, nil
	}
	return 0, fmt.Errorf("the HostProcess pod ended %s (exit %d); output %q", phase, exit, strings.TrimSpace(output))
}

// HyperVRun is what a spec saw of a pod whose RuntimeClass names the
// Hyper-V handler (runhcs-wcow-hypervisor): LIM-03, LIM-11.
type HyperVRun struct {
	// What names the pod, its RuntimeClass and its node, for the ledger.
	What string
	// Ran: the pod turned Ready. Refused: the node refused its handler
	// (its state and events name the handler). Reason is its last state
	// and warning events.
	Ran, Refused bool
	Reason       string
	// Counted says whether the node's utility VMs were counted after the
	// pod ran: VMs of them, or VMErr why they could not be.
	Counted bool
	VMs     int
	VMErr   error
}

// HyperV decides whether Hyper-V isolation works: a pod of the handler ran
// in a utility VM (Works), ran without one, or was refused for its handler
// (Limited).
func HyperV(r HyperVRun) Observation {
	switch {
	case r.Ran && !r.Counted:
		return Works("%s ran", r.What)
	case r.Ran && r.VMErr != nil:
		return Unobserved("%s ran, but the node's compute processes could not be listed: %v", r.What, r.VMErr)
	case r.Ran && r.VMs == 0:
		return Limited("%s ran without a utility VM: it is not Hyper-V isolated", r.What)
	case r.Ran:
		return Works("%s ran in a utility VM (%d VirtualMachine compute process(es) of containerd-shim-runhcs-v1.exe)", r.What, r.VMs)
	case r.Refused:
		return Limited("%s was refused for its handler: %s", r.What, r.Reason)
	}
	// A pod that neither ran nor was refused for its handler (still
	// pulling, stuck, failed otherwise) says nothing of isolation.
	return Unobserved("%s neither ran nor was refused for its handler: %s", r.What, r.Reason)
}
