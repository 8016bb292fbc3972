package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	maxHTTPBody    = 1 << 20 // read at most this much of an HTTP answer
	bodyExcerptLen = 200
)

// checkTCP succeeds when a TCP connection to the target is established.
func checkTCP(ctx context.Context, t target) (*detail, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", t.hostPort())
	if err != nil {
		return &detail{}, err
	}
	defer c.Close()
	return &detail{Remote: c.RemoteAddr().String(), Local: c.LocalAddr().String()}, nil
}

// checkUDP sends a nonce datagram and succeeds when the same bytes come back.
func checkUDP(ctx context.Context, t target) (*detail, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", t.hostPort())
	if err != nil {
		return &detail{}, err
	}
	defer c.Close()
	det := &detail{Remote: c.RemoteAddr().String(), Local: c.LocalAddr().String()}
	defer bindDeadline(ctx, c)()

	nonce := newNonce()
	if _, err := c.Write(nonce); err != nil {
		return det, udpError(err)
	}
	buf := make([]byte, 64<<10)
	strays := 0
	for {
		n, err := c.Read(buf)
		if err != nil {
			if strays > 0 && classify(err) == classTimeout {
				return det, withClass(classMismatch, fmt.Errorf("%d datagram(s) came back, none echoing the nonce: %w", strays, err))
			}
			return det, udpError(err)
		}
		if bytes.Equal(buf[:n], nonce) {
			return det, nil
		}
		strays++
	}
}

// udpError classifies the ICMP port unreachable that answers a datagram sent
// to a closed port as refused: Linux reports it as ECONNREFUSED, Windows as
// WSAECONNRESET.
func udpError(err error) error {
	if classify(err) == classReset {
		return withClass(classRefused, err)
	}
	return err
}

// bindDeadline applies ctx's deadline to c and interrupts c's pending I/O
// when ctx is cancelled early. Call the returned function when done with c.
func bindDeadline(ctx context.Context, c interface{ SetDeadline(time.Time) error }) (release func()) {
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return func() { stop() }
}

// newNonce returns a random payload that identifies one probe datagram.
func newNonce() []byte {
	b := make([]byte, 16)
	rand.Read(b)
	return []byte("winconform-probe:" + hex.EncodeToString(b))
}

// checkHTTP GETs the target and succeeds on a 2xx status. Redirects are not
// followed and no proxy is used; each check opens its own connection so
// that load-balanced services are sampled per check.
func checkHTTP(ctx context.Context, t target) (*detail, error) {
	det := &detail{}
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
		det.Remote = ci.Conn.RemoteAddr().String()
		det.Local = ci.Conn.LocalAddr().String()
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, t.url, nil)
	if err != nil {
		return det, withClass(classInvalidTarget, err)
	}
	req.Header.Set("User-Agent", "winconform-probe/"+version)
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:       (&net.Dialer{}).DialContext,
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return det, err
	}
	defer resp.Body.Close()
	det.StatusCode = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody))
	if err != nil {
		return det, fmt.Errorf("reading the response body: %w", err)
	}
	describeBody(det, resp.Header.Get("Content-Type"), body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return det, withClass(classHTTPStatus, fmt.Errorf("HTTP status %s", resp.Status))
	}
	return det, nil
}

// describeBody records the answering server of a probe /json answer, or
// else an excerpt of the body.
func describeBody(det *detail, contentType string, body []byte) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/json" {
		var in info
		if json.Unmarshal(body, &in) == nil && in.Hostname != "" {
			det.Hostname, det.PodIP, det.Name, det.Caller = in.Hostname, in.PodIP, in.Name, in.Caller
			return
		}
	}
	det.Body = excerpt(body, bodyExcerptLen)
}

// excerpt returns at most the first n bytes of b, not splitting a UTF-8
// sequence and replacing invalid ones.
func excerpt(b []byte, n int) string {
	if len(b) > n {
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// checkDNS resolves the name with the system resolver, so the pod's search
// path applies, and succeeds when an address (the expected one, if given)
// comes back.
func checkDNS(ctx context.Context, t target) (*detail, error) {
	addrs, err := net.DefaultResolver.LookupHost(ctx, t.host)
	det := &detail{Addresses: addrs}
	if err != nil {
		return det, err
	}
	if len(addrs) == 0 {
		return det, withClass(classDNS, fmt.Errorf("%s: no addresses", t.host))
	}
	if t.expect == nil {
		return det, nil
	}
	for _, a := range addrs {
		if net.ParseIP(a).Equal(t.expect) {
			return det, nil
		}
	}
	return det, withClass(classMismatch, fmt.Errorf("%s resolved to %s, not to %s", t.host, strings.Join(addrs, ", "), t.expect))
}
