package verdicts

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

// LinuxOnly decides whether the setting is available to Windows pods:
// refused for the Windows pod, or dropped from it while the Linux twin
// kept it, is limited; kept is works. Dropped from both pods is a feature
// gate of the API server that is off for every OS: it says nothing of
// Windows.
func LinuxOnly(s LinuxOnlySetting) Observation {
	switch {
	case s.Refused != "":
		return Limited("refused: %s; a Linux pod with it is accepted", s.Refused)
	case !s.WindowsKept && s.LinuxKept:
		return Limited("accepted, but %s was dropped from the Windows pod, and kept in its Linux twin", s.Field)
	case !s.WindowsKept:
		return Unobserved("accepted, but %s was dropped from the Windows pod and from its Linux twin alike (a feature gate of the API server is off): nothing of Windows was seen", s.Field)
	}
	return Works("a Windows pod with %s was accepted and kept it; a Linux pod with it is accepted", s.Field)
}
