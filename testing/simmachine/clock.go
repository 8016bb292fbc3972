package simmachine

import "time"

// The machine's clock. A Windows machine keeps its own time (the Windows
// Time service, w32time, sets it from a time source: a domain controller,
// an NTP server, the hypervisor), and a machine without a working source
// drifts or keeps the wrong time set at install. preflight reports it as
// env:utcNow, read from Win32_OperatingSystem.LocalDateTime in UTC, as the
// clock is at the moment the step reads it: true time plus the machine's
// offset (Config.ClockOffset). A test that sets env:utcNow itself fixes
// the value.

// utcNowKey is the fact preflight reports the machine's clock as.
const utcNowKey = "env:utcNow"

// clockNow is what the machine's clock reads now, as PowerShell's
// round-trip format writes a UTC time. m.mu must be held.
func (m *Machine) clockNow() string {
	return time.Now().UTC().Add(m.cfg.ClockOffset).Format("2006-01-02T15:04:05.0000000Z")
}
