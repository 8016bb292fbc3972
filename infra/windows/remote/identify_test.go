package remote_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/wsmantest"
)

// Identify without credentials, as Windows answers it (MS-WSMV 3.1.4.1.23;
// the stand-in's identify.go cites the sources): over HTTP and HTTPS, no
// Authorization header sent, and no shell made.
func TestIdentify(t *testing.T) {
	for _, tls := range []bool{false, true} {
		var opts []wsmantest.Option
		if tls {
			opts = append(opts, wsmantest.WithTLS())
		}
		srv := wsmantest.New(t, opts...)
		w := execFor(t, srv)
		id, err := w.Identify(t.Context())
		if err != nil {
			t.Fatalf("https=%v: Identify: %v", tls, err)
		}
		want := remote.Identification{ProtocolVersion: remote.WSManProtocolVersion, ProductVendor: "Microsoft Corporation", ProductVersion: "OS: 0.0.0 SP: 0.0 Stack: 3.0"}
		if id != want {
			t.Errorf("https=%v: Identify = %+v, want %+v", tls, id, want)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || reqs[0].Action != wsmantest.ActionIdentify || reqs[0].User != "" || reqs[0].Status != http.StatusOK {
			t.Errorf("https=%v: requests %+v, want one unauthenticated Identify", tls, reqs)
		}
		if srv.Handshakes() != 0 {
			t.Errorf("https=%v: Identify authenticated (%d NTLM handshakes)", tls, srv.Handshakes())
		}
	}
}

// What is not a WinRM listener fails Identify with a named class: nothing
// listening, an HTTP server that answers something else, a listener that
// wants credentials even for Identify, and a port that accepts and never
// answers (bounded by the context).
func TestIdentifyFailures(t *testing.T) {
	cfg := func(addr string) remote.Config {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		return remote.Config{Name: "win-x", Address: host, Port: p, User: "Administrator", Password: "pw", ConnectTimeout: time.Second}
	}

	// Nothing listens.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	_, err := newWinRM(t, cfg(closed)).Identify(t.Context())
	if !errors.Is(err, remote.ErrUnreachable) {
		t.Errorf("nothing listening: %v, want ErrUnreachable", err)
	}

	// A web server that is not WS-Management.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html>IIS Windows Server</html>")
	}))
	defer web.Close()
	_, err = newWinRM(t, cfg(strings.TrimPrefix(web.URL, "http://"))).Identify(t.Context())
	if !errors.Is(err, remote.ErrRemote) || !strings.Contains(err.Error(), "IdentifyResponse") {
		t.Errorf("a web server: %v, want ErrRemote naming IdentifyResponse", err)
	}

	// A listener that wants credentials even for Identify.
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Negotiate")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer auth.Close()
	_, err = newWinRM(t, cfg(strings.TrimPrefix(auth.URL, "http://"))).Identify(t.Context())
	if !errors.Is(err, remote.ErrRemote) || !strings.Contains(err.Error(), "401") || errors.Is(err, remote.ErrAuth) {
		t.Errorf("401 to Identify: %v, want ErrRemote naming the 401 (no credentials were sent, so not ErrAuth)", err)
	}

	// A port that accepts and never answers: what a forwarded port does
	// before the guest's service is up.
	mute, _ := net.Listen("tcp", "127.0.0.1:0")
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = newWinRM(t, cfg(mute.Addr().String())).Identify(ctx)
	if !errors.Is(err, remote.ErrTimeout) || time.Since(start) > 5*time.Second {
		t.Errorf("a mute port: %v after %v, want ErrTimeout at the context's deadline", err, time.Since(start))
	}
}
