package remote_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/wsmantest"
)

func TestWriteTranscript(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
		if strings.Contains(c.Script, "fail") {
			return wsmantest.Reply{Stderr: "#< CLIXML\r\n<Objs Version=\"1.1.0.1\" xmlns=\"http://schemas.microsoft.com/powershell/2004/04\"><S S=\"Error\">it broke_x000D__x000A_</S></Objs>", ExitCode: 1}
		}
		return wsmantest.Reply{Stdout: "fine\r\n"}
	}))
	w := execFor(t, srv, func(c *remote.Config) { c.Name = "win/1 (test)" })
	run(t, w, "first", "Write-Output fine")
	run(t, w, "second", "fail")
	dir := t.TempDir() + "/artifacts"
	if err := w.WriteTranscript(dir); err != nil {
		t.Fatal(err)
	}
	logPath, jsonPath := w.Transcript().Files(dir)
	if !strings.HasSuffix(logPath, "/win_1__test_.transcript.log") {
		t.Errorf("log path %s", logPath)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`=== step "first" on win/1 (test)`, "--- script\nWrite-Output fine\n", "--- stdout\nfine", `=== step "second"`, "exit code 1", "--- stderr\nit broke"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	var entries []remote.Entry
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[1].Step != "second" || entries[1].ExitCode != 1 || entries[0].Duration <= 0 {
		t.Errorf("entries %+v", entries)
	}
}

func TestTranscriptKeepsFailedSteps(t *testing.T) {
	srv := wsmantest.New(t, wsmantest.WithHandler(reply(wsmantest.Reply{Delay: time.Minute})))
	w := execFor(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	w.RunPS(ctx, "stuck", "Wait-Forever")
	entries := w.Transcript().Entries()
	if len(entries) != 1 || entries[0].ExitCode != -1 || !strings.Contains(entries[0].Error, "deadline") {
		t.Errorf("entries %+v", entries)
	}
}
