package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runTool(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestEnv(t *testing.T) {
	t.Setenv("WINCONFORM_TEST_VAR", "s3cr=t value")
	if code, out, _ := runTool(t, "env", "WINCONFORM_TEST_VAR"); code != exitOK || out != "s3cr=t value" {
		t.Errorf("env = %d %q", code, out)
	}
	if code, _, errOut := runTool(t, "env", "WINCONFORM_TEST_UNSET"); code != exitFailure || !strings.Contains(errOut, "WINCONFORM_TEST_UNSET is not set") {
		t.Errorf("unset: %d %q", code, errOut)
	}
	if code, _, _ := runTool(t, "env"); code != exitUsage {
		t.Errorf("no name: %d", code)
	}
}

func TestCatAndWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if code, _, errOut := runTool(t, "write", p, "hello\nworld"); code != exitOK {
		t.Fatalf("write: %d %s", code, errOut)
	}
	if code, out, _ := runTool(t, "cat", p); code != exitOK || out != "hello\nworld" {
		t.Errorf("cat = %d %q", code, out)
	}
	// A path under a regular file fails for any user, root included.
	bad := filepath.Join(p, "under-a-file")
	if code, _, errOut := runTool(t, "write", bad, "x"); code != exitFailure || !strings.Contains(errOut, "not a directory") {
		t.Errorf("write under a file: %d %q", code, errOut)
	}
	if code, _, errOut := runTool(t, "cat", bad); code != exitFailure || !strings.Contains(errOut, "probe cat:") {
		t.Errorf("cat of nothing: %d %q", code, errOut)
	}
}

func TestWhoami(t *testing.T) {
	code, out, _ := runTool(t, "whoami")
	if code != exitOK {
		t.Fatalf("whoami exit %d", code)
	}
	var id identity
	if err := json.Unmarshal([]byte(out), &id); err != nil {
		t.Fatalf("whoami printed %q: %v", out, err)
	}
	me, _ := user.Current()
	if id.UID != me.Uid || id.Username != me.Username {
		t.Errorf("whoami = %+v, want uid %s user %s", id, me.Uid, me.Username)
	}
}

func TestPost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		w.Write([]byte("done"))
	}))
	defer srv.Close()
	if code, out, _ := runTool(t, "post", srv.URL); code != exitOK || out != "done" {
		t.Errorf("post = %d %q", code, out)
	}
	if code, _, errOut := runTool(t, "post", srv.URL+"/%zz"); code != exitUsage || errOut == "" {
		t.Errorf("bad URL: %d %q", code, errOut)
	}
}

func TestExitEndpointAnswersThenExits(t *testing.T) {
	s := newServer("x", &bytes.Buffer{})
	exited := make(chan int, 1)
	s.exit = func(code int) { exited <- code }
	srv := httptest.NewServer(s.handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/exit", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /exit = %s", resp.Status)
	}
	select {
	case code := <-exited:
		if code != exitCode {
			t.Errorf("exit code %d, want %d", code, exitCode)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the server did not exit")
	}
	if r, err := http.Get(srv.URL + "/exit"); err == nil {
		r.Body.Close()
		if r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET /exit = %s, want 405", r.Status)
		}
	}
}
