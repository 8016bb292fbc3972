package wsmantest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ntlmssp "github.com/Azure/go-ntlmssp"
	"github.com/masterzen/winrm"

	"github.com/winconform/winconform/testing/wsmantest"
)

// A stock Windows Server's WinRM service: Auth\Basic=false,
// AllowUnencrypted=false, Negotiate and Kerberos on (the defaults quoted in
// diyan/pywinrm#105 and cloudsoft/winrm4j#70). A Basic request, and a
// plain SOAP message over HTTP even after a good NTLM handshake, get 401
// (jborean93/github-misc packer/issue-6205/README.md: go-ntlmssp's
// handshake with a plain payload, frames 708-714).

const createShell = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:w="http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd" xmlns:rsp="http://schemas.microsoft.com/wbem/wsman/1/windows/shell"><s:Header><a:Action>http://schemas.xmlsoap.org/ws/2004/09/transfer/Create</a:Action><a:MessageID>uuid:1</a:MessageID><w:ResourceURI>http://schemas.microsoft.com/wbem/wsman/1/windows/shell/cmd</w:ResourceURI></s:Header><s:Body><rsp:Shell><rsp:InputStreams>stdin</rsp:InputStreams><rsp:OutputStreams>stdout stderr</rsp:OutputStreams></rsp:Shell></s:Body></s:Envelope>`

// postCreate posts a plain Create with client, Basic credentials when
// basic, and returns the answer.
func postCreate(t *testing.T, client *http.Client, srv *wsmantest.Server, basic bool) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(createShell))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
	if basic {
		req.SetBasicAuth(srv.User(), srv.Password())
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestStockServerRefusesBasicAndPlainMessages(t *testing.T) {
	stock := wsmantest.New(t, wsmantest.WithLogf(t.Logf))

	// Basic: not offered, refused with the schemes Windows offers.
	resp := postCreate(t, http.DefaultClient, stock, true)
	offered := resp.Header.Values("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !slices.Contains(offered, "Negotiate") || slices.ContainsFunc(offered, func(s string) bool { return strings.HasPrefix(s, "Basic") }) {
		t.Errorf("Basic on a stock server: %d, WWW-Authenticate %q; want 401 offering Negotiate, not Basic", resp.StatusCode, offered)
	}

	// NTLM as go-ntlmssp does it (the client's handshake succeeds, the
	// message goes in plain text): refused over HTTP.
	ntlmPlain := &http.Client{Transport: ntlmssp.Negotiator{RoundTripper: &http.Transport{}}}
	if resp := postCreate(t, ntlmPlain, stock, true); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an NTLM-authenticated plain message over HTTP: %d, want 401", resp.StatusCode)
	}
	if stock.Handshakes() == 0 {
		t.Errorf("go-ntlmssp's handshake did not succeed: the refusal must be for the plain message, not the password")
	}
	if len(stock.ShellIDs()) != 0 {
		t.Errorf("a refused request created shells %v", stock.ShellIDs())
	}

	// The same client against a server that allows unencrypted messages.
	lax := wsmantest.New(t, wsmantest.WithAllowUnencrypted())
	if resp := postCreate(t, ntlmPlain, lax, true); resp.StatusCode != http.StatusOK {
		t.Errorf("an NTLM-authenticated plain message with AllowUnencrypted=true: %d, want 200", resp.StatusCode)
	}

	// Basic enabled: still refused over HTTP unless unencrypted messages
	// are allowed; accepted over HTTPS.
	basicHTTP := wsmantest.New(t, wsmantest.WithBasicAuth())
	if resp := postCreate(t, http.DefaultClient, basicHTTP, true); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Basic over HTTP with AllowUnencrypted=false: %d, want 401", resp.StatusCode)
	}
	basicHTTPS := wsmantest.New(t, wsmantest.WithBasicAuth(), wsmantest.WithTLS())
	if resp := postCreate(t, httpsClient(t, basicHTTPS), basicHTTPS, true); resp.StatusCode != http.StatusOK {
		t.Errorf("Basic over HTTPS with Basic enabled: %d, want 200", resp.StatusCode)
	}
}

