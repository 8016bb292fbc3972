package wsmantest_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"
	"github.com/winconform/winconform/testing/wsmantest"
)

func tlsClient(t *testing.T, s *wsmantest.Server, insecure bool, ca []byte) *winrm.Client {
	t.Helper()
	endpoint := winrm.NewEndpoint(s.Host(), s.Port(), true, insecure, ca, nil, nil, 5*time.Second)
	client, err := winrm.NewClient(endpoint, s.User(), s.Password())
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func TestHTTPSWithTheServersCA(t *testing.T) {
	srv := newBasic(t, wsmantest.WithTLS(), wsmantest.WithHandler(func(*wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: "over TLS"}
	}))
	if !srv.HTTPS() || !strings.HasPrefix(srv.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %s", srv.URL())
	}
	block, _ := pem.Decode(srv.CACertPEM())
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !ca.IsCA {
		t.Fatalf("CA PEM: %v", err)
	}
	stdout, _, _, err := tlsClient(t, srv, false, srv.CACertPEM()).RunPSWithContext(context.Background(), "x")
	if err != nil || stdout != "over TLS" {
		t.Fatalf("err %v stdout %q", err, stdout)
	}
	// Without the CA the certificate is not trusted...
	if _, err := tlsClient(t, srv, false, nil).CreateShell(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v", err)
	}
	// ...unless the client skips the check.
	if _, _, _, err := tlsClient(t, srv, true, nil).RunPSWithContext(context.Background(), "x"); err != nil {
		t.Errorf("insecure: %v", err)
	}
}

func TestHTTPSWithAMismatchedName(t *testing.T) {
	srv := newBasic(t, wsmantest.WithMismatchedCert())
	_, err := tlsClient(t, srv, false, srv.CACertPEM()).CreateShell()
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err %v, want a name mismatch", err)
	}
	// The name the certificate has works.
	endpoint := winrm.NewEndpoint(srv.Host(), srv.Port(), true, false, srv.CACertPEM(), nil, nil, 5*time.Second)
	endpoint.TLSServerName = wsmantest.MismatchedCertName
	client, err := winrm.NewClient(endpoint, srv.User(), srv.Password())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := client.RunPSWithContext(context.Background(), "x"); err != nil {
		t.Errorf("with TLSServerName %s: %v", wsmantest.MismatchedCertName, err)
	}
}
