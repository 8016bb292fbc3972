package remote_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/wsmantest"
)

func TestRunPSReturnsOutputAndExitCode(t *testing.T) {
	const script = "Get-Service kubelet | Select-Object -ExpandProperty Status"
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if c.Script != script || c.ViaStdin {
			return wsmantest.Reply{Stderr: "unexpected script " + c.Script, ExitCode: 99}
		}
		return wsmantest.Reply{Stdout: "Running\r\n", Stderr: "line 1\r\nline 2\r\n", ExitCode: 3}
	}))
	w := execFor(t, srv)
	before := time.Now()
	res, err := run(t, w, "check-kubelet", script)
	if err != nil {
		t.Fatalf("RunPS: %v (a non-zero exit code is not an error)", err)
	}
	if res.Stdout != "Running\r\n" || res.Stderr != "line 1\r\nline 2\r\n" || res.ExitCode != 3 {
		t.Errorf("result %+v", res)
	}
	if res.Step != "check-kubelet" || res.Machine != "win-test" || res.Started.Before(before) || res.Duration <= 0 {
		t.Errorf("result metadata %+v", res)
	}
	var exitErr *remote.ExitError
	if err := res.Err(); !errors.Is(err, remote.ErrExit) || !errors.As(err, &exitErr) || exitErr.ExitCode != 3 ||
		!strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "check-kubelet") {
		t.Errorf("Result.Err() = %v", err)
	}
	want := []wsmantest.Action{wsmantest.ActionCreate, wsmantest.ActionCommand, wsmantest.ActionReceive, wsmantest.ActionSignal, wsmantest.ActionDelete}
	if got := conversation(t, srv); !slices.Equal(got, want) {
		t.Errorf("conversation %v, want %v", got, want)
	}
	assertShellsDeleted(t, srv)
	if w.Name() != "win-test" {
		t.Errorf("Name() = %q", w.Name())
	}
}

func TestZeroExitCodeIsNoError(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Stdout: "ok"})))
	res, err := run(t, execFor(t, srv), "ok", "Write-Output ok")
	if err != nil || res.ExitCode != 0 || res.Err() != nil {
		t.Fatalf("err %v, result %+v, Err() %v", err, res, res.Err())
	}
}

func TestLargeOutputIsReassembled(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 200*1024; i++ {
		b.WriteString(strings.Repeat("é", i%7) + "line " + strings.Repeat("x", i%50) + "\r\n")
	}
	stdout, stderr := b.String(), strings.Repeat("warning\r\n", 3000)
	srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Stdout: stdout, Stderr: stderr})))
	res, err := run(t, execFor(t, srv), "big", "Get-Content big.log")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != stdout || res.Stderr != stderr {
		t.Fatalf("output not reassembled: stdout %d of %d bytes, stderr %d of %d", len(res.Stdout), len(stdout), len(res.Stderr), len(stderr))
	}
	withOutput := 0
	for _, r := range srv.Requests() {
		if r.Action == wsmantest.ActionReceive && r.ResponseBytes > 10000 {
			withOutput++
		}
	}
	if withOutput < 2 {
		t.Errorf("%d Receive responses carried output, want the output split over several", withOutput)
	}
}

