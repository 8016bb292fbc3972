package wsmantest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/masterzen/winrm"
	"github.com/winconform/winconform/testing/wsmantest"
)

func TestStockClientRunsPowerShell(t *testing.T) {
	srv := newBasic(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if !c.PowerShell || c.Script != "Get-Service kubelet" {
			return wsmantest.Reply{Stderr: "unexpected: " + c.CommandLine(), ExitCode: 99}
		}
		return wsmantest.Reply{Stdout: "Running\r\n", Stderr: "a warning\r\n", ExitCode: 3}
	}))
	client := stockClient(t, srv, srv.Password(), "")

	stdout, stderr, code, err := client.RunPSWithContext(context.Background(), "Get-Service kubelet")
	if err != nil {
		t.Fatalf("RunPSWithContext: %v", err)
	}
	if stdout != "Running\r\n" || stderr != "a warning\r\n" || code != 3 {
		t.Errorf("got stdout %q stderr %q code %d", stdout, stderr, code)
	}
	shellID := onlyShell(t, srv)
	assertConversation(t, srv, shellID, wsmantest.ActionCreate, wsmantest.ActionCommand, wsmantest.ActionReceive, wsmantest.ActionSignal, wsmantest.ActionDelete)
	if open := srv.OpenShells(); len(open) != 0 {
		t.Errorf("open shells %v", open)
	}
	calls := srv.Calls()
	if len(calls) != 1 || calls[0].ShellID != shellID || !strings.HasPrefix(calls[0].Command, "powershell.exe -EncodedCommand ") {
		t.Errorf("calls %+v", calls)
	}
	for _, r := range srv.Requests() {
		if r.Action == wsmantest.ActionCreate && (r.Options["WINRS_CODEPAGE"] != "65001" || r.MaxEnvelopeSize != 153600) {
			t.Errorf("create request %+v: the options and envelope size winrm sends were not read", r)
		}
		if r.Action == wsmantest.ActionSignal && r.Signal != wsmantest.SignalTerminate {
			t.Errorf("signal %q", r.Signal)
		}
	}
}

func TestStockClientRunsRawCommand(t *testing.T) {
	srv := newBasic(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: c.Command + "|" + strings.Join(c.Arguments, ",")}
	}))
	client := stockClient(t, srv, srv.Password(), "")
	shell, err := client.CreateShell()
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := shell.Execute("ipconfig", "/all", "a & b <c>")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { defer close(done); _, _ = out.ReadFrom(cmd.Stdout) }()
	cmd.Wait()
	<-done
	if got := out.String(); got != "ipconfig|/all,a & b <c>" {
		t.Errorf("stdout %q", got)
	}
	if calls := srv.Calls(); len(calls) != 1 || calls[0].PowerShell || calls[0].Script != "" {
		t.Errorf("a raw command was taken for PowerShell: %+v", calls)
	}
	_ = cmd.Close()
	_ = shell.Close()
}

func TestLargeOutputIsSplitOverReceives(t *testing.T) {
	big := strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz\u00e9\r\n", 200*1024/40)
	bigErr := strings.Repeat("E", 50*1024)
	srv := newBasic(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: big, Stderr: bigErr, ExitCode: 0}
	}))
	client := stockClient(t, srv, srv.Password(), "")
	stdout, stderr, code, err := client.RunPSWithContext(context.Background(), "big")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != big || stderr != bigErr || code != 0 {
		t.Fatalf("output not reassembled: stdout %d/%d bytes, stderr %d/%d bytes, code %d", len(stdout), len(big), len(stderr), len(bigErr), code)
	}
	receives := 0
	for _, r := range srv.Requests() {
		if r.Action != wsmantest.ActionReceive {
			continue
		}
		receives++
		if r.ResponseBytes > r.MaxEnvelopeSize {
			t.Errorf("Receive #%d answered %d bytes, more than MaxEnvelopeSize %d", r.Seq, r.ResponseBytes, r.MaxEnvelopeSize)
		}
	}
	if receives < 2 {
		t.Errorf("%d Receives for %d bytes of output, want the output split over several", receives, len(big)+len(bigErr))
	}
}

func TestMaxOutputPerReceive(t *testing.T) {
	out := strings.Repeat("x", 10000)
	srv := newBasic(t, wsmantest.WithMaxOutputPerReceive(1000), wsmantest.WithHandler(func(*wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: out}
	}))
	stdout, _, _, err := stockClient(t, srv, srv.Password(), "").RunPSWithContext(context.Background(), "x")
	if err != nil || stdout != out {
		t.Fatalf("err %v, %d bytes", err, len(stdout))
	}
	if n := srv.Count(wsmantest.ActionReceive); n < 10 {
		t.Errorf("%d Receives, want at least 10", n)
	}
}

