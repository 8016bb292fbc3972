package remote

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/bodgit/ntlmssp"
	"github.com/winconform/winconform/infra/windows/remote/framing"
)

// NTLM with message encryption, as a stock Windows Server's WinRM wants
// it (Negotiate on, Basic off, AllowUnencrypted=false): the NTLMv2
// handshake goes through the Negotiate scheme, and every message after it
// is an encrypted message (MS-WSMV 2.2.9.1.1) sealed with the handshake's
// session (MS-NLMP 3.4). The NTLM client and its SecuritySession (keys,
// RC4 and sequence numbers) are github.com/bodgit/ntlmssp's; the framing
// is MS-WSMV's, as pywinrm's encryption.py and masterzen/winrm's
// encryption.go write it.
//
// An NTLM context is bound to the TCP connection it was made on (HTTP.sys
// keeps it per connection), and its RC4 states and sequence numbers must
// see the messages in order. One WinRM serves concurrent runs, and a run
// long-polls Receive while it sends stdin, so each request stream gets its
// own context on its own connection: a small pool of sealed connections,
// each used by one request at a time. A connection whose request failed
// half-way is dropped (its state is unknown); one the machine closed while
// idle is re-authenticated on the next request.

// maxIdleSealed is how many idle sealed connections a WinRM keeps.
const maxIdleSealed = 4

// ntlmPool is the sealed connections to one machine.
type ntlmPool struct {
	cfg          Config
	url          string
	user, domain string
	newTransport func() *http.Transport

	mu   sync.Mutex
	idle []*sealedConn
}