func TestLongScriptTravelsOnStdin(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 20*1024; i++ {
		b.WriteString("Write-Output 'step " + strings.Repeat("ü", i%5) + "' # a long script line\n")
	}
	script := b.String()
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: c.Script, ExitCode: 7}
	}))
	res, err := run(t, execFor(t, srv), "long", script)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != script || res.ExitCode != 7 {
		t.Fatalf("the handler did not get the script: %d of %d bytes, exit %d", len(res.Stdout), len(script), res.ExitCode)
	}
	calls := srv.Calls()
	if len(calls) != 1 || !calls[0].ViaStdin || !strings.HasPrefix(calls[0].Bootstrap, wsmantest.StdinBootstrapMarker) {
		t.Fatalf("calls %+v", calls)
	}
	if n := len(calls[0].CommandLine()); n > remote.MaxCommandLine {
		t.Errorf("command line of %d characters, over Windows's %d", n, remote.MaxCommandLine)
	}
	// Stdin may take one Send or several, and Receives interleave with them:
	// compare the conversation with runs of Sends and all Receives folded.
	fold := func(as []wsmantest.Action) []wsmantest.Action {
		as = slices.DeleteFunc(as, func(a wsmantest.Action) bool { return a == wsmantest.ActionReceive })
		return slices.Compact(as)
	}
	want := []wsmantest.Action{wsmantest.ActionCreate, wsmantest.ActionCommand, wsmantest.ActionSend, wsmantest.ActionSignal, wsmantest.ActionDelete}
	if got := fold(conversation(t, srv)); !slices.Equal(got, want) {
		t.Errorf("conversation %v, folded %v, want %v", conversation(t, srv), got, want)
	}
	var ended bool
	for _, r := range srv.Requests() {
		ended = ended || (r.Action == wsmantest.ActionSend && r.End)
		// Console-mode stdin would never end the bootstrap's input.
		if r.Action == wsmantest.ActionCommand && r.Options["WINRS_CONSOLEMODE_STDIN"] != "FALSE" {
			t.Errorf("the Command of a script on stdin asks for WINRS_CONSOLEMODE_STDIN=%q, want FALSE (a pipe)", r.Options["WINRS_CONSOLEMODE_STDIN"])
		}
	}
	if !ended {
		t.Error("stdin was never closed")
	}
	if c := calls[0].CommandLine(); !strings.HasPrefix(c, "powershell.exe -NoProfile -NonInteractive -EncodedCommand ") {
		t.Errorf("command line %.60q..., want powershell.exe without profile, non-interactive", c)
	}
}

func TestScriptAtTheCommandLineLimit(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: c.Script}
	}))
	w := execFor(t, srv)
	// "powershell.exe -NoProfile -NonInteractive -EncodedCommand " is 58
	// characters, the preamble 41; base64 of UTF-16 is 8/3 characters a
	// character.
	fits := strings.Repeat("a", (remote.MaxCommandLine-58)/8*3-41)
	over := fits + strings.Repeat("b", 10)
	for _, script := range []string{fits, over} {
		res, err := run(t, w, "edge", script)
		if err != nil || res.Stdout != script {
			t.Fatalf("script of %d characters: %v, %d bytes back", len(script), err, len(res.Stdout))
		}
	}
	calls := srv.Calls()
	if calls[0].ViaStdin || !calls[1].ViaStdin {
		t.Errorf("ViaStdin: %v then %v, want false then true", calls[0].ViaStdin, calls[1].ViaStdin)
	}
	if n := len(calls[0].CommandLine()); n > remote.MaxCommandLine || n < remote.MaxCommandLine-8 {
		t.Errorf("the script that fits made a command line of %d characters", n)
	}
}

