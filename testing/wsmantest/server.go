package wsmantest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote/framing"
)

// maxRequestSize is the largest request the server reads: WinRM's default
// MaxEnvelopeSizekb of 500 KiB.
const maxRequestSize = 500 * 1024

// Server is an in-process WS-Management endpoint. Its methods are safe for
// concurrent use.
type Server struct {
	cfg     config
	certs   *serverCerts
	ln      net.Listener
	srv     *http.Server
	url     string
	host    string
	port    int
	machine string

	ctx       context.Context
	cancel    context.CancelFunc
	inflight  sync.WaitGroup
	closeOnce sync.Once

	mu         sync.Mutex
	closed     bool
	handler    Handler
	intercept  Intercept
	requests   []*Request
	shells     map[string]*shell
	shellOrder []string
	calls      []*Call
	handshakes int
	// idle are the connections waiting for a request.
	idle map[net.Conn]bool
}

// New starts a Server for the test and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("wsmantest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a Server; Close stops it.
func Start(opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	var lc net.ListenConfig
	network := "tcp"
	if cfg.firewall != nil {
		lc.Control, network = firewallControl(cfg.firewall), "tcp4"
	}
	ln, err := lc.Listen(context.Background(), network, cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.addr, err)
	}
	host, portStr, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portStr)

	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:       cfg,
		ln:        ln,
		host:      host,
		port:      port,
		machine:   host,
		ctx:       ctx,
		cancel:    cancel,
		handler:   cfg.handler,
		intercept: cfg.intercept,
		shells:    map[string]*shell{},
		idle:      map[net.Conn]bool{},
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext:       connContext,
		ConnState:         s.connState,
		// TLS handshake failures are what some tests are about; keep them
		// out of the test log.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	scheme := "http"
	if cfg.tls {
		names := cfg.certNames
		if len(names) == 0 {
			names = DefaultCertNames
		}
		certs, err := newServerCerts(names)
		if err != nil {
			ln.Close()
			cancel()
			return nil, fmt.Errorf("making certificates: %w", err)
		}
		s.certs = certs
		s.srv.TLSConfig = &tls.Config{
			Certificates: []tls.Certificate{certs.cert},
			// WinRM speaks HTTP/1.1; it also lets the server hijack
			// connections to drop them.
			NextProtos: []string{"http/1.1"},
			MinVersion: tls.VersionTLS12,
		}
		scheme = "https"
		ln = tls.NewListener(ln, s.srv.TLSConfig)
	}
	s.url = scheme + "://" + net.JoinHostPort(host, portStr) + "/wsman"
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server: it cancels every command's context, closes the
// listener and the connections, and waits for the requests being answered.
// Handlers still running are not waited for.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		_ = s.srv.Close()
		s.inflight.Wait()
	})
}

// connState keeps the set of idle connections.
func (s *Server) connState(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == http.StateIdle {
		s.idle[c] = true
	} else {
		delete(s.idle, c)
	}
}

// CloseIdleConnections closes the keep-alive connections waiting for a
// request, as HTTP.sys does after its idle connection timeout (120 s by
// default): their NTLM contexts go with them. It returns how many it
// closed.
func (s *Server) CloseIdleConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.idle)
	for c := range s.idle {
		_ = c.Close()
		delete(s.idle, c)
	}
	return n
}

// URL is the endpoint's URL, such as http://127.0.0.1:40123/wsman.
func (s *Server) URL() string { return s.url }

// Host is the address the server listens on, such as 127.0.0.1.
func (s *Server) Host() string { return s.host }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// HTTPS reports whether the server serves HTTPS.
func (s *Server) HTTPS() bool { return s.certs != nil }

// CACertPEM is the PEM certificate of the CA that signed the server's
// certificate, nil for HTTP.
func (s *Server) CACertPEM() []byte {
	if s.certs == nil {
		return nil
	}
	return append([]byte(nil), s.certs.caPEM...)
}

// BasicAuth reports whether the server accepts Basic authentication
// (WithBasicAuth).
func (s *Server) BasicAuth() bool { return s.cfg.basic }

// User is the user name the server accepts.
func (s *Server) User() string { return s.cfg.user }

// Password is the password the server accepts.
func (s *Server) Password() string { return s.cfg.password }

