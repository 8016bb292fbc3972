package hyperv

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// Settings is the VM file's hyperv block.
type Settings struct {
	// WinRM is how the host's WinRM service is reached (connection.endpoint
	// is its address, connection.user and connection.credentials.password
	// the account).
	WinRM config.WinRM `yaml:"winrm"`
	// Switch is the Hyper-V virtual switch every VM's network adapter is
	// connected to.
	Switch string `yaml:"switch"`
	// VHDXDir is the host's directory (a local path on the host) the
	// harness keeps its VMs in: <VHDXDir>\<run ID>\<machine>\ holds a
	// machine's differencing disk and its configuration.
	VHDXDir string `yaml:"vhdxDir"`
	// Generation is the VMs' generation: 2 (UEFI, the default) or 1 (BIOS).
	Generation int `yaml:"generation"`
	// SecureBootTemplate is the secure boot template of a generation 2 VM
	// (MicrosoftWindows by default; "off" in the file for secure boot
	// off, which is "" here).
	SecureBootTemplate string `yaml:"secureBootTemplate"`
}

// The secure boot templates a generation 2 VM takes (Set-VMFirmware
// -SecureBootTemplate; microsoft/openvmm petri/src/vm/hyperv/powershell.rs
// lists the same), and the value that turns secure boot off.
var secureBootTemplates = []string{"MicrosoftWindows", "MicrosoftUEFICertificateAuthority", "OpenSourceShieldedVM"}

const secureBootOff = "off"

// DefaultSecureBootTemplate is a generation 2 VM's template unless the VM
// file says otherwise: the one for Windows guests.
const DefaultSecureBootTemplate = "MicrosoftWindows"

// windowsDir is an absolute local path on the host: a drive letter and at
// least one folder. A UNC path (\\server\share) is refused: over WinRM the
// host cannot reach a share with the harness's credentials (the second hop
// of PowerShell remoting), so New-VHD there is refused access.
var windowsDir = regexp.MustCompile(`^[A-Za-z]:\\[^<>:"/|?*\x00-\x1f]*[^<>:"/|?*\x00-\x1f\\ .]$`)

// Check gives the block its defaults and returns its problems, and those
// of connection.endpoint, the host alone.
func (s *Settings) Check(f *vms.File, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	bad := func(key, msg, fix string) { errs = append(errs, config.Invalid(p.Child(key), msg, fix)) }
	if s.Switch == "" {
		errs = append(errs, config.Missing(p.Child("switch"), "set switch to the Hyper-V virtual switch the VMs connect to (Get-VMSwitch on the host lists them)"))
	}
	switch s.Generation {
	case 0:
		s.Generation = 2
	case 1, 2:
	default:
		bad("generation", fmt.Sprintf("%d is out of range (1 to 2)", s.Generation), "write 2 (UEFI, the default) or 1 (BIOS)")
	}
	dir := s.VHDXDir
	if len(dir) > 3 {
		dir = strings.TrimRight(dir, `\`)
	}
	switch {
	case dir == "":
		errs = append(errs, config.Missing(p.Child("vhdxDir"), `set vhdxDir to a directory on the host's own disks where the harness keeps its VMs, such as D:\winconform`))
	case strings.HasPrefix(dir, `\\`) || strings.HasPrefix(dir, "//"):
		bad("vhdxDir", config.Quote(dir)+" is a network path: over WinRM the host cannot reach a share with the harness's credentials (the second hop)",
			`use a directory on the host's own disks, such as D:\winconform`)
	case !windowsDir.MatchString(dir):
		bad("vhdxDir", config.Quote(dir)+" is not an absolute folder on the host",
			`write the host's path with its drive and a folder, such as D:\winconform (the harness keeps nothing else there)`)
	}
	s.VHDXDir = dir
	switch t := s.SecureBootTemplate; {
	case t != "" && s.Generation == 1:
		bad("secureBootTemplate", "is for generation 2 VMs: a generation 1 VM has a BIOS and no secure boot", "remove secureBootTemplate, or set generation: 2")
	case t == "":
		s.SecureBootTemplate = DefaultSecureBootTemplate
	case strings.EqualFold(t, secureBootOff):
		s.SecureBootTemplate = ""
	default:
		i := slices.IndexFunc(secureBootTemplates, func(k string) bool { return strings.EqualFold(k, t) })
		if i < 0 {
			bad("secureBootTemplate", config.Quote(t)+" is not a secure boot template", "write one of "+strings.Join(secureBootTemplates, ", ")+", or off for secure boot off")
		} else {
			s.SecureBootTemplate = secureBootTemplates[i]
		}
	}
	if s.Generation == 1 {
		s.SecureBootTemplate = ""
	}
	errs = append(errs, s.WinRM.Check(p.Child("winrm"))...)
	ep := f.Connection.Endpoint
	switch host, port, err := net.SplitHostPort(ep); {
	case strings.Contains(ep, "/"):
		errs = append(errs, config.Invalid(field.NewPath("connection", "endpoint"), config.Quote(ep)+" is a URL", "write the Hyper-V host's name or address alone, such as hv01.lab: the scheme comes from hyperv.winrm.https and the port from hyperv.winrm.port"))
	case err == nil:
		errs = append(errs, config.Invalid(field.NewPath("connection", "endpoint"), config.Quote(ep)+" includes a port", fmt.Sprintf("write the host alone (%s) and the port as hyperv.winrm.port: %s", host, port)))
	}
	return errs
}
