package verdicts

import "fmt"

// LinuxOnlySetting is what the API server made of a Linux-only security
// setting in a Windows pod and in its Linux twin (LIM-02), dry-run.
type LinuxOnlySetting struct {
	Field string
	// Refused is the API server's refusal of the Windows pod (a validation
	// error naming Field), "" when it accepted it.
	Refused string
	// WindowsKept and LinuxKept say whether the accepted pods kept the
	// setting (a field a disabled feature gate drops is accepted but gone).
	WindowsKept, LinuxKept bool
}

// LinuxOnly decides whether the setting is available to Windows pods.
func LinuxOnly(s LinuxOnlySetting) Observation {
	switch {
	case s.Refused != "":
		return Limited("refused: %s; a Linux pod with it is accepted", s.Refused)
	case !s.WindowsKept:
		return Limited("accepted, but %s was dropped from the stored pod (a disabled feature gate); a Linux pod with it is accepted", s.Field)
	}
	return Works("%s", fmt.Sprintf("a Windows pod with %s was accepted and kept it; a Linux pod with it is accepted", s.Field))
}
