package verdicts

import (
	"testing"

	"github.com/winconform/winconform/framework/ledger"
)

// LIM-02: a Linux-only setting dropped from a Windows pod says something
// of Windows only when the Linux twin kept it; dropped from both, it is a
// disabled feature gate of the API server, for every OS.
func TestLinuxOnlyDropComparedWithTheTwin(t *testing.T) {
	const field = "spec.securityContext.appArmorProfile"
	want(t, "dropped from both pods", LinuxOnly(LinuxOnlySetting{Field: field}), ledger.Unobserved, "Linux twin alike")
	want(t, "dropped from the Windows pod only", LinuxOnly(LinuxOnlySetting{Field: field, LinuxKept: true}), ledger.Limited, "dropped")
	want(t, "refused for the Windows pod", LinuxOnly(LinuxOnlySetting{Field: field, LinuxKept: true,
		Refused: `Pod "linux-only" is invalid: spec.securityContext.appArmorProfile: Forbidden: may not be set for a windows pod`}), ledger.Limited, "Forbidden")
	want(t, "kept by both", LinuxOnly(LinuxOnlySetting{Field: field, WindowsKept: true, LinuxKept: true}), ledger.Works, "kept")
}