// SetHandler replaces the handler for the commands that run from now on.
func (s *Server) SetHandler(h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// SetIntercept replaces the intercept for the requests that arrive from now on.
func (s *Server) SetIntercept(i Intercept) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = i
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.logf != nil {
		s.cfg.logf("wsmantest: "+format, args...)
	}
}

// enter counts a request in, unless the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight.Add(1)
	return true
}

// outcome is how the server answers a request.
type outcome struct {
	// action is the response's action URI.
	action string
	body   string
	fault  *Fault
	drop   bool
	// signatureSize is Injection.SignatureSize.
	signatureSize int
	// abandoned: the client went away, or the server is closing.
	abandoned bool
}

// ServeHTTP answers one WS-Management request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	defer s.inflight.Done()
	if r.URL.Path != "/wsman" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxRequestSize+1))
	if err != nil {
		return // the client went away
	}
	if s.identify(w, r, data) {
		return
	}
	auth := s.authenticate(r, data)
	// The empty-bodied requests of an NTLM handshake are not
	// WS-Management requests: they are answered here, not recorded.
	if auth.done && len(data) == 0 {
		s.answerAuth(w, auth)
		return
	}
	contentType := r.Header.Get("Content-Type")
	sealed := framing.IsEncrypted(contentType)
	var unsealErr error
	if sealed && !auth.done {
		data, contentType, unsealErr = unsealRequest(auth.session, contentType, data)
	}
	var env *envelope
	var parseErr error
	if !sealed || (!auth.done && unsealErr == nil) {
		env, parseErr = parseEnvelope(data)
	}
	rec := s.record(env, auth, sealed)
	switch {
	case !auth.done && auth.session != nil && !sealed && r.TLS == nil && !s.cfg.allowUnencrypted:
		// An NTLM-authenticated plain message over HTTP: refused.
		s.logf("#%d: a plain message over HTTP, AllowUnencrypted is false", rec.Seq)
		auth = authOutcome{done: true, status: http.StatusUnauthorized}
	case !auth.done && unsealErr != nil:
		s.logf("#%d: %v", rec.Seq, unsealErr)
		w.WriteHeader(http.StatusBadRequest)
		s.finish(rec, outcome{}, http.StatusBadRequest, 0)
		return
	}
	if auth.done {
		s.answerAuth(w, auth)
		s.finish(rec, outcome{}, auth.status, 0)
		return
	}
	var out outcome
	switch {
	case !isSOAP(contentType):
		w.WriteHeader(http.StatusUnsupportedMediaType)
		s.finish(rec, outcome{}, http.StatusUnsupportedMediaType, 0)
		return
	case len(data) > maxRequestSize:
		out.fault = badRequestFault(fmt.Sprintf("The request is larger than the maximum envelope size of %d bytes.", maxRequestSize))
	case parseErr != nil:
		out.fault = badRequestFault(parseErr.Error())
	default:
		out = s.intercepted(r.Context(), rec)
		if out.fault == nil && !out.drop && !out.abandoned {
			size := out.signatureSize
			out = s.dispatch(r.Context(), env, rec, r.RemoteAddr)
			out.signatureSize = size
		}
	}
	var seal *ntlmSession
	if sealed {
		seal = auth.session
	}
	s.respond(w, env, rec, out, seal)
}

// answerAuth answers a request that authentication decided on.
func (s *Server) answerAuth(w http.ResponseWriter, auth authOutcome) {
	if auth.status == http.StatusUnauthorized {
		if auth.challenge != "" {
			w.Header().Set("WWW-Authenticate", auth.challenge)
		} else {
			s.offerSchemes(w.Header())
		}
	}
	// What WinRM answers: the status, no body.
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(auth.status)
}

// unsealRequest takes an encrypted message apart and unseals it with the
// connection's NTLM session.
func unsealRequest(sess *ntlmSession, contentType string, body []byte) ([]byte, string, error) {
	if sess == nil {
		return nil, "", fmt.Errorf("an encrypted message on a connection with no NTLM session")
	}
	m, err := framing.Parse(contentType, body)
	if err != nil {
		return nil, "", fmt.Errorf("the encrypted message does not read: %v", err)
	}
	msg, err := sess.unseal(m.Sealed, m.Signature)
	if err != nil {
		return nil, "", fmt.Errorf("the encrypted message does not unseal: %v", err)
	}
	return msg, m.OriginalType, nil
}

// isSOAP reports whether a Content-Type is SOAP 1.2's.
func isSOAP(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/soap+xml")
}

