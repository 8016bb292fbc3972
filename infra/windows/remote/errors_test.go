package remote_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/wsmantest"
)

// assertKind checks err's class, and that it is a *Error of the step.
func assertKind(t *testing.T, err, kind error, step string, says ...string) *remote.Error {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err %v, want %v", err, kind)
	}
	var e *remote.Error
	if !errors.As(err, &e) || e.Step != step || e.Machine != "win-test" {
		t.Fatalf("err %#v, want a *remote.Error of step %q on win-test", err, step)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error does not say %q: %v", s, err)
		}
	}
	return e
}

func TestWrongPasswordIsErrAuth(t *testing.T) {
	srv := wsmantest.New(t)
	w := execFor(t, srv, func(c *remote.Config) { c.Password = "not-the-Passw0rd" })
	start := time.Now()
	_, err := run(t, w, "login", "hostname")
	e := assertKind(t, err, remote.ErrAuth, "login", "authentication failed", `user "`+srv.User()+`"`, "machine win-test", "401")
	if e.Op != "creating the shell" {
		t.Errorf("op %q", e.Op)
	}
	if strings.Contains(err.Error(), "not-the-Passw0rd") {
		t.Errorf("the error holds the password: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if len(srv.ShellIDs()) != 0 {
		t.Error("a shell was created")
	}
}

func TestConnectionRefusedIsErrUnreachable(t *testing.T) {
	w := newWinRM(t, remote.Config{Name: "win-test", Address: "127.0.0.1", Port: closedPort(t), User: "u", Password: "Unused-Pa55", ConnectTimeout: testConnectTimeout})
	_, err := run(t, w, "ping", "hostname")
	assertKind(t, err, remote.ErrUnreachable, "ping", "refused", "creating the shell")
	if errors.Is(err, remote.ErrTimeout) {
		t.Error("a refusal is not a timeout")
	}
	// A stock Windows Server has no HTTPS listener: the error names the
	// script that makes one.
	w = newWinRM(t, remote.Config{Name: "win-test", Address: "127.0.0.1", Port: closedPort(t), HTTPS: true, User: "u", Password: "Unused-Pa55", ConnectTimeout: testConnectTimeout})
	_, err = run(t, w, "ping", "hostname")
	assertKind(t, err, remote.ErrUnreachable, "ping", "refused", "only for HTTP on 5985", "Prepare-WinRM.ps1")
}

func TestUnroutableAddressTimesOutWithinConnectTimeout(t *testing.T) {
	port := blackholePort(t)
	w := newWinRM(t, remote.Config{Name: "win-test", Address: "127.0.0.1", Port: port, User: "u", Password: "Unused-Pa55", ConnectTimeout: testConnectTimeout})
	start := time.Now()
	_, err := run(t, w, "ping", "hostname")
	elapsed := time.Since(start)
	if !errors.Is(err, remote.ErrTimeout) && !errors.Is(err, remote.ErrUnreachable) {
		t.Fatalf("err %v, want a timeout or unreachable", err)
	}
	assertKind(t, err, remote.ErrUnreachable, "ping", "could not connect", testConnectTimeout.String())
	if elapsed > 2*testConnectTimeout {
		t.Errorf("took %v, want about the connect timeout of %v", elapsed, testConnectTimeout)
	}
}

func TestTLSHandshakeThatStallsTimesOut(t *testing.T) {
	w := newWinRM(t, remote.Config{Name: "win-test", Address: "127.0.0.1", Port: silentServer(t), HTTPS: true, User: "u", Password: "Unused-Pa55", ConnectTimeout: testConnectTimeout})
	start := time.Now()
	_, err := run(t, w, "hello", "hostname")
	assertKind(t, err, remote.ErrTimeout, "hello", "TLS handshake")
	if d := time.Since(start); d > 2*testConnectTimeout {
		t.Errorf("took %v", d)
	}
}

func TestServerThatNeverAnswersIsBoundedByTheContext(t *testing.T) {
	w := newWinRM(t, remote.Config{Name: "win-test", Address: "127.0.0.1", Port: silentServer(t), User: "u", Password: "Unused-Pa55", ConnectTimeout: testConnectTimeout})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := w.RunPS(ctx, "hello", "hostname")
	assertKind(t, err, remote.ErrTimeout, "hello", "deadline")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v does not wrap context.DeadlineExceeded", err)
	}
}

