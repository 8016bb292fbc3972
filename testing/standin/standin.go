// Package standin opens the WS-Management stand-in
// (testing/wsmantest: WinRM as a stock Windows Server
// speaks it, NTLM and sealed messages, the unauthenticated Identify) to
// code outside infra/windows, which the internal rule keeps from it: the
// VM lifecycle's tests (infra/vms/lifecycle), whose machines answer WinRM
// through it. A machine that answers through the stand-in is a simulated
// machine, never a Windows one: it cannot answer windows.IdentifyScript.
package standin

import (
	"testing"

	"github.com/winconform/winconform/testing/wsmantest"
)

// Server is a running stand-in (see wsmantest.Server).
type Server = wsmantest.Server

// Option configures a Server.
type Option = wsmantest.Option

// The options of wsmantest this package passes on.
var (
	// WithAddr sets the address to listen on (127.0.0.1:0 by default).
	WithAddr = wsmantest.WithAddr
	// WithCredentials sets the account the server accepts.
	WithCredentials = wsmantest.WithCredentials
	// WithTLS serves HTTPS, with the server's own CA (Server.CACertPEM).
	WithTLS = wsmantest.WithTLS
	// WithHandler scripts the machine: a model that answers its commands
	// (the Hyper-V host of package hypervhost).
	WithHandler = wsmantest.WithHandler
)

// The account the server accepts unless WithCredentials says otherwise.
const (
	DefaultUser     = wsmantest.DefaultUser
	DefaultPassword = wsmantest.DefaultPassword
)

// New starts a Server for the test and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server { return wsmantest.New(t, opts...) }

// Start starts a Server; Close stops it.
func Start(opts ...Option) (*Server, error) { return wsmantest.Start(opts...) }

// Identifies is how many unauthenticated Identify requests s answered.
func Identifies(s *Server) int { return s.Count(wsmantest.ActionIdentify) }