// masterzenEncryptionClient is masterzen/winrm's own client with its NTLM
// message encryption (encryption.go, on bodgit/ntlmssp).
func masterzenEncryptionClient(t *testing.T, srv *wsmantest.Server, password string) *winrm.Client {
	t.Helper()
	endpoint := winrm.NewEndpoint(srv.Host(), srv.Port(), srv.HTTPS(), false, srv.CACertPEM(), nil, nil, 10*time.Second)
	params := winrm.NewParameters("PT5S", "en-US", 153600)
	enc, err := winrm.NewEncryption("ntlm")
	if err != nil {
		t.Fatal(err)
	}
	params.TransportDecorator = func() winrm.Transporter { return enc }
	client, err := winrm.NewClientWithParameters(endpoint, srv.User(), password, params)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func TestMasterzenEncryptionAgainstStockServer(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if c.Script != "Get-Service kubelet" {
			return wsmantest.Reply{Stderr: "unexpected: " + c.Script, ExitCode: 99}
		}
		return wsmantest.Reply{Stdout: "Running\r\n", Stderr: "a warning\r\n", ExitCode: 3}
	}), wsmantest.WithLogf(t.Logf))
	client := masterzenEncryptionClient(t, srv, srv.Password())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// RunPSWithContext sends no stdin: masterzen's Encryption keeps one
	// NTLM context for all requests, and is not safe for the concurrent
	// Send and Receive of a run with stdin.
	stdout, stderr, code, err := client.RunPSWithContext(ctx, "Get-Service kubelet")
	if err != nil {
		t.Fatalf("RunPSWithContext: %v", err)
	}
	if stdout != "Running\r\n" || stderr != "a warning\r\n" || code != 3 {
		t.Errorf("stdout %q, stderr %q, code %d", stdout, stderr, code)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request recorded")
	}
	for _, r := range reqs {
		if !r.Sealed || r.Status != http.StatusOK || r.User != srv.User() {
			t.Errorf("request #%d %s: sealed %v, status %d, user %q; want every message sealed, answered and authenticated", r.Seq, r.Action, r.Sealed, r.Status, r.User)
		}
	}
	if open := srv.OpenShells(); len(open) != 0 {
		t.Errorf("shells left open: %v", open)
	}

	_, _, _, err = masterzenEncryptionClient(t, srv, "not the password").RunPSWithContext(ctx, "Get-Service kubelet")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong password: %v, want an HTTP 401", err)
	}
}

// pywinrmPython is the Python with Debian's python3-winrm (pywinrm 0.3.0,
// requests-ntlm, ntlm-auth), or "" when there is none. Under CI=true its
// absence fails the test: .ci/run installs it.
func pywinrmPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import winrm, requests_ntlm, xmltodict").Run() == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("pywinrm is not installed (apt-get install python3-winrm): .ci/run installs it, and CI must run this test")
	}
	t.Skip("pywinrm is not installed: apt-get install python3-winrm")
	return ""
}

// pywinrmResult is what testdata/pywinrm_client.py prints.
type pywinrmResult struct {
	Stdout, Stderr string
	Code           int
	Error, Message string
}

func runPywinrm(t *testing.T, python string, task map[string]any) pywinrmResult {
	t.Helper()
	in, _ := json.Marshal(task)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/pywinrm_client.py")
	cmd.Stdin = bytes.NewReader(in)
	// ntlm-auth takes NTLM's MD4 from hashlib, which OpenSSL 3 (Debian
	// 12's) keeps in its legacy provider: load it for this process.
	conf := filepath.Join(t.TempDir(), "openssl.cnf")
	if err := os.WriteFile(conf, []byte(opensslLegacy), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "OPENSSL_CONF="+conf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pywinrm_client.py: %v\n%s", err, stderr.String())
	}
	var r pywinrmResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("pywinrm_client.py printed %q: %v\n%s", out, err, stderr.String())
	}
	return r
}