func TestTLS(t *testing.T) {
	ok := wsmantest.Reply{Stdout: "over TLS"}
	t.Run("unknown CA", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithTLS(), wsmantest.WithHandler(reply(ok)))
		w := execFor(t, srv, func(c *remote.Config) { c.CABundle = nil })
		_, err := run(t, w, "tls", "x")
		assertKind(t, err, remote.ErrTLS, "tls", "not trusted", "CA bundle", "insecure")
	})
	t.Run("right CA", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithTLS(), wsmantest.WithHandler(reply(ok)))
		res, err := run(t, execFor(t, srv), "tls", "x")
		if err != nil || res.Stdout != "over TLS" {
			t.Fatalf("err %v result %+v", err, res)
		}
		assertShellsDeleted(t, srv)
	})
	t.Run("name mismatch", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithMismatchedCert(), wsmantest.WithHandler(reply(ok)))
		_, err := run(t, execFor(t, srv), "tls", "x")
		assertKind(t, err, remote.ErrTLS, "tls", "does not match", "mismatch", "127.0.0.1", wsmantest.MismatchedCertName)
	})
	t.Run("name given", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithMismatchedCert(), wsmantest.WithHandler(reply(ok)))
		w := execFor(t, srv, func(c *remote.Config) { c.TLSServerName = wsmantest.MismatchedCertName })
		if _, err := run(t, w, "tls", "x"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("insecure", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithMismatchedCert(), wsmantest.WithHandler(reply(ok)))
		w := execFor(t, srv, func(c *remote.Config) { c.CABundle, c.Insecure = nil, true })
		if res, err := run(t, w, "tls", "x"); err != nil || res.Stdout != "over TLS" {
			t.Fatalf("err %v result %+v", err, res)
		}
	})
	t.Run("HTTPS to an HTTP port", func(t *testing.T) {
		srv := wsmantest.New(t)
		w := execFor(t, srv, func(c *remote.Config) { c.HTTPS = true })
		_, err := run(t, w, "tls", "x")
		assertKind(t, err, remote.ErrTLS, "tls", "did not answer with TLS")
	})
}

func TestSOAPFaultOfACommand(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Fault: wsmantest.ErrorFault("The disk is full.")})))
	_, err := run(t, execFor(t, srv), "copy", "Copy-Item a b")
	e := assertKind(t, err, remote.ErrRemote, "copy", "The disk is full.", "w:InternalError", "receiving output")
	var fault *remote.FaultError
	if !errors.As(err, &fault) || fault.Subcode != "w:InternalError" || fault.Status != 500 || fault.WSManCode == "" {
		t.Errorf("fault %+v", fault)
	}
	if e.Op != "receiving output" {
		t.Errorf("op %q", e.Op)
	}
	assertShellsDeleted(t, srv)
}

func TestFaultOnCreate(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithIntercept(wsmantest.FaultAction(wsmantest.ActionCreate, wsmantest.ErrorFault("The maximum number of concurrent shells for this user has been exceeded."))))
	_, err := run(t, execFor(t, srv), "create", "x")
	assertKind(t, err, remote.ErrRemote, "create", "creating the shell", "maximum number of concurrent shells")
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after a failed Create, want 1", n)
	}
}

func TestFaultOnCommandStillDeletesTheShell(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithIntercept(wsmantest.FaultAction(wsmantest.ActionCommand, wsmantest.ErrorFault("Access is denied."))))
	_, err := run(t, execFor(t, srv), "start", "x")
	assertKind(t, err, remote.ErrRemote, "start", "starting the command", "Access is denied.")
	assertShellsDeleted(t, srv)
}

