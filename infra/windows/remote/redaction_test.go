package remote_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/wsmantest"
)

// password is distinctive, so that any leak is found.
const password = "Sup3r-S3cret-Pa55word"

func TestPasswordNeverLeaks(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithCredentials("Administrator", password), wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		switch {
		case strings.Contains(c.Script, "fault"):
			return wsmantest.Reply{Fault: wsmantest.ErrorFault("bad password " + password + " in the script")}
		case strings.Contains(c.Script, "slow"):
			return wsmantest.Reply{Delay: time.Minute}
		}
		// Echo the script, the password with it, on both streams.
		return wsmantest.Reply{Stdout: c.Script, Stderr: "echo " + password, ExitCode: 1}
	}))
	cfg := configFor(srv)
	w := newWinRM(t, cfg)
	var texts []string
	note := func(what string, v any) { texts = append(texts, fmt.Sprintf("%s: %v", what, v)) }

	// A step whose script and output hold the password.
	res, err := run(t, w, "join "+password, "net user Administrator "+password)
	if err != nil {
		t.Fatal(err)
	}
	note("stdout", res.Stdout)
	note("stderr", res.Stderr)
	note("step", res.Step)
	note("Result.Err", res.Err())
	if !strings.Contains(res.Stdout, "net user Administrator ********") {
		t.Errorf("stdout %q: want the password masked", res.Stdout)
	}
	// A fault that quotes it.
	_, err = run(t, w, "fault", "fault "+password)
	note("fault error", err)
	// A deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = w.RunPS(ctx, "slow", "slow "+password)
	cancel()
	note("deadline error", err)
	// A wrong password.
	bad := cfg
	bad.Password = password + "-wrong"
	wBad := newWinRM(t, bad)
	_, err = run(t, wBad, "login", "hostname")
	note("auth error", err)
	note("bad Name", wBad.Name())
	note("bad String", wBad.String())
	_, err = remote.NewWinRM(remote.Config{Address: "h", Password: password})
	note("config error", err)

	// Names and strings.
	note("Name", w.Name())
	note("String", w.String())
	note("%v config", cfg)
	texts = append(texts, fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s", cfg), cfg.String())
	texts = append(texts, fmt.Sprintf("%v %+v", w, w))

	// Transcripts.
	dir := t.TempDir()
	if err := w.WriteTranscript(dir); err != nil {
		t.Fatal(err)
	}
	if err := wBad.WriteTranscript(dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 { // both machines are win-test: the second overwrote the first
		t.Errorf("transcript files %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	for _, e := range w.Transcript().Entries() {
		texts = append(texts, fmt.Sprintf("%+v", e))
	}

	for _, text := range texts {
		if strings.Contains(text, password) {
			t.Errorf("the password leaks in %s", text)
		}
	}
	if !strings.Contains(strings.Join(texts, "\n"), "********") {
		t.Error("nothing was redacted: the test proves nothing")
	}
}

func TestConfigString(t *testing.T) {
	cfg := remote.Config{Name: "win-1", Address: "10.0.0.5", HTTPS: true, User: "Administrator", Password: password}
	want := "winrm win-1 (https://Administrator@10.0.0.5:5986, auth ntlm, password ********)"
	if got := cfg.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	cfg.Password = ""
	if got := cfg.String(); !strings.Contains(got, "password unset") {
		t.Errorf("String() = %q", got)
	}
}
