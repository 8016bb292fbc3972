package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"
	"github.com/winconform/winconform/infra/windows/remote/framing"
)

// responseGrace is how much longer than the OperationTimeout an answer may
// take before it is a timeout: the machine answers a Receive with no output
// after OperationTimeout, so the client must wait a little longer.
const responseGrace = 15 * time.Second

// maxResponse caps the size of an answer read.
const maxResponse = 64 << 20

// tlsConfig is how the machine's certificate is checked.
func tlsConfig(cfg Config) *tls.Config {
	tlsConf := &tls.Config{
		InsecureSkipVerify: cfg.Insecure, // the caller's explicit choice
		ServerName:         cfg.TLSServerName,
		MinVersion:         tls.VersionTLS12,
	}
	if len(cfg.CABundle) > 0 {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(cfg.CABundle) // checked by withDefaults
		tlsConf.RootCAs = pool
	}
	return tlsConf
}

// basicTransport is the HTTP transport all runs on a machine share with
// Basic authentication (over HTTPS only: see Config.withDefaults).
func basicTransport(cfg Config, tlsConf *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ResponseHeaderTimeout: cfg.OperationTimeout + responseGrace,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
}

// operations names what each WS-Management action does, for errors.
var operations = map[string]string{
	"Create":  "creating the shell",
	"Command": "starting the command",
	"Send":    "sending stdin",
	"Receive": "receiving output",
	"Signal":  "stopping the command",
	"Delete":  "deleting the shell",
}

var actionRE = regexp.MustCompile(`<a:Action[^>]*>\s*([^<\s]+)\s*</a:Action>`)

// consoleModeRE is the console-mode stdin option masterzen/winrm puts in
// every Command.
var consoleModeRE = regexp.MustCompile(`(<w:Option\s+Name="WINRS_CONSOLEMODE_STDIN"\s*>)\s*TRUE\s*(</w:Option>)`)

// pipeMode turns the console-mode stdin of a Command message off: masterzen
// always asks for console mode, in which the end of the stdin stream does
// not reach the process as the end of its input, and the stdin bootstrap
// reads stdin to its end. Ansible's WinRM connection turns it off whenever
// it streams stdin (ansible/ansible lib/ansible/plugins/connection/winrm.py,
// _winrm_exec). It reports false when msg holds no such option.
func pipeMode(msg string) (string, bool) {
	if !consoleModeRE.MatchString(msg) {
		return msg, false
	}
	return consoleModeRE.ReplaceAllString(msg, "${1}FALSE${2}"), true
}

// actionOf returns the short action of a message winrm built: Create,
// Command, Send, Receive, Signal or Delete.
func actionOf(msg string) string {
	m := actionRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	return m[1][strings.LastIndex(m[1], "/")+1:]
}

// runTransport is a winrm.Transporter bound to one run. It replaces winrm's
// own transport, which takes no context, ignores SOAP faults (its deferred
// error assignment targets unnamed results) and returns errors as bare
// strings. Create, Command, Send and Receive go under the run's context;
// Signal and Delete under a cleanup context that outlives it.
type runTransport struct {
	w   *WinRM
	ctx context.Context
	// pipeStdin: the run sends stdin, so its Command asks for pipe-mode
	// stdin (WINRS_CONSOLEMODE_STDIN=FALSE).
	pipeStdin bool

	mu            sync.Mutex
	cleanupCtx    context.Context
	cleanupCancel context.CancelFunc
	// sendErr is the last error of a Send: winrm's stdin writer loses it
	// (it returns io.ErrShortWrite instead).
	sendErr error
}

var _ winrm.Transporter = (*runTransport)(nil)

// Transport is part of winrm.Transporter; the HTTP transport is the WinRM's.
func (t *runTransport) Transport(*winrm.Endpoint) error { return nil }