func TestTimedOutFaultOnCreateIsATimeout(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithIntercept(wsmantest.FaultAction(wsmantest.ActionCreate, wsmantest.TimedOutFault())))
	_, err := run(t, execFor(t, srv), "create", "x")
	assertKind(t, err, remote.ErrTimeout, "create", "OperationTimeout")
	if !errors.Is(err, remote.ErrRemote) {
		t.Error("a fault is also an ErrRemote")
	}
}

func TestDroppedConnection(t *testing.T) {
	t.Run("during Receive", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Drop: true})))
		_, err := run(t, execFor(t, srv), "drop", "x")
		assertKind(t, err, remote.ErrConnLost, "drop", "receiving output", "broke")
		assertShellsDeleted(t, srv)
	})
	t.Run("of the Create", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithIntercept(wsmantest.DropRequest(1)))
		_, err := run(t, execFor(t, srv), "drop", "x")
		assertKind(t, err, remote.ErrConnLost, "drop", "creating the shell")
	})
	t.Run("of the Delete", func(t *testing.T) {
		srv := wsmantest.New(t, wsmantest.WithIntercept(func(r wsmantest.Request) wsmantest.Injection {
			return wsmantest.Injection{Drop: r.Action == wsmantest.ActionDelete}
		}), wsmantest.WithHandler(reply(wsmantest.Reply{Stdout: "fine"})))
		w := execFor(t, srv)
		res, err := run(t, w, "cleanup", "x")
		if err != nil || res.Stdout != "fine" {
			t.Fatalf("a failed Delete failed the step: %v", err)
		}
		entries := w.Transcript().Entries()
		if len(entries) != 1 || !strings.Contains(entries[0].Cleanup, "deleting the shell") {
			t.Errorf("the transcript does not note the failed Delete: %+v", entries)
		}
	})
}

func TestStdinFailureStopsTheRun(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithIntercept(wsmantest.FaultAction(wsmantest.ActionSend, wsmantest.ErrorFault("stdin refused"))))
	start := time.Now()
	_, err := run(t, execFor(t, srv), "long", strings.Repeat("Write-Output 1\n", 2000))
	assertKind(t, err, remote.ErrRemote, "long", "sending stdin", "stdin refused")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v: the run waited for output of a command that never got its script", d)
	}
	assertShellsDeleted(t, srv)
}

// NTLM never falls back to Basic (a stock server offers none, and Basic
// would send the password in clear over HTTP): a listener that does not
// offer Negotiate is an ErrAuth that says so.
func TestNTLMAgainstAListenerWithoutNegotiate(t *testing.T) {
	var sawBasic atomic.Bool
	basicOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := r.BasicAuth(); ok {
			sawBasic.Store(true)
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="WSMAN"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer basicOnly.Close()
	addr := basicOnly.Listener.Addr().(*net.TCPAddr)
	w := newWinRM(t, remote.Config{Name: "win-test", Address: "127.0.0.1", Port: addr.Port, Auth: "NTLM", User: "u", Password: "Pa55-word", ConnectTimeout: fakeConnectTimeout})
	_, err := run(t, w, "ping", "x")
	assertKind(t, err, remote.ErrAuth, "ping", "does not offer NTLM", `Basic realm="WSMAN"`)
	if sawBasic.Load() {
		t.Error("the NTLM client sent Basic credentials")
	}
}

// Basic goes only over HTTPS, to a listener that enables it.
func TestBasicOverHTTPS(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithTLS(), wsmantest.WithBasicAuth(), wsmantest.WithHandler(reply(wsmantest.Reply{Stdout: "hi"})))
	w := execFor(t, srv, func(c *remote.Config) { c.Auth = remote.AuthBasic })
	if res, err := run(t, w, "basic", "x"); err != nil || res.Stdout != "hi" {
		t.Fatalf("err %v result %+v", err, res)
	}
	for _, r := range srv.Requests() {
		if r.Auth != "Basic" || r.Sealed {
			t.Errorf("request #%d %s: Authorization %q, sealed %v", r.Seq, r.Action, r.Auth, r.Sealed)
		}
	}
	// A stock listener over HTTPS does not take Basic.
	stock := wsmantest.New(t, wsmantest.WithTLS())
	_, err := run(t, execFor(t, stock, func(c *remote.Config) { c.Auth = remote.AuthBasic }), "basic", "x")
	assertKind(t, err, remote.ErrAuth, "basic", "basic auth", "Basic=")
}