func TestScriptOnStdinWithDashCommand(t *testing.T) {
	script := "Write-Output 'from stdin'\r\nexit 4\r\n"
	srv := newBasic(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if !c.ViaStdin || c.Script != script {
			return wsmantest.Reply{Stderr: "script not seen: " + c.Script, ExitCode: 1}
		}
		return wsmantest.Reply{Stdout: "from stdin", ExitCode: 4}
	}))
	stdout, stderr, code := rawRun(t, srv, "powershell.exe -NoProfile -NonInteractive -Command -", []byte(script), true)
	if code != 4 || stdout != "from stdin" {
		t.Errorf("code %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestStdinBootstrap(t *testing.T) {
	script := strings.Repeat("Write-Output 'a long line of a long script'\n", 500)
	bootstrap := wsmantest.StdinBootstrapMarker + "\n$s = $input | Out-String\n& ([ScriptBlock]::Create($s))\n"
	srv := newBasic(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if !c.ViaStdin || c.Script != script || c.Bootstrap != bootstrap {
			return wsmantest.Reply{Stderr: "bootstrap not understood", ExitCode: 1}
		}
		return wsmantest.Reply{Stdout: "ok"}
	}))
	var stdin bytes.Buffer
	b64 := base64.StdEncoding.EncodeToString([]byte(script))
	for len(b64) > 76 {
		stdin.WriteString(b64[:76] + "\r\n")
		b64 = b64[76:]
	}
	stdin.WriteString(b64)
	stdout, stderr, code := rawRun(t, srv, winrm.Powershell(bootstrap), stdin.Bytes(), true)
	if code != 0 || stdout != "ok" {
		t.Fatalf("code %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestStdinBootstrapWithBadStdinFailsLikePowerShell(t *testing.T) {
	var called atomic.Bool
	srv := newBasic(t, wsmantest.WithHandler(func(*wsmantest.Call) wsmantest.Reply {
		called.Store(true)
		return wsmantest.Reply{}
	}))
	_, stderr, code := rawRun(t, srv, winrm.Powershell(wsmantest.StdinBootstrapMarker+"\n"), []byte("not base64!"), true)
	if code != 1 || !strings.Contains(stderr, "FromBase64String") || called.Load() {
		t.Errorf("code %d stderr %q handler called %v", code, stderr, called.Load())
	}
}

func TestWaitForStdin(t *testing.T) {
	srv := newBasic(t, wsmantest.WithWaitForStdin(), wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: strings.ToUpper(string(c.Stdin))}
	}))
	if stdout, _, _ := rawRun(t, srv, "findstr .", []byte("some input"), true); stdout != "SOME INPUT" {
		t.Errorf("stdout %q", stdout)
	}
}

// masterzen/winrm's client asks for console-mode stdin whatever it sends
// (WINRS_CONSOLEMODE_STDIN=TRUE): the end of the stream it sends is not the
// end of a console's input, and a process that reads stdin to its end never
// runs (see doc.go, "When a command runs", for the sources).
func TestConsoleModeStdinNeverEndsTheInput(t *testing.T) {
	var called atomic.Bool
	srv := newBasic(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		called.Store(true)
		return wsmantest.Reply{Stdout: "ran"}
	}))
	client := stockClient(t, srv, srv.Password(), "PT0.2S")
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	_, _ = client.RunWithContextWithInput(ctx, "powershell.exe -NoProfile -NonInteractive -Command -", &stdout, &stderr, strings.NewReader("Write-Output 1\r\n"))
	if called.Load() || stdout.String() != "" {
		t.Errorf("a -Command - process ran on console-mode stdin (stdout %q)", stdout.String())
	}
	var sawEnd, sawConsole bool
	for _, r := range srv.Requests() {
		sawEnd = sawEnd || (r.Action == wsmantest.ActionSend && r.End)
		sawConsole = sawConsole || (r.Action == wsmantest.ActionCommand && r.Options["WINRS_CONSOLEMODE_STDIN"] == "TRUE")
	}
	if !sawEnd || !sawConsole {
		t.Fatalf("the test's premise failed: stdin closed %v, console mode asked %v", sawEnd, sawConsole)
	}
	if open := srv.OpenShells(); len(open) != 0 {
		t.Errorf("shells left open: %v", open)
	}
}

func TestLongPollTimesOutAndClientPollsAgain(t *testing.T) {
	srv := newBasic(t, wsmantest.WithHandler(func(*wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: "late", Delay: 350 * time.Millisecond}
	}))
	client := stockClient(t, srv, srv.Password(), "PT0.1S")
	stdout, _, code, err := client.RunPSWithContext(context.Background(), "slow")
	if err != nil || stdout != "late" || code != 0 {
		t.Fatalf("err %v stdout %q code %d", err, stdout, code)
	}
	timedOut := 0
	for _, r := range srv.Requests() {
		if r.Action == wsmantest.ActionReceive && r.Fault == "w:TimedOut" {
			timedOut++
		}
	}
	if timedOut < 2 {
		t.Errorf("%d Receives timed out, want the long poll to end in w:TimedOut a few times", timedOut)
	}
}