// intercepted applies the intercept to a request.
func (s *Server) intercepted(ctx context.Context, rec *Request) outcome {
	s.mu.Lock()
	intercept := s.intercept
	snapshot := *rec
	s.mu.Unlock()
	if intercept == nil {
		return outcome{}
	}
	inj := intercept(snapshot)
	if inj.Delay > 0 {
		t := time.NewTimer(inj.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return outcome{abandoned: true}
		case <-s.ctx.Done():
			return outcome{abandoned: true}
		}
	}
	return outcome{fault: inj.Fault, drop: inj.Drop, signatureSize: inj.SignatureSize}
}

// respond writes the answer to a request and records it.
func (s *Server) respond(w http.ResponseWriter, env *envelope, rec *Request, out outcome, seal *ntlmSession) {
	if out.drop || out.abandoned {
		s.finish(rec, out, 0, 0)
		dropConnection(w)
		return
	}
	relatesTo := ""
	if env != nil {
		relatesTo = env.Header.MessageID
	}
	status := http.StatusOK
	var msg string
	if out.fault != nil {
		status = out.fault.status()
		msg = soapEnvelope(faultAction, relatesTo, out.fault.body(s.machine))
	} else {
		msg = soapEnvelope(out.action, relatesTo, out.body)
	}
	body := []byte(msg)
	contentType := soapContentType
	if seal != nil {
		// An encrypted request gets an encrypted answer, faults too.
		sealed, signature := seal.seal(body)
		if n := out.signatureSize; n > 0 {
			signature = append(signature, make([]byte, max(0, n-len(signature)))...)[:n]
		}
		body, contentType = framing.Frame(soapContentType, signature, sealed), EncryptedContentType
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
	s.finish(rec, out, status, len(msg))
}

// dropConnection closes the request's connection without answering.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Not hijackable: make net/http abort the response instead.
	panic(http.ErrAbortHandler)
}

// record notes a request's arrival.
func (s *Server) record(env *envelope, auth authOutcome, sealed bool) *Request {
	rec := &Request{Time: time.Now(), User: auth.user, Auth: auth.scheme, Sealed: sealed}
	if env != nil {
		h := &env.Header
		rec.ActionURI = h.Action
		rec.Action = actionOf(h.Action)
		rec.ShellID = h.selector("ShellId")
		rec.OperationTimeout = h.operationTimeout()
		rec.MaxEnvelopeSize = h.maxEnvelopeSize()
		rec.Options = h.options()
		b := &env.Body
		switch {
		case b.CommandLine != nil:
			rec.CommandLine = joinCommandLine(b.CommandLine.Command, b.CommandLine.Arguments)
		case b.Send != nil:
			for _, st := range b.Send.Streams {
				rec.CommandID = st.CommandID
				data, _ := decodeStream(st.Data)
				rec.Stdin = append(rec.Stdin, data...)
				rec.End = rec.End || st.End == "true"
			}
		case b.Receive != nil:
			rec.CommandID = b.Receive.DesiredStream.CommandID
		case b.Signal != nil:
			rec.CommandID = b.Signal.CommandID
			rec.Signal = b.Signal.Code
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Seq = len(s.requests) + 1
	s.requests = append(s.requests, rec)
	return rec
}

// finish records how a request was answered.
func (s *Server) finish(rec *Request, out outcome, status, size int) {
	s.mu.Lock()
	rec.Status = status
	rec.ResponseBytes = size
	rec.Dropped = out.drop
	rec.Abandoned = out.abandoned
	rec.Unauthorized = status == http.StatusUnauthorized
	if out.fault != nil {
		rec.Fault = out.fault.Subcode
	}
	r := *rec
	s.mu.Unlock()
	switch {
	case r.Abandoned:
		s.logf("#%d %s shell=%s command=%s: abandoned", r.Seq, r.Action, r.ShellID, r.CommandID)
	case r.Dropped:
		s.logf("#%d %s shell=%s command=%s: connection dropped", r.Seq, r.Action, r.ShellID, r.CommandID)
	case r.Fault != "":
		s.logf("#%d %s shell=%s command=%s: %d fault %s", r.Seq, r.Action, r.ShellID, r.CommandID, r.Status, r.Fault)
	default:
		s.logf("#%d %s shell=%s command=%s: %d", r.Seq, r.Action, r.ShellID, r.CommandID, r.Status)
	}
}
