package wsmantest_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"
	"github.com/winconform/winconform/testing/wsmantest"
)

// newBasic is a server configured the way masterzen/winrm's default
// client needs: Basic authentication on, and plain messages allowed over
// HTTP (a stock server has neither: see auth_test.go). The protocol tests
// use that client, the one the harness's transport replaces.
func newBasic(t *testing.T, opts ...wsmantest.Option) *wsmantest.Server {
	t.Helper()
	return wsmantest.New(t, append([]wsmantest.Option{wsmantest.WithBasicAuth(), wsmantest.WithAllowUnencrypted()}, opts...)...)
}

// stockClient is masterzen/winrm's client, with its own HTTP transport,
// pointed at s: what proves the fake against the real client.
func stockClient(t *testing.T, s *wsmantest.Server, password string, opTimeout string) *winrm.Client {
	t.Helper()
	endpoint := winrm.NewEndpoint(s.Host(), s.Port(), s.HTTPS(), false, s.CACertPEM(), nil, nil, 5*time.Second)
	if opTimeout == "" {
		opTimeout = "PT5S"
	}
	client, err := winrm.NewClientWithParameters(endpoint, s.User(), password, winrm.NewParameters(opTimeout, "en-US", 153600))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return client
}

// onlyShell returns the one shell the server created.
func onlyShell(t *testing.T, s *wsmantest.Server) string {
	t.Helper()
	ids := s.ShellIDs()
	if len(ids) != 1 {
		t.Fatalf("shells created: %v, want exactly one", ids)
	}
	return ids[0]
}

// compact collapses runs of Receive in a conversation into one, so that
// conversations compare regardless of how many long polls there were.
func compact(actions []wsmantest.Action) []wsmantest.Action {
	return slices.Compact(slices.Clone(actions))
}

// assertConversation checks a shell's conversation, Receive runs compacted.
func assertConversation(t *testing.T, s *wsmantest.Server, shellID string, want ...wsmantest.Action) {
	t.Helper()
	if got := compact(s.Conversation(shellID)); !slices.Equal(got, want) {
		t.Errorf("conversation of shell %s = %v, want %v", shellID, got, want)
	}
}

// post sends one SOAP message to s with the right credentials and returns
// the HTTP status and body.
func post(t *testing.T, s *wsmantest.Server, msg *soap.SoapMessage) (int, string) {
	t.Helper()
	return postText(t, s, msg.String())
}

// postText is post of a message's text.
func postText(t *testing.T, s *wsmantest.Server, msg string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
	req.SetBasicAuth(s.User(), s.Password())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// rawRun runs command on s with masterzen/winrm's request builders sent one
// by one (Basic, plain), its stdin sent whole and closed, and returns its
// output and exit code. With pipeStdin the Command asks for pipe-mode
// stdin (WINRS_CONSOLEMODE_STDIN=FALSE, as Ansible's client does when it
// streams stdin), which masterzen/winrm's own client never does.
func rawRun(t *testing.T, s *wsmantest.Server, command string, stdin []byte, pipeStdin bool) (stdout, stderr string, code int) {
	t.Helper()
	params := winrm.NewParameters("PT1S", "en-US", 153600)
	url := s.URL()
	status, body := post(t, s, winrm.NewOpenShellRequest(url, params))
	shellID, err := winrm.ParseOpenShellResponse(body)
	if status != http.StatusOK || err != nil {
		t.Fatalf("Create: %d %v", status, err)
	}
	msg := winrm.NewExecuteCommandRequest(url, shellID, command, nil, params).String()
	if pipeStdin {
		const console = `<w:Option Name="WINRS_CONSOLEMODE_STDIN">TRUE</w:Option>`
		if !strings.Contains(msg, console) {
			t.Fatal("masterzen/winrm's Command no longer asks for console-mode stdin as the test expects")
		}
		msg = strings.Replace(msg, console, `<w:Option Name="WINRS_CONSOLEMODE_STDIN">FALSE</w:Option>`, 1)
	}
	status, body = postText(t, s, msg)
	commandID, err := winrm.ParseExecuteCommandResponse(body)
	if status != http.StatusOK || err != nil {
		t.Fatalf("Command: %d %v", status, err)
	}
	if status, _ = post(t, s, winrm.NewSendInputRequest(url, shellID, commandID, stdin, true, params)); status != http.StatusOK {
		t.Fatalf("Send: %d", status)
	}
	var out, errOut bytes.Buffer
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the command did not end within 10s")
		}
		status, body = post(t, s, winrm.NewGetOutputRequest(url, shellID, commandID, "stdout stderr", params))
		if status != http.StatusOK {
			continue // w:TimedOut: poll again
		}
		done, exit, err := winrm.ParseSlurpOutputErrResponse(body, &out, &errOut)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			code = exit
			break
		}
	}
	post(t, s, winrm.NewSignalRequest(url, shellID, commandID, params))
	post(t, s, winrm.NewDeleteShellRequest(url, shellID, params))
	return out.String(), errOut.String(), code
}
