package verdicts

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/framework/ledger"
)

// The utility VM count comes only from the count itself: the pod that ran
// UtilityVMScript succeeded and printed "utility-vms=N". An exit code of 1
// is no count: it is also what powershell.exe -Command exits with when its
// last statement failed or a terminating error ended it
// (PowerShell/PowerShell#13501: the CLI maps $? false to exit code 1), as
// when Get-ComputeProcess is denied access to the Host Compute Service.
func TestUtilityVMsOnlyFromTheCount(t *testing.T) {
	denied := "Get-ComputeProcess : Access is denied. (Exception from HRESULT: 0x80070005 (E_ACCESSDENIED))\r\n" +
		"    + CategoryInfo          : NotSpecified: (:) [Get-ComputeProcess], UnauthorizedAccessException\r\n"
	if n, err := UtilityVMs(corev1.PodFailed, 1, denied); err == nil {
		t.Errorf("PowerShell's generic exit code 1 with an error: %d utility VMs, want no count", n)
	}
	if n, err := UtilityVMs(corev1.PodFailed, 3, "utility-vms: Get-ComputeProcess is not on this host\r\n"); err == nil {
		t.Errorf("no compute tools: %d utility VMs, want no count", n)
	}
	if n, err := UtilityVMs(corev1.PodSucceeded, 0, "utility-vms=0\r\n"); err != nil || n != 0 {
		t.Errorf("a count of none: %d, %v", n, err)
	}
	if n, err := UtilityVMs(corev1.PodSucceeded, 0, "utility-vms=2\r\n"); err != nil || n != 2 {
		t.Errorf("a count of two: %d, %v", n, err)
	}
	if n, err := UtilityVMs(corev1.PodSucceeded, 0, "WARNING: something\r\n"); err == nil {
		t.Errorf("a success that printed no count: %d, want an error", n)
	}
}

// Hyper-V isolation (LIM-03, LIM-11) is decided by the utility VM the pod
// runs in, counted on the node after it ran (upstream's hyperv.go checks
// the same through the Host Compute Service): a pod of the handler that
// ran without that count says nothing of how it was isolated.
func TestHyperVDecidedByTheUtilityVM(t *testing.T) {
	const what = "a pod with RuntimeClass handler runhcs-wcow-hypervisor on win-1"
	want(t, "ran, no utility VM check", HyperV(HyperVRun{What: what, Ran: true}), ledger.Unobserved, "utility VM")
	want(t, "ran, the count failed", HyperV(HyperVRun{What: what, Ran: true, Counted: true, VMErr: errors.New("the HostProcess pod ended Failed (exit 1)")}), ledger.Unobserved, "exit 1")
	want(t, "ran without a utility VM", HyperV(HyperVRun{What: what, Ran: true, Counted: true}), ledger.Limited, "without a utility VM")
	want(t, "ran in a utility VM", HyperV(HyperVRun{What: what, Ran: true, Counted: true, VMs: 1}), ledger.Works, "utility VM")
	want(t, "refused for its handler", HyperV(HyperVRun{What: what, Refused: true,
		Reason: `CreateContainerError: failed to get sandbox runtime: no runtime for "runhcs-wcow-hypervisor" is configured`}), ledger.Limited, "no runtime")
	want(t, "still pulling", HyperV(HyperVRun{What: what, Reason: "ContainerCreating: "}), ledger.Unobserved, "neither")
}
