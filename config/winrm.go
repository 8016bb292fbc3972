package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WinRM is how the harness reaches a Windows host's WinRM service: an
// inventory machine's winrm block, and the Hyper-V host's.
type WinRM struct {
	// Port is the listener's port: 5985 over HTTP, 5986 over HTTPS unless set.
	Port Port `yaml:"port,omitempty" json:"port"`
	// HTTPS is false unless set: a stock Windows Server listens for HTTP only.
	HTTPS bool `yaml:"https,omitempty" json:"https"`
	// CABundle holds the certificates trusted for the host's certificate
	// (none: the system's roots).
	CABundle PEMFile `yaml:"caBundle,omitempty" json:"caBundle,omitzero"`
	// Insecure skips the check of the host's certificate (HTTPS only).
	Insecure bool `yaml:"insecure,omitempty" json:"insecure"`
	// TLSServerName is the name to verify in the certificate ("" for the address).
	TLSServerName string `yaml:"tlsServerName,omitempty" json:"tlsServerName,omitempty"`
	// Auth is AuthNTLM unless set; AuthBasic only over HTTPS.
	Auth string `yaml:"auth,omitempty" json:"auth"`
}

// The WinRM authentication methods.
const (
	// AuthNTLM is NTLM: local or domain accounts, every message sealed
	// (what a stock Windows Server accepts over HTTP). The default.
	AuthNTLM = "ntlm"
	// AuthBasic is HTTP basic authentication: local accounts, HTTPS only.
	AuthBasic = "basic"
)

const fixNoDrop = `caBundle: "" on a machine drops one from defaults`

// Check gives w its defaults and returns its problems, p its path: for a
// winrm block that takes no defaults of another (the Hyper-V host's).
func (w *WinRM) Check(p *field.Path) field.ErrorList {
	errs := w.fields(p)
	w.setDefaults()
	return append(errs, w.cross(p, func(string) string { return "" })...)
}

// Port is a TCP port, 1 to 65535; 0 is none.
type Port int

// UnmarshalText reads a port; its error says the fix after "; ".
func (p *Port) UnmarshalText(text []byte) error {
	n, err := strconv.Atoi(string(text))
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a port; %s", Quote(string(text)), fixPort)
	case n < 1 || n > 65535:
		return fmt.Errorf("%d is out of range; %s", n, fixPort)
	}
	*p = Port(n)
	return nil
}

const fixPort = "use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP"

// ports are WinRM's port for the scheme w uses, and the other scheme's.
func (w *WinRM) ports() (usual, other Port) {
	if w.HTTPS {
		return 5986, 5985
	}
	return 5985, 5986
}

func (w *WinRM) setDefaults() {
	if w.Port == 0 {
		w.Port, _ = w.ports()
	}
	if w.Auth == "" {
		w.Auth = AuthNTLM
	}
}

// fields checks each field on its own.
func (w *WinRM) fields(p *field.Path) (errs field.ErrorList) {
	if v := w.TLSServerName; v != "" {
		if _, err := netip.ParseAddr(v); err != nil && !isDNSName(v) {
			errs = append(errs, Invalid(p.Child("tlsServerName"), Quote(v)+" is not a DNS name or IP address",
				"write the name the machine's certificate is issued to, such as win-2022-a.lab"))
		}
	}
	if a := w.Auth; a != "" && a != AuthNTLM && a != AuthBasic {
		fix := "use ntlm (local or domain accounts, sealed over HTTP) or basic (local accounts, HTTPS only)"
		if l := strings.ToLower(a); l == AuthBasic || l == AuthNTLM {
			fix = "write it in lower case: " + l
		}
		errs = append(errs, Invalid(p.Child("auth"), Quote(a)+" is not an authentication method", fix))
	}
	return errs
}

// cross checks the fields that conflict; from says " (from defaults)" of
// a field the block takes from defaults.
func (w *WinRM) cross(p *field.Path, from func(key string) string) (errs field.ErrorList) {
	ca := w.CABundle.Path != ""
	if w.Insecure && ca {
		errs = append(errs, Invalid(p.Child("insecure"),
			fmt.Sprintf("insecure: true%s and caBundle%s %s are exclusive: insecure skips the certificate check that caBundle is for", from("insecure"), from("caBundle"), Quote(w.CABundle.Path)),
			"keep caBundle to verify the certificate and drop insecure, or drop caBundle to skip the check ("+fixNoDrop+")"))
	}
	if w.HTTPS {
		return errs
	}
	if w.Auth == AuthBasic {
		errs = append(errs, Invalid(p.Child("auth"),
			"auth: basic"+from("auth")+" over HTTP is refused: Basic sends the password in clear text with every message, and a stock WinRM refuses it (AllowUnencrypted=false)",
			"use auth: ntlm (the default), which seals every message over HTTP, or set https: true with the host's CA in caBundle (infra/windows/setup/Prepare-WinRM.ps1 makes an HTTPS listener and prints it)"))
	}
	if w.Insecure {
		errs = append(errs, Invalid(p.Child("insecure"), "insecure: true"+from("insecure")+" with HTTP: insecure only applies to HTTPS", "remove insecure, or set https: true"))
	}
	if ca {
		errs = append(errs, Invalid(p.Child("caBundle"), "caBundle"+from("caBundle")+" with HTTP: a CA bundle only applies to HTTPS",
			"set https: true to verify the certificate, or remove caBundle ("+fixNoDrop+")"))
	}
	if w.TLSServerName != "" {
		errs = append(errs, Invalid(p.Child("tlsServerName"), "tlsServerName"+from("tlsServerName")+" with HTTP: a server name only applies to HTTPS",
			`set https: true, or remove tlsServerName (tlsServerName: "" drops one from defaults)`))
	}
	return errs
}