func newNTLMPool(cfg Config, url string, newTransport func() *http.Transport) *ntlmPool {
	p := &ntlmPool{cfg: cfg, url: url, user: cfg.User, newTransport: newTransport}
	// DOMAIN\user names a domain account; user and user@domain (a UPN, which
	// NTLM sends whole with no domain) a local or domain one.
	if d, u, ok := strings.Cut(cfg.User, `\`); ok {
		p.domain, p.user = d, u
	}
	return p
}

// sealedConn is one NTLM context on its own keep-alive connection: an
// HTTP transport that opens at most one connection at a time.
type sealedConn struct {
	http    *http.Client
	tr      *http.Transport
	session *ntlmssp.SecuritySession
	// bound is the TCP connection the context was made on.
	bound net.Conn
	// broken: a request failed half-way; the context's state is unknown.
	broken bool
}

func (p *ntlmPool) get() *sealedConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c
	}
	tr := p.newTransport()
	tr.MaxConnsPerHost = 1
	tr.MaxIdleConnsPerHost = 1
	return &sealedConn{tr: tr, http: &http.Client{Transport: tr}}
}

func (p *ntlmPool) put(c *sealedConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.broken || len(p.idle) >= maxIdleSealed {
		c.tr.CloseIdleConnections()
		return
	}
	p.idle = append(p.idle, c)
}

// close closes the idle connections.
func (p *ntlmPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.tr.CloseIdleConnections()
	}
	p.idle = nil
}

// answer is an HTTP answer, unsealed.
type answer struct {
	status      int
	contentType string
	body        []byte
}

// post sends body sealed on a connection of the pool and returns the
// answer, unsealed.
func (p *ntlmPool) post(ctx context.Context, body []byte) (answer, error) {
	c := p.get()
	a, err := p.roundTrip(ctx, c, body)
	if err != nil {
		c.broken = true
	}
	p.put(c)
	return a, err
}

// roundTrip sends one sealed message on c, authenticating c first when it
// has no context, or when the connection its context was bound to is gone
// (the machine answers a message on a connection without a context with
// 401, without acting on it: it is sent again once).
func (p *ntlmPool) roundTrip(ctx context.Context, c *sealedConn, body []byte) (answer, error) {
	for attempt := 0; ; attempt++ {
		if c.session == nil {
			if err := p.handshake(ctx, c); err != nil {
				return answer{}, err
			}
		}
		sealed, signature, err := c.session.Wrap(body)
		if err != nil {
			return answer{}, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(framing.Frame(framing.SOAPType, signature, sealed)))
		if err != nil {
			return answer{}, err
		}
		req.Header.Set("Content-Type", framing.ContentType)
		resp, conn, err := send(req, c.http)
		if err != nil {
			return answer{}, err
		}
		if resp.status == http.StatusUnauthorized && conn != c.bound && attempt == 0 {
			c.session = nil
			continue
		}
		if !framing.IsEncrypted(resp.contentType) {
			// Windows seals its faults too; a plain answer is a refusal
			// from before WinRM read the message (401, 400...). The message
			// was sealed but not unsealed: the two sides' RC4 states and
			// sequence numbers no longer agree, and the context is done.
			c.broken = true
			return resp, nil
		}
		msg, origType, err := unsealAnswer(c.session, resp.contentType, resp.body)
		if err != nil {
			return answer{}, err
		}
		return answer{status: resp.status, contentType: origType, body: msg}, nil
	}
}

// handshake makes an NTLM context on c's connection: NEGOTIATE_MESSAGE,
// CHALLENGE_MESSAGE, AUTHENTICATE_MESSAGE, each leg an empty POST, as
// pywinrm opens its encryption context. Over HTTPS the
// AUTHENTICATE_MESSAGE carries channel bindings for the machine's
// certificate (RFC 5929 tls-server-end-point), which a listener with
// CbtHardeningLevel=Strict requires.
func (p *ntlmPool) handshake(ctx context.Context, c *sealedConn) error {
	c.session, c.bound = nil, nil
	client, err := ntlmssp.NewClient(ntlmssp.SetUserInfo(p.user, p.cfg.Password), ntlmssp.SetDomain(p.domain), ntlmssp.SetVersion(ntlmssp.DefaultVersion()))
	if err != nil {
		return err
	}
	negotiate, err := client.Authenticate(nil, nil)
	if err != nil {
		return err
	}
	first, conn, err := p.authLeg(ctx, c, negotiate)
	if err != nil {
		return err
	}
	challenge, ok := negotiateToken(first.header)
	if first.status != http.StatusUnauthorized || !ok {
		if first.status == http.StatusUnauthorized {
			return &schemeError{offered: first.header.Values("WWW-Authenticate")}
		}
		return &httpError{status: first.status, body: snippet(first.body)}
	}
	if len(challenge) < 24 {
		return &httpError{status: first.status, body: "an NTLM challenge too short to read"}
	}
	if flags := binary.LittleEndian.Uint32(challenge[20:24]); flags&ntlmSeal == 0 || flags&ntlmESS == 0 {
		return &sealError{msg: fmt.Sprintf("the machine did not agree to NTLM sealing with extended session security (challenge flags %#08x)", flags)}
	}
	var bindings *ntlmssp.ChannelBindings
	if first.tls != nil && len(first.tls.PeerCertificates) > 0 {
		bindings = channelBindings(first.tls.PeerCertificates[0])
	}
	authenticate, err := client.Authenticate(challenge, bindings)
	if err != nil {
		return err
	}
	second, conn2, err := p.authLeg(ctx, c, authenticate)
	if err != nil {
		return err
	}
	switch {
	case second.status == http.StatusUnauthorized:
		return &httpError{status: second.status}
	case second.status/100 != 2:
		return &httpError{status: second.status, body: snippet(second.body)}
	case conn2 != conn:
		return &sealError{msg: "the connection closed during the NTLM handshake"}
	case client.SecuritySession() == nil:
		return &sealError{msg: "the NTLM handshake made no session to seal with"}
	}
	c.session, c.bound = client.SecuritySession(), conn2
	return nil
}

// authResponse is an answer to a leg of the handshake.
type authResponse struct {
	status int
	header http.Header
	body   []byte
	tls    *tls.ConnectionState
}

// authLeg sends one leg of the handshake: an empty POST with an NTLM
// message in the Negotiate scheme (never Basic).
func (p *ntlmPool) authLeg(ctx context.Context, c *sealedConn, token []byte) (authResponse, net.Conn, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, http.NoBody)
	if err != nil {
		return authResponse{}, nil, err
	}
	req.Header.Set("Content-Type", framing.SOAPType)
	req.Header.Set("Authorization", "Negotiate "+base64.StdEncoding.EncodeToString(token))
	var conn net.Conn
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { conn = i.Conn }}))
	resp, err := c.http.Do(req)
	if err != nil {
		return authResponse{}, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return authResponse{}, nil, err
	}
	return authResponse{status: resp.StatusCode, header: resp.Header, body: body, tls: resp.TLS}, conn, nil
}

// send sends req and reads the answer, reporting the connection it went on.
func send(req *http.Request, client *http.Client) (answer, net.Conn, error) {
	var conn net.Conn
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { conn = i.Conn }}))
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return answer{}, nil, err
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}, conn, nil
}

// NTLM negotiate flags read from the challenge (MS-NLMP 2.2.2.5).
const (
	ntlmSeal uint32 = 1 << 5
	ntlmESS  uint32 = 1 << 19
)

// negotiateToken is the NTLM message of a "WWW-Authenticate: Negotiate
// <base64>" header.
func negotiateToken(h http.Header) ([]byte, bool) {
	for _, v := range h.Values("WWW-Authenticate") {
		scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
		if !ok || !strings.EqualFold(scheme, "Negotiate") {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
		if err == nil {
			return b, true
		}
	}
	return nil, false
}

// channelBindings are the channel bindings of a TLS server certificate:
// "tls-server-end-point:" and the certificate's hash, SHA-256 for MD5 and
// SHA-1 signatures, else the signature's hash (RFC 5929 4.1).
func channelBindings(cert *x509.Certificate) *ntlmssp.ChannelBindings {
	var h crypto.Hash
	switch cert.SignatureAlgorithm {
	case x509.SHA384WithRSA, x509.ECDSAWithSHA384, x509.SHA384WithRSAPSS:
		h = crypto.SHA384
	case x509.SHA512WithRSA, x509.ECDSAWithSHA512, x509.SHA512WithRSAPSS:
		h = crypto.SHA512
	default:
		h = crypto.SHA256
	}
	d := h.New()
	d.Write(cert.Raw)
	return &ntlmssp.ChannelBindings{ApplicationData: append([]byte(ntlmssp.TLSServerEndPoint+":"), d.Sum(nil)...)}
}

// unsealAnswer takes an encrypted answer apart (framing.Parse, which
// refuses a signature that is not an NTLM signature's 16 bytes, before the
// NTLM library slices it) and unseals it.
func unsealAnswer(session *ntlmssp.SecuritySession, contentType string, body []byte) ([]byte, string, error) {
	m, err := framing.Parse(contentType, body)
	if err != nil {
		return nil, "", &sealError{msg: "the machine's encrypted answer does not read: " + err.Error()}
	}
	msg, err := session.Unwrap(m.Sealed, m.Signature)
	if err != nil {
		return nil, "", &sealError{msg: "the machine's answer failed its NTLM signature check: " + err.Error()}
	}
	return msg, m.OriginalType, nil
}

// schemeError is a 401 that does not offer Negotiate.
type schemeError struct{ offered []string }

func (e *schemeError) Error() string {
	if len(e.offered) == 0 {
		return "HTTP 401 Unauthorized, offering no authentication scheme"
	}
	return "HTTP 401 Unauthorized, offering " + strings.Join(e.offered, ", ")
}

// sealError is a failure of the message encryption.
type sealError struct{ msg string }

func (e *sealError) Error() string { return e.msg }

// sealedTransport makes the HTTP transport of one sealed connection.
func sealedTransport(cfg Config, tlsConf *tls.Config) func() *http.Transport {
	// An NTLM context is bound to the TCP connection its handshake ran on
	// (MS-NLMP 3.1.5; pywinrm#149): a forwarding proxy (HTTP_PROXY) passes
	// requests on over connections of its own, so the machine would see
	// sealed messages on connections with no context. Over HTTP the sealed
	// transport therefore goes direct; over HTTPS a proxy tunnels
	// (CONNECT), one connection end to end, and HTTPS_PROXY is honoured.
	proxy := http.ProxyFromEnvironment
	if !cfg.HTTPS {
		proxy = nil
	}
	return func() *http.Transport {
		dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
		return &http.Transport{
			Proxy:                 proxy,
			DialContext:           dialer.DialContext,
			TLSClientConfig:       tlsConf,
			TLSHandshakeTimeout:   cfg.ConnectTimeout,
			ResponseHeaderTimeout: cfg.OperationTimeout + responseGrace,
			IdleConnTimeout:       90 * time.Second,
		}
	}
}
