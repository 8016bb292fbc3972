package verdicts

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// utilityVMsPrefix starts the line UtilityVMScript prints the count on.
const utilityVMsPrefix = "utility-vms="

// exitNoComputeTools is UtilityVMScript's exit status where the host has no
// Get-ComputeProcess (the Host Compute Service's PowerShell module).
const exitNoComputeTools = 3

// UtilityVMScript prints the number of the host's Hyper-V utility VMs of
// the Windows containerd shim (the Host Compute Service's VirtualMachine
// compute processes owned by containerd-shim-runhcs-v1.exe) on a line
// "utility-vms=N", and exits 0. A HostProcess pod on the node runs it. Its
// exit status says nothing of the count: 1 is also what powershell.exe
// exits with for any error.
var UtilityVMScript = fmt.Sprintf(`$ErrorActionPreference = 'Stop'
if (-not (Get-Command Get-ComputeProcess -ErrorAction SilentlyContinue)) { Write-Output 'Get-ComputeProcess is not on this host'; exit %d }
$vms = @(Get-ComputeProcess | Where-Object { $_.Type -eq 'VirtualMachine' -and $_.Owner -eq 'containerd-shim-runhcs-v1.exe' })
Write-Output ('%s' + $vms.Count)`, exitNoComputeTools, utilityVMsPrefix)

// UtilityVMs reads the count from what the HostProcess pod that ran
// UtilityVMScript left: its phase, its container's exit code (-1 when it
// has none) and its output. Only the count decides: a pod that succeeded
// and printed "utility-vms=N"; anything else (an exit code of 1 included,
// which PowerShell gives any error) is an error.
func UtilityVMs(phase corev1.PodPhase, exit int32, output string) (int, error) {
	if phase == corev1.PodSucceeded {
		for _, line := range strings.Split(output, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), utilityVMsPrefix); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return 0, fmt.Errorf("the count printed %q is no count", line)
				}
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("the HostProcess pod that counts the utility VMs ended %s (exit %d) without a count: %q", phase, exit, strings.TrimSpace(output))
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
// (Limited). A pod that ran without its node's utility VMs counted, or
// that neither ran nor was refused for its handler, decides nothing.
func HyperV(r HyperVRun) Observation {
	switch {
	case r.Ran && !r.Counted:
		return Unobserved("%s ran, but its node's utility VMs were not counted: how it was isolated was not seen", r.What)
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