// opensslLegacy is an OpenSSL configuration that loads the default and the
// legacy providers.
const opensslLegacy = `openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
legacy = legacy_sect
[default_sect]
activate = 1
[legacy_sect]
activate = 1
`

func TestPywinrmAgainstStockServer(t *testing.T) {
	python := pywinrmPython(t)
	script := "$all = @($input)\n[Console]::Out.Write(($all -join '|'))\nexit 7"
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if c.Script != script {
			return wsmantest.Reply{Stderr: "unexpected: " + c.Script, ExitCode: 99}
		}
		// The script joins the lines it reads from stdin.
		lines := strings.Split(strings.TrimSuffix(string(c.Stdin), "\r\n"), "\r\n")
		return wsmantest.Reply{Stdout: strings.Join(lines, "|"), Stderr: "to stderr", ExitCode: 7}
	}), wsmantest.WithWaitForStdin(), wsmantest.WithLogf(t.Logf))
	task := map[string]any{"endpoint": srv.URL(), "user": srv.User(), "password": srv.Password(), "script": script,
		"stdin": []string{"one\r\n", "two\r\n", "three\r\n"}}

	r := runPywinrm(t, python, task)
	if r.Error != "" || r.Stdout != "one|two|three" || r.Stderr != "to stderr" || r.Code != 7 {
		t.Fatalf("pywinrm with message encryption: %+v", r)
	}
	if srv.Handshakes() == 0 {
		t.Error("pywinrm made no NTLM handshake")
	}
	var sends int
	for _, req := range srv.Requests() {
		if !req.Sealed || req.Status != http.StatusOK {
			t.Errorf("request #%d %s: sealed %v, status %d", req.Seq, req.Action, req.Sealed, req.Status)
		}
		if req.Action == wsmantest.ActionSend {
			sends++
		}
	}
	if sends != 3 {
		t.Errorf("%d Sends, want 3", sends)
	}
	if open := srv.OpenShells(); len(open) != 0 {
		t.Errorf("shells left open: %v", open)
	}

	// Over HTTPS pywinrm sends plain messages (TLS encrypts them) and
	// channel bindings for the listener's certificate, which the stand-in
	// checks.
	tlsSrv := wsmantest.New(t, wsmantest.WithTLS(), wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: "over TLS", ExitCode: 0}
	}))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, tlsSrv.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runPywinrm(t, python, map[string]any{"endpoint": tlsSrv.URL(), "user": tlsSrv.User(), "password": tlsSrv.Password(),
		"script": "x", "ca": ca}); r.Error != "" || r.Stdout != "over TLS" {
		t.Errorf("pywinrm over HTTPS: %+v", r)
	}
	// requests-ntlm sends the first message on every leg of its
	// handshake: the anonymous one and the NEGOTIATE_MESSAGE get 401.
	for i, req := range tlsSrv.Requests() {
		if want := i >= 2; req.Sealed || (req.Status == http.StatusOK) != want {
			t.Errorf("over HTTPS, request #%d %s: sealed %v, status %d; want plain, and answered after the handshake", req.Seq, req.Action, req.Sealed, req.Status)
		}
	}
	if tlsSrv.Handshakes() != 1 {
		t.Errorf("over HTTPS: %d handshakes, want 1", tlsSrv.Handshakes())
	}

	task["password"] = "not the password"
	if r := runPywinrm(t, python, task); r.Error != "InvalidCredentialsError" {
		t.Errorf("a wrong password: %+v, want InvalidCredentialsError", r)
	}
	// pywinrm without message encryption: the server refuses the plain
	// messages, with the 401 pywinrm reports as rejected credentials.
	task["password"], task["encryption"] = srv.Password(), "never"
	if r := runPywinrm(t, python, task); r.Error != "InvalidCredentialsError" {
		t.Errorf("pywinrm without encryption: %+v, want InvalidCredentialsError (HTTP 401)", r)
	}
}

// httpsClient is an HTTP client that trusts srv's CA.
func httpsClient(t *testing.T, srv *wsmantest.Server) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(srv.CACertPEM()) {
		t.Fatal("the server's CA does not parse")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}