// Post sends one message and returns the answer, or a *Error.
func (t *runTransport) Post(_ *winrm.Client, msg *soap.SoapMessage) (string, error) {
	body := msg.String()
	action := actionOf(body)
	ctx := t.ctx
	if action == "Signal" || action == "Delete" {
		ctx = t.cleanup()
	}
	if action == "Command" && t.pipeStdin {
		var ok bool
		if body, ok = pipeMode(body); !ok {
			return "", &Error{Op: operations[action], Kind: ErrRemote, Detail: "the Command message holds no WINRS_CONSOLEMODE_STDIN option to turn off"}
		}
	}
	answer, err := t.w.post(ctx, body)
	if err != nil {
		// The error names neither the machine nor the step yet (run adds
		// them): winrm polls again after any Receive error whose text says
		// "OperationTimeout", so only a w:TimedOut fault may say it.
		e := t.w.classify(ctx, err)
		e.Op = operations[action]
		if action == "Create" && e.Kind == ErrConnLost && !t.w.cfg.HTTPS {
			// What an HTTPS listener does to plain HTTP.
			e.Detail += " (if that port is an HTTPS listener, set HTTPS)"
		}
		if e.Op == "" {
			e.Op = "sending " + action
		}
		if action == "Send" {
			t.mu.Lock()
			t.sendErr = e
			t.mu.Unlock()
		}
		return "", e
	}
	return answer, nil
}

// cleanup returns the context for stopping and deleting: it starts, with
// CleanupTimeout, the first time it is asked for, and does not end with the
// run's context.
func (t *runTransport) cleanup() context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cleanupCtx == nil {
		t.cleanupCtx, t.cleanupCancel = context.WithTimeout(context.WithoutCancel(t.ctx), t.w.cfg.CleanupTimeout)
	}
	return t.cleanupCtx
}

// lastSendErr returns the error of the last failed Send.
func (t *runTransport) lastSendErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sendErr
}

// close releases the cleanup context.
func (t *runTransport) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cleanupCancel != nil {
		t.cleanupCancel()
	}
}

// httpError is an answer that is not a SOAP response: its status and the
// start of its body.
type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string {
	s := "HTTP " + strconv.Itoa(e.status) + " " + http.StatusText(e.status)
	if e.body != "" {
		s += ": " + e.body
	}
	return s
}

// post sends a SOAP message and returns the answer of a 200, or an error:
// a transport error, an *httpError, a *schemeError, a *sealError, or a
// *FaultError. With NTLM the message goes sealed, and never with Basic
// credentials; Basic sends the credentials with every message.
func (w *WinRM) post(ctx context.Context, body string) (string, error) {
	var a answer
	var err error
	if w.ntlm != nil {
		a, err = w.ntlm.post(ctx, []byte(body))
	} else {
		a, err = w.postBasic(ctx, body)
	}
	if err != nil {
		return "", err
	}
	soapAnswer := strings.Contains(a.contentType, "application/soap+xml")
	switch {
	case a.status == http.StatusOK && soapAnswer:
		return string(a.body), nil
	case soapAnswer:
		if f := parseFault(a.body); f != nil {
			f.Status = a.status
			return "", f
		}
	}
	return "", &httpError{status: a.status, body: snippet(a.body)}
}

// postBasic sends a SOAP message with Basic credentials.
func (w *WinRM) postBasic(ctx context.Context, body string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", framing.SOAPType)
	req.SetBasicAuth(w.cfg.User, w.cfg.Password)
	a, _, err := send(req, w.http)
	return a, err
}

// snippet is the start of an HTTP body, on one line.
func snippet(data []byte) string {
	s := strings.Join(strings.Fields(string(data)), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// errorf makes a *Error of kind; run adds the machine and the step.
func (w *WinRM) errorf(kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Err: w.redactError(cause), Detail: w.redactor.String(fmt.Sprintf(format, args...))}
}

// redactError returns err, or, when its text holds the password, a plain
// error with the text redacted (the original is dropped, so that no chain
// of Unwrap leads to the password).
func (w *WinRM) redactError(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); w.redactor.String(msg) != msg {
		return errors.New(w.redactor.String(msg))
	}
	return err
}

// isClassified reports whether err is already a *Error.
func isClassified(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
