package wsmantest

import (
	"net/netip"
	"time"
)

// The credentials the server accepts unless WithCredentials says otherwise.
const (
	DefaultUser     = "Administrator"
	DefaultPassword = "wsmantest-Passw0rd!"
)

// config is what the options set.
type config struct {
	addr             string
	user, password   string
	handler          Handler
	intercept        Intercept
	tls              bool
	certNames        []string
	maxReceiveWait   time.Duration
	maxReceiveBytes  int
	waitForStdin     bool
	basic            bool
	allowUnencrypted bool
	firewall         []netip.Prefix
	logf             func(format string, args ...any)
}

func defaultConfig() config {
	return config{
		addr:     "127.0.0.1:0",
		user:     DefaultUser,
		password: DefaultPassword,
	}
}

// Option configures a Server.
type Option func(*config)

// WithHandler scripts the machine (see Handler). Without one, every command
// prints nothing and exits 0.
func WithHandler(h Handler) Option { return func(c *config) { c.handler = h } }

// WithIntercept injects faults at the protocol level (see Intercept).
func WithIntercept(i Intercept) Option { return func(c *config) { c.intercept = i } }

// WithCredentials sets the account the server accepts: a local account
// ("Administrator"), or a domain one ("LAB\\winconform"), for NTLM and,
// when enabled, Basic.
func WithCredentials(user, password string) Option {
	return func(c *config) { c.user, c.password = user, password }
}

// WithBasicAuth enables Basic authentication (winrm/config/service/auth
// Basic=true), off on a stock server. Over HTTP it also needs
// WithAllowUnencrypted: Basic cannot be encrypted.
func WithBasicAuth() Option { return func(c *config) { c.basic = true } }

// WithAllowUnencrypted lets plain (unencrypted) messages through over HTTP
// (winrm/config/service AllowUnencrypted=true), false on a stock server.
func WithAllowUnencrypted() Option { return func(c *config) { c.allowUnencrypted = true } }

// WithTLS serves HTTPS with a certificate, signed by the server's own CA
// (Server.CACertPEM), for DefaultCertNames.
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithCertNames serves HTTPS with a certificate for names (IP addresses and
// DNS names) instead of DefaultCertNames.
func WithCertNames(names ...string) Option {
	return func(c *config) {
		c.tls = true
		c.certNames = append([]string(nil), names...)
	}
}

// WithMismatchedCert serves HTTPS with a certificate, signed by the server's
// CA, for MismatchedCertName only: a client that dials the server's address
// and checks the name must refuse it.
func WithMismatchedCert() Option { return WithCertNames(MismatchedCertName) }

// WithAddr sets the address to listen on; 127.0.0.1:0 by default.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithMaxReceiveWait caps how long a Receive waits for output before it
// answers w:TimedOut; by default it waits the request's OperationTimeout, as
// WinRM does.
func WithMaxReceiveWait(d time.Duration) Option { return func(c *config) { c.maxReceiveWait = d } }

// WithMaxOutputPerReceive caps the output bytes (before base64) one Receive
// response carries; by default only the client's MaxEnvelopeSize limits it.
func WithMaxOutputPerReceive(n int) Option { return func(c *config) { c.maxReceiveBytes = n } }

// WithWaitForStdin makes every command wait for its stdin to be closed before
// it runs, as a process that reads stdin to its end does.
func WithWaitForStdin() Option { return func(c *config) { c.waitForStdin = true } }

// WithLogf logs every request and its answer with logf (t.Logf, say).
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *config) { c.logf = logf }
}

// WithFirewall admits connections only from IPv4 sources in allowed; the
// connection attempts of any other source are dropped unanswered (Linux
// only: a socket filter on the listener drops their SYNs), so a client
// there sees a connect timeout, not a refusal. So Windows Server's
// built-in WinRM HTTP rule for the Public network profile,
// WINRM-HTTP-In-TCP-PUBLIC, admits only the local subnet (Microsoft's
// Enable-PSRemoting documentation, -SkipNetworkProfileCheck): a harness on
// another subnet times out on 5985.
func WithFirewall(allowed ...netip.Prefix) Option {
	return func(c *config) { c.firewall = append([]netip.Prefix(nil), allowed...) }
}
