package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serverWithOwnCA is a TLS server whose certificate (for 127.0.0.1) is
// self-signed, unlike httptest's, which all its servers share.
func serverWithOwnCA(t *testing.T) *httptest.Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "other"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// fakeAPIServer answers SelfSubjectReviews for one token, as the API
// server does, over TLS with its own CA.
func fakeAPIServer(t *testing.T, token string) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"kind":"Status","status":"Failure","message":"Unauthorized","code":401}`)
			return
		}
		var body struct{ Kind string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Kind != "SelfSubjectReview" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		io.WriteString(w, `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"system:serviceaccount:ns1:default","uid":"u-1","groups":["system:serviceaccounts","system:serviceaccounts:ns1","system:authenticated"]}}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// serviceAccount writes a token and the server's CA where the kubelet
// would, under root.
func serviceAccount(t *testing.T, root string, srv *httptest.Server, token string) string {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(serviceAccountDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for name, data := range map[string][]byte{"token": []byte(token + "\n"), "ca.crt": ca, "namespace": []byte("ns1")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAPIUserInTheSandbox(t *testing.T) {
	srv := fakeAPIServer(t, "tok-1")
	root := t.TempDir()
	dir := serviceAccount(t, root, srv, "tok-1")
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(u.Host)
	// As in a HostProcess container: the volumes under the sandbox mount
	// point, the API server from the Service environment.
	t.Setenv("CONTAINER_SANDBOX_MOUNT_POINT", root)
	t.Setenv("KUBERNETES_SERVICE_HOST", host)
	t.Setenv("KUBERNETES_SERVICE_PORT", port)
	code, out, errOut := runTool(t, "apiuser")
	if code != exitOK {
		t.Fatalf("apiuser = %d %q %q", code, out, errOut)
	}
	var got apiUser
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if got.Username != "system:serviceaccount:ns1:default" || got.Dir != dir || got.Server != srv.URL || len(got.Groups) != 3 {
		t.Errorf("got %+v", got)
	}
}

func TestAPIUserErrors(t *testing.T) {
	srv := fakeAPIServer(t, "tok-1")
	root := t.TempDir()
	dir := serviceAccount(t, root, srv, "tok-1")
	t.Setenv("CONTAINER_SANDBOX_MOUNT_POINT", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")

	// A token the server does not know: the status and its message.
	wrong := serviceAccount(t, t.TempDir(), srv, "tok-2")
	if code, _, errOut := runTool(t, "apiuser", "--sa-dir", wrong, "--server", srv.URL); code != exitFailure || !strings.Contains(errOut, "401 Unauthorized") {
		t.Errorf("wrong token: %d %q", code, errOut)
	}
	// A server whose certificate the CA bundle does not vouch for.
	other := serverWithOwnCA(t)
	if code, _, errOut := runTool(t, "apiuser", "--sa-dir", dir, "--server", other.URL); code != exitFailure || !strings.Contains(errOut, "certificate") {
		t.Errorf("untrusted server: %d %q", code, errOut)
	}
	// No server named, none in the environment.
	if code, _, errOut := runTool(t, "apiuser", "--sa-dir", dir); code != exitFailure || !strings.Contains(errOut, "KUBERNETES_SERVICE_HOST") {
		t.Errorf("no server: %d %q", code, errOut)
	}
	// No token where it looks.
	if code, _, errOut := runTool(t, "apiuser", "--server", srv.URL); code != exitFailure || !strings.Contains(errOut, "no service account token") {
		t.Errorf("no token: %d %q", code, errOut)
	}
	// A CA bundle that holds no certificate.
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runTool(t, "apiuser", "--sa-dir", dir, "--server", srv.URL); code != exitFailure || !strings.Contains(errOut, "no PEM certificate") {
		t.Errorf("bad CA: %d %q", code, errOut)
	}
	for _, args := range [][]string{{"apiuser", "extra"}, {"apiuser", "--timeout", "0s"}, {"apiuser", "--nope"}} {
		if code, _, _ := runTool(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}