func TestSlowCommandBeyondTheDeadline(t *testing.T) {
	cancelled := make(chan struct{})
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		go func() { <-c.Ctx.Done(); close(cancelled) }()
		return wsmantest.Reply{Stdout: "too late", Delay: 30 * time.Second}
	}))
	w := execFor(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := w.RunPS(ctx, "install-containerd", "Start-Sleep 3600")
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, remote.ErrTimeout) {
		t.Fatalf("err %v, want one wrapping context.DeadlineExceeded", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"install-containerd"`) || !strings.Contains(msg, "win-test") || !strings.Contains(msg, "receiving output") {
		t.Errorf("the error does not say which step timed out where: %v", msg)
	}
	if elapsed > 2*time.Second {
		t.Errorf("RunPS took %v past a 300ms deadline", elapsed)
	}
	if res.ExitCode != -1 {
		t.Errorf("exit code %d, want -1", res.ExitCode)
	}
	conv := conversation(t, srv)
	if !slices.Contains(conv, wsmantest.ActionSignal) || conv[len(conv)-1] != wsmantest.ActionDelete {
		t.Errorf("conversation %v: want a Signal, then a Delete", conv)
	}
	for _, r := range srv.Requests() {
		if r.Action == wsmantest.ActionSignal && r.Signal != wsmantest.SignalTerminate {
			t.Errorf("signal %s", r.Signal)
		}
		if r.Dropped {
			t.Errorf("request #%d %s was dropped", r.Seq, r.Action)
		}
	}
	// The server records the abandoned Receive when it sees its client
	// gone, which may come after RunPS has returned (a loaded machine).
	abandoned := func() bool {
		for _, r := range srv.Requests() {
			if r.Action == wsmantest.ActionReceive && r.Abandoned {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(2 * time.Second); !abandoned() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !abandoned() {
		t.Error("the Receive in flight at the deadline was not abandoned by the client")
	}
	select {
	case <-cancelled:
	case <-time.After(2 * time.Second):
		t.Error("the remote command was not stopped")
	}
	assertShellsDeleted(t, srv)
}

func TestCancelStopsTheCommand(t *testing.T) {
	started := make(chan struct{})
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		close(started)
		<-c.Ctx.Done()
		return wsmantest.Reply{}
	}))
	w := execFor(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := w.RunPS(ctx, "wait", "Wait-Event")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `"wait"`) {
		t.Fatalf("err %v, want one wrapping context.Canceled", err)
	}
	if errors.Is(err, remote.ErrTimeout) {
		t.Error("a cancel is not a timeout")
	}
	if conv := conversation(t, srv); !slices.Contains(conv, wsmantest.ActionSignal) {
		t.Errorf("conversation %v has no Signal", conv)
	}
	assertShellsDeleted(t, srv)
}

func TestExpiredContextSendsNothing(t *testing.T) {
	srv := wsmantest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := execFor(t, srv).RunPS(ctx, "never", "x")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestLongPollsThatTimeOutAreNotErrors(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Stdout: "done", Delay: 700 * time.Millisecond})))
	w := execFor(t, srv, func(c *remote.Config) { c.OperationTimeout = 200 * time.Millisecond })
	res, err := run(t, w, "slow", "Start-Sleep 1")
	if err != nil || res.Stdout != "done" {
		t.Fatalf("err %v, result %+v", err, res)
	}
	timedOut := 0
	for _, r := range srv.Requests() {
		if r.Fault == "w:TimedOut" {
			timedOut++
		}
		if r.Action == wsmantest.ActionReceive && r.OperationTimeout != 200*time.Millisecond {
			t.Errorf("OperationTimeout sent %v", r.OperationTimeout)
		}
	}
	if timedOut < 2 {
		t.Errorf("%d Receives timed out, want the test to exercise the long poll", timedOut)
	}
}

func TestConcurrentRuns(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		return wsmantest.Reply{Stdout: c.Script, Delay: 20 * time.Millisecond}
	}))
	w := execFor(t, srv)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			script := "Write-Output " + strings.Repeat("n", i)
			res, err := run(t, w, "parallel", script)
			if err == nil && res.Stdout != script {
				err = errors.New("crossed output: " + res.Stdout)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := len(srv.ShellIDs()); n != 8 {
		t.Errorf("%d shells", n)
	}
	assertShellsDeleted(t, srv)
	if n := len(w.Transcript().Entries()); n != 8 {
		t.Errorf("%d transcript entries", n)
	}
}

// winrm polls again after a Receive error whose text says "OperationTimeout";
// a step named so must still stop at its deadline.
func TestStepNamedOperationTimeoutStillStops(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Delay: time.Minute})))
	w := execFor(t, srv, func(c *remote.Config) { c.Name = "OperationTimeout-box" })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := w.RunPS(ctx, "check OperationTimeout", "x")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("RunPS kept polling after its deadline")
	}
}