// NTLM over HTTPS seals too, and binds the context to the machine's
// certificate (channel bindings, which the stand-in checks).
func TestNTLMOverHTTPS(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithTLS(), wsmantest.WithHandler(reply(wsmantest.Reply{Stdout: "hi"})))
	w := execFor(t, srv)
	if res, err := run(t, w, "ntlm", "x"); err != nil || res.Stdout != "hi" {
		t.Fatalf("err %v result %+v", err, res)
	}
	assertSealed(t, srv)
}

func TestConfigIsChecked(t *testing.T) {
	tests := map[string]remote.Config{
		"no address":      {User: "u"},
		"no user":         {Address: "h"},
		"bad auth":        {Address: "h", User: "u", Auth: "kerberos"},
		"basic over HTTP": {Address: "h", User: "u", Auth: "basic"},
		"bad port":        {Address: "h", User: "u", Port: 70000},
		"bad CA":          {Address: "h", User: "u", CABundle: []byte("not PEM")},
	}
	for name, cfg := range tests {
		cfg.Password = "Secret-123"
		if _, err := remote.NewWinRM(cfg); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "Secret-123") {
			t.Errorf("%s: the error holds the password: %v", name, err)
		}
	}
	w, err := remote.NewWinRM(remote.Config{Address: "10.1.2.3", User: "u", HTTPS: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != "10.1.2.3" || !strings.Contains(w.String(), "https://10.1.2.3:5986/wsman") {
		t.Errorf("defaults: %s %s", w.Name(), w)
	}
	w6, err := remote.NewWinRM(remote.Config{Address: "fd00::1", User: "u"})
	if err != nil || !strings.Contains(w6.String(), "http://[fd00::1]:5985/wsman") {
		t.Errorf("IPv6: %v %s", err, w6)
	}
}

func TestHTTPToAnHTTPSPort(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithTLS())
	w := execFor(t, srv, func(c *remote.Config) { c.HTTPS = false })
	_, err := run(t, w, "plain", "x")
	// Go's TLS server resets the connection (http.sys does the same); only
	// net/http's ServeTLS answers 400, which gives ErrTLS.
	if !errors.Is(err, remote.ErrTLS) {
		assertKind(t, err, remote.ErrConnLost, "plain", "set HTTPS")
	}
}

// Windows Server's built-in WinRM HTTP rule for the Public network profile
// (WINRM-HTTP-In-TCP-PUBLIC) admits only the local subnet (Microsoft's
// Enable-PSRemoting documentation, -SkipNetworkProfileCheck): a harness on
// another subnet gets no answer at all, a connect timeout, not a 401 nor a
// refusal. The stand-in's firewall drops this client's SYNs (it dials from
// 127.0.0.1) when it admits only 127.0.0.2; the error says which rule and
// how to open it. Admitted, the same client reaches it.
func TestHTTPFromOutsideTheFirewallsRangeTimesOutNamingTheRule(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in's firewall is a Linux socket filter")
	}
	srv := wsmantest.New(t, wsmantest.WithFirewall(netip.MustParsePrefix("127.0.0.2/32")))
	w := execFor(t, srv, func(c *remote.Config) { c.ConnectTimeout = testConnectTimeout })
	start := time.Now()
	_, err := run(t, w, "ping", "hostname")
	assertKind(t, err, remote.ErrUnreachable, "ping", "could not connect", "WINRM-HTTP-In-TCP-PUBLIC", "Prepare-WinRM.ps1 -HttpFrom")
	if d := time.Since(start); d > 2*testConnectTimeout {
		t.Errorf("took %v, want about the connect timeout of %v", d, testConnectTimeout)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the stand-in saw %d requests through its firewall", n)
	}

	srv = wsmantest.New(t, wsmantest.WithFirewall(netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("127.0.0.0/8")))
	if _, err := run(t, execFor(t, srv), "ping", "hostname"); err != nil {
		t.Fatalf("from inside the firewall's range: %v", err)
	}
}
