package hyperv

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/windows/remote"
)

// Settings is the VM file's hyperv block, decoded.
type Settings struct {
	// WinRM is how the host's WinRM service is reached (connection.endpoint
	// is its address, connection.user and connection.credentials.password
	// the account).
	WinRM WinRM
	// Switch is the Hyper-V virtual switch every VM's network adapter is
	// connected to.
	Switch string
	// VHDXDir is the host's directory (a local path on the host) the
	// harness keeps its VMs in: <VHDXDir>\<run ID>\<machine>\ holds a
	// machine's differencing disk and its configuration.
	VHDXDir string
	// Generation is the VMs' generation: 2 (UEFI, the default) or 1 (BIOS).
	Generation int
	// SecureBootTemplate is the secure boot template of a generation 2 VM
	// (MicrosoftWindows by default), "" for secure boot off.
	SecureBootTemplate string
}

// WinRM is how the host's WinRM service is reached: the fields of an
// inventory's winrm block.
type WinRM struct {
	// Port is the listener's port: 5985 over HTTP, 5986 over HTTPS unless
	// set.
	Port int
	// HTTPS makes WinRM go over TLS.
	HTTPS bool
	// CABundlePath is the PEM file trusted for the host's certificate (""
	// for the system's roots), CABundle its content.
	CABundlePath string
	CABundle     []byte
	// Insecure skips the check of the host's certificate.
	Insecure bool
	// TLSServerName is the name the certificate must have ("" for the
	// endpoint).
	TLSServerName string
	// Auth is remote.AuthNTLM (the default) or remote.AuthBasic (HTTPS only).
	Auth string
}

// The secure boot templates a generation 2 VM takes (Set-VMFirmware
// -SecureBootTemplate; microsoft/openvmm petri/src/vm/hyperv/powershell.rs
// lists the same), and the value that turns secure boot off.
var secureBootTemplates = []string{"MicrosoftWindows", "MicrosoftUEFICertificateAuthority", "OpenSourceShieldedVM"}

const secureBootOff = "off"

// DefaultSecureBootTemplate is a generation 2 VM's template unless the VM
// file says otherwise: the one for Windows guests.
const DefaultSecureBootTemplate = "MicrosoftWindows"

type settingsDoc struct {
	WinRM              yaml.Node            `yaml:"winrm"`
	Switch             yaml.Node            `yaml:"switch"`
	VHDXDir            yaml.Node            `yaml:"vhdxDir"`
	Generation         yaml.Node            `yaml:"generation"`
	SecureBootTemplate yaml.Node            `yaml:"secureBootTemplate"`
	Unknown            map[string]yaml.Node `yaml:",inline"`
}

type winrmDoc struct {
	Port          yaml.Node            `yaml:"port"`
	HTTPS         yaml.Node            `yaml:"https"`
	CABundle      yaml.Node            `yaml:"caBundle"`
	Insecure      yaml.Node            `yaml:"insecure"`
	TLSServerName yaml.Node            `yaml:"tlsServerName"`
	Auth          yaml.Node            `yaml:"auth"`
	Unknown       map[string]yaml.Node `yaml:",inline"`
}

// windowsDir is an absolute local path on the host: a drive letter and at
// least one folder. A UNC path (\\server\share) is refused: over WinRM the
// host cannot reach a share with the harness's credentials (the second hop
// of PowerShell remoting), so New-VHD there is refused access.
var windowsDir = regexp.MustCompile(`^[A-Za-z]:\\[^<>:"/|?*\x00-\x1f]*[^<>:"/|?*\x00-\x1f\\ .]$`)

