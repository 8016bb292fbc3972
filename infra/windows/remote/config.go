package remote

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/winconform/winconform/internal/redact"
)

// The authentication methods.
const (
	// AuthNTLM is NTLMv2 through the Negotiate scheme (local or domain
	// accounts), every message sealed (MS-WSMV encrypted messages): what a
	// stock Windows Server accepts, over HTTP on 5985 as over HTTPS. The
	// default.
	AuthNTLM = "ntlm"
	// AuthBasic is HTTP Basic authentication (local accounts), over HTTPS
	// only: off on a stock server (winrm/config/service/auth Basic).
	AuthBasic = "basic"
)

// Defaults for the zero values of Config.
const (
	DefaultHTTPPort         = 5985
	DefaultHTTPSPort        = 5986
	DefaultConnectTimeout   = 10 * time.Second
	DefaultOperationTimeout = 60 * time.Second
	DefaultCleanupTimeout   = 15 * time.Second
	// MaxCommandLine is the longest command line Windows runs (cmd.exe's
	// limit); longer scripts travel on stdin.
	MaxCommandLine = 8191
)

// Config is how to reach one machine over WinRM.
type Config struct {
	// Name names the machine in errors and transcripts; Address when empty.
	Name string
	// Address is the machine's IP address or DNS name.
	Address string
	// Port is WinRM's port: 5985 for HTTP, 5986 for HTTPS when 0.
	Port int
	// HTTPS makes WinRM go over TLS.
	HTTPS bool
	// Insecure skips the check of the machine's certificate.
	Insecure bool
	// CABundle holds the PEM certificates trusted for the machine's
	// certificate; the system's roots when empty.
	CABundle []byte
	// TLSServerName is the name the certificate must have; Address when
	// empty.
	TLSServerName string
	// Auth is AuthNTLM (the default) or AuthBasic (HTTPS only).
	Auth string
	// User and Password are the account WinRM logs in as.
	User, Password string
	// ConnectTimeout bounds connecting (TCP and TLS handshake); 10s when 0.
	ConnectTimeout time.Duration
	// OperationTimeout is the WS-Management OperationTimeout: how long the
	// machine may hold a request (a Receive waiting for output) before it
	// answers; 60s when 0. An answer that takes 15s longer is a timeout.
	OperationTimeout time.Duration
	// CleanupTimeout bounds stopping the command and deleting the shell
	// after a run, even when the run's context has ended; 15s when 0.
	CleanupTimeout time.Duration
	// MaxCommandLine is the longest command line sent as is; scripts whose
	// command line would be longer travel on stdin. MaxCommandLine when 0.
	MaxCommandLine int
}

// String describes the config without its password.
func (c Config) String() string {
	scheme := "http"
	if c.HTTPS {
		scheme = "https"
	}
	return fmt.Sprintf("winrm %s (%s://%s@%s, auth %s, password %s)",
		c.name(), scheme, c.User, net.JoinHostPort(c.Address, strconv.Itoa(c.port())), c.auth(), c.passwordHint())
}

// GoString is String, so that %#v does not print the password either.
func (c Config) GoString() string { return "remote.Config{" + c.String() + "}" }

func (c Config) passwordHint() string {
	if c.Password == "" {
		return "unset"
	}
	return redact.Mask
}

func (c Config) name() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Address
}

func (c Config) port() int {
	switch {
	case c.Port != 0:
		return c.Port
	case c.HTTPS:
		return DefaultHTTPSPort
	default:
		return DefaultHTTPPort
	}
}

func (c Config) auth() string {
	if c.Auth == "" {
		return AuthNTLM
	}
	return strings.ToLower(c.Auth)
}

// withDefaults checks the config and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	var problems []string
	if c.Address == "" {
		problems = append(problems, "the address is empty")
	}
	if c.Port < 0 || c.Port > 65535 {
		problems = append(problems, fmt.Sprintf("port %d is not a TCP port", c.Port))
	}
	if c.User == "" {
		problems = append(problems, "the user is empty")
	}
	switch c.auth() {
	case AuthNTLM:
	case AuthBasic:
		if !c.HTTPS {
			problems = append(problems, "auth basic over HTTP is refused: Basic sends the password in clear text with every message, and a stock WinRM refuses it (AllowUnencrypted=false); use auth ntlm, which seals every message over HTTP, or HTTPS with the machine's CA bundle")
		}
	default:
		problems = append(problems, fmt.Sprintf("auth %q is not %q or %q", c.Auth, AuthNTLM, AuthBasic))
	}
	if len(c.CABundle) > 0 && !x509.NewCertPool().AppendCertsFromPEM(c.CABundle) {
		problems = append(problems, "the CA bundle holds no PEM certificate")
	}
	if len(problems) > 0 {
		return c, errors.New("remote: bad WinRM config for " + c.name() + ": " + strings.Join(problems, "; "))
	}
	c.Name = c.name()
	c.Port = c.port()
	c.Auth = c.auth()
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.OperationTimeout <= 0 {
		c.OperationTimeout = DefaultOperationTimeout
	}
	if c.CleanupTimeout <= 0 {
		c.CleanupTimeout = DefaultCleanupTimeout
	}
	if c.MaxCommandLine <= 0 {
		c.MaxCommandLine = MaxCommandLine
	}
	return c, nil
}

// wsmanDuration renders d as an xs:duration for the OperationTimeout header,
// such as PT60.000S.
func wsmanDuration(d time.Duration) string {
	return fmt.Sprintf("PT%.3fS", d.Seconds())
}