// decodeSettings reads the hyperv block.
func decodeSettings(b *vms.Block) any {
	var doc settingsDoc
	if !b.Decode(&doc, `write a mapping such as {switch: k8s, vhdxDir: 'D:\winconform'}`) {
		return nil
	}
	s := Settings{
		Switch:     b.Required("switch", &doc.Switch, "set switch to the Hyper-V virtual switch the VMs connect to (Get-VMSwitch on the host lists them)"),
		Generation: b.Int("generation", &doc.Generation, 2, 1, 2, "write 2 (UEFI, the default) or 1 (BIOS)"),
	}
	dir := b.Required("vhdxDir", &doc.VHDXDir, `set vhdxDir to a directory on the host's own disks where the harness keeps its VMs, such as D:\winconform`)
	if len(dir) > 3 {
		dir = strings.TrimRight(dir, `\`)
	}
	switch {
	case dir == "":
	case strings.HasPrefix(dir, `\\`) || strings.HasPrefix(dir, "//"):
		b.Report("vhdxDir", &doc.VHDXDir, quoteValue(dir)+" is a network path: over WinRM the host cannot reach a share with the harness's credentials (the second hop)",
			`use a directory on the host's own disks, such as D:\winconform`)
	case !windowsDir.MatchString(dir):
		b.Report("vhdxDir", &doc.VHDXDir, quoteValue(dir)+" is not an absolute folder on the host",
			`write the host's path with its drive and a folder, such as D:\winconform (the harness keeps nothing else there)`)
	default:
		s.VHDXDir = dir
	}
	s.SecureBootTemplate = DefaultSecureBootTemplate
	if t := b.String("secureBootTemplate", &doc.SecureBootTemplate); t != "" {
		fix := "write one of " + strings.Join(secureBootTemplates, ", ") + ", or off for secure boot off"
		switch {
		case s.Generation == 1:
			b.Report("secureBootTemplate", &doc.SecureBootTemplate, "is for generation 2 VMs: a generation 1 VM has a BIOS and no secure boot", "remove secureBootTemplate, or set generation: 2")
		case strings.EqualFold(t, secureBootOff):
			s.SecureBootTemplate = ""
		default:
			s.SecureBootTemplate = ""
			for _, known := range secureBootTemplates {
				if strings.EqualFold(t, known) {
					s.SecureBootTemplate = known
				}
			}
			if s.SecureBootTemplate == "" {
				b.Report("secureBootTemplate", &doc.SecureBootTemplate, quoteValue(t)+" is not a secure boot template", fix)
			}
		}
	}
	if s.Generation == 1 {
		s.SecureBootTemplate = ""
	}
	s.WinRM = decodeWinRM(b.Child("winrm", &doc.WinRM))
	checkEndpoint(b)
	return s
}

// decodeWinRM reads hyperv.winrm, as an inventory's winrm block.
func decodeWinRM(b *vms.Block) WinRM {
	var doc winrmDoc
	w := WinRM{Auth: remote.AuthNTLM}
	if !b.Decode(&doc, "write a mapping such as {port: 5985} or {https: true, caBundle: ./hyperv-ca.pem}") {
		return w
	}
	w.HTTPS = b.Bool("https", &doc.HTTPS, false)
	def := remote.DefaultHTTPPort
	if w.HTTPS {
		def = remote.DefaultHTTPSPort
	}
	w.Port = b.Int("port", &doc.Port, def, 1, 65535, "use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP")
	w.Insecure = b.Bool("insecure", &doc.Insecure, false)
	w.TLSServerName = b.String("tlsServerName", &doc.TLSServerName)
	if a := b.String("auth", &doc.Auth); a != "" {
		switch a {
		case remote.AuthNTLM, remote.AuthBasic:
			w.Auth = a
		default:
			fix := "use ntlm (local or domain accounts, sealed over HTTP) or basic (local accounts, HTTPS only)"
			if l := strings.ToLower(a); l == remote.AuthNTLM || l == remote.AuthBasic {
				fix = "write it in lower case: " + l
			}
			b.Report("auth", &doc.Auth, quoteValue(a)+" is not an authentication method", fix)
		}
	}
	if w.Auth == remote.AuthBasic && !w.HTTPS {
		b.Report("auth", &doc.Auth, "basic over HTTP is refused: Basic sends the password in clear text with every message, and a stock WinRM refuses it (AllowUnencrypted=false)",
			"use auth: ntlm (the default), which seals every message over HTTP, or set https: true with the host's CA in caBundle")
	}
	if w.CABundlePath = b.Path("caBundle", &doc.CABundle); w.CABundlePath != "" {
		data, err := os.ReadFile(w.CABundlePath)
		switch {
		case err != nil:
			b.Report("caBundle", &doc.CABundle, fmt.Sprintf("%s cannot be read: %v", quoteValue(w.CABundlePath), err),
				"put the CA certificate that issued the host's WinRM certificate there, or fix the path (relative to the VM file)")
		case !x509.NewCertPool().AppendCertsFromPEM(data):
			b.Report("caBundle", &doc.CABundle, quoteValue(w.CABundlePath)+" holds no PEM certificate", "put the CA certificate (PEM) that issued the host's WinRM certificate there")
		default:
			w.CABundle = data
		}
		if !w.HTTPS {
			b.Report("caBundle", &doc.CABundle, "is for HTTPS, but https is false", "set https: true, or remove caBundle")
		}
	}
	return w
}

// checkEndpoint checks connection.endpoint: the host alone, its WinRM port
// and scheme being hyperv.winrm's.
func checkEndpoint(b *vms.Block) {
	ep := b.Connection().Endpoint
	if ep == "" {
		return
	}
	switch host, port, err := net.SplitHostPort(ep); {
	case strings.Contains(ep, "://") || strings.Contains(ep, "/"):
		b.ReportConnection("endpoint", quoteValue(ep)+" is a URL", "write the Hyper-V host's name or address alone, such as hv01.lab: the scheme comes from hyperv.winrm.https and the port from hyperv.winrm.port")
	case err == nil:
		b.ReportConnection("endpoint", quoteValue(ep)+" includes a port", fmt.Sprintf("write the host alone (%s) and the port as hyperv.winrm.port: %s", host, port))
	}
}

func quoteValue(s string) string { return fmt.Sprintf("%q", s) }
