package gotool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestOnceFillsAtomically(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "bin", "tool-v1")
	calls := 0
	err := Once(dir, func(tmp string) error {
		calls++
		if tmp == dir {
			t.Error("f fills the final directory itself")
		}
		if fi, err := os.Stat(tmp); err != nil || !fi.IsDir() {
			t.Errorf("f got no directory to fill: %v", err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the final directory exists while it is being filled: %v", err)
		}
		return os.WriteFile(filepath.Join(tmp, "tool"), []byte("binary"), 0o755)
	})
	if err != nil {
		t.Fatalf("Once: %v", err)
	}
	if calls != 1 {
		t.Errorf("f called %d times", calls)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "tool")); err != nil || string(data) != "binary" {
		t.Errorf("dir/tool = %q, %v", data, err)
	}
	if _, err := os.Stat(dir + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary directory left behind: %v", err)
	}

	// Filled once: a second call does nothing.
	err = Once(dir, func(string) error {
		calls++
		return errors.New("must not run")
	})
	if err != nil || calls != 1 {
		t.Errorf("second Once: err %v, f called %d times", err, calls)
	}
}

func TestOnceLeavesNothingOnFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tool-v1")
	boom := errors.New("compile error")
	err := Once(dir, func(tmp string) error {
		// Half the work done, then a failure.
		if err := os.WriteFile(filepath.Join(tmp, "half"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Once error = %v, want f's", err)
	}
	for _, p := range []string{dir, dir + ".tmp"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed fill (%v)", p, err)
		}
	}
	// The next call tries again.
	ran := false
	if err := Once(dir, func(string) error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("retry after failure: ran %v, err %v", ran, err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("retry did not fill the directory: %v", err)
	}
}

func TestOnceDiscardsInterruptedFill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tool-v1")
	// An earlier run was killed while filling.
	if err := os.MkdirAll(dir+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir+".tmp", "stale"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Once(dir, func(tmp string) error {
		entries, _ := os.ReadDir(tmp)
		if len(entries) != 0 {
			t.Errorf("f starts with leftovers: %v", entries)
		}
		return os.WriteFile(filepath.Join(tmp, "fresh"), nil, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale")); !os.IsNotExist(err) {
		t.Error("the interrupted fill's file made it into the directory")
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh")); err != nil {
		t.Error(err)
	}
}

func TestOnceCannotMakeDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ran := false
	if err := Once(filepath.Join(file, "sub"), func(string) error { ran = true; return nil }); err == nil || ran {
		t.Errorf("Once under a regular file: err %v, ran %v", err, ran)
	}
}

// The commands below write to stdout or to stderr, never to both: Run
// copies the two concurrently (see TestRunWritesOutputSerially).

func TestRunWritesLogAndUsesDirAndEnv(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	err := Run(context.Background(), &log, dir, []string{"WINCONFORM_TEST_VAR=hello"}, "/bin/sh", "-c", `echo "out $WINCONFORM_TEST_VAR"; pwd`)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := log.String()
	if !strings.HasPrefix(got, "$ sh -c ") {
		t.Errorf("log does not start with the command line: %q", got)
	}
	for _, want := range []string{"out hello\n", dir + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q lacks %q", got, want)
		}
	}
	// Standard error goes to the log too.
	log.Reset()
	if err := Run(context.Background(), &log, "", nil, "/bin/sh", "-c", "echo warning >&2"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(log.String(), "\nwarning\n") {
		t.Errorf("stderr not logged: %q", log.String())
	}
	// The environment is added to this process's, not a replacement.
	t.Setenv("WINCONFORM_PARENT_VAR", "inherited")
	log.Reset()
	if err := Run(context.Background(), &log, "", nil, "/bin/sh", "-c", `echo "$WINCONFORM_PARENT_VAR"`); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "inherited\n") {
		t.Errorf("parent environment not passed: %q", log.String())
	}
	// A nil log is fine.
	if err := Run(context.Background(), nil, "", nil, "/bin/sh", "-c", "echo x"); err != nil {
		t.Errorf("nil log: %v", err)
	}
}

func TestRunErrorCarriesOutputTail(t *testing.T) {
	// 2000 bytes of early output, then the lines that explain the failure.
	script := `{ i=0; while [ $i -lt 100 ]; do echo "early line number $i"; i=$((i+1)); done
echo "main.go:12: undefined: foo"
echo "FAIL build"; } >&%d; exit 2`
	for _, fd := range []int{1, 2} {
		var log bytes.Buffer
		s := fmt.Sprintf(script, fd)
		err := Run(context.Background(), &log, "", nil, "/bin/sh", "-c", s, "extra1", "extra2")
		if err == nil {
			t.Fatal("a failing command returned no error")
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "sh -c "+s[:10]) {
			t.Errorf("fd %d: error does not name the command: %q", fd, msg[:min(len(msg), 80)])
		}
		if !strings.Contains(msg, " ...: exit status 2: ") {
			t.Errorf("fd %d: error does not elide further arguments and give the exit status: %q", fd, msg)
		}
		if !strings.HasSuffix(msg, "main.go:12: undefined: foo\nFAIL build") {
			t.Errorf("fd %d: error does not end with the output's last lines: %q", fd, msg[max(0, len(msg)-120):])
		}
		if strings.Contains(msg, "early line number 0\n") || len(msg) > 1000 {
			t.Errorf("fd %d: error carries the whole output, not its tail (%d bytes)", fd, len(msg))
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("fd %d: error does not wrap the exit status: %v", fd, err)
		}
		// The log has everything.
		if !strings.Contains(log.String(), "early line number 0\n") || !strings.Contains(log.String(), "FAIL build") {
			t.Errorf("fd %d: the log lost output", fd)
		}
	}
}

// overlapWriter records whether two Writes were ever in progress at once.
type overlapWriter struct {
	inflight, overlaps atomic.Int32
}

func (w *overlapWriter) Write(p []byte) (int, error) {
	if w.inflight.Add(1) > 1 {
		w.overlaps.Add(1)
	}
	time.Sleep(time.Millisecond)
	w.inflight.Add(-1)
	return len(p), nil
}

func TestRunWritesOutputSerially(t *testing.T) {
	var w overlapWriter
	script := `i=0; while [ $i -lt 2000 ]; do echo "stdout $i"; echo "stderr $i" >&2; i=$((i+1)); done`
	if err := Run(context.Background(), &w, "", nil, "/bin/sh", "-c", script); err != nil {
		t.Fatal(err)
	}
	if n := w.overlaps.Load(); n > 0 {
		t.Errorf("the log was written from two goroutines at once %d times", n)
	}
}

func TestRunMissingCommandAndCancel(t *testing.T) {
	err := Run(context.Background(), nil, "", nil, filepath.Join(t.TempDir(), "nope"), "a")
	if err == nil || !strings.HasPrefix(err.Error(), "nope a: ") {
		t.Errorf("missing command: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := Run(ctx, nil, "", nil, "sleep", "30"); err == nil {
		t.Error("a cancelled command succeeded")
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Run ignored its context for %s", time.Since(start))
	}
}

func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte(strings.Repeat("a", 500)))
	tb.Write([]byte(strings.Repeat("b", 500)))
	if len(tb.b) != 800 {
		t.Fatalf("kept %d bytes, want 800", len(tb.b))
	}
	if got := tb.String(); got != strings.Repeat("a", 300)+strings.Repeat("b", 500) {
		t.Errorf("tail = %q", got)
	}
	n, err := tb.Write([]byte("xyz"))
	if n != 3 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
	var small tailBuffer
	small.Write([]byte("  short \n"))
	if small.String() != "short" {
		t.Errorf("String = %q", small.String())
	}
}

func TestFirstArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"build"}, "build"},
		{[]string{"build", "-o", "x"}, "build -o x"},
		{[]string{"build", "-o", "x", "./..."}, "build -o x ..."},
	} {
		if got := firstArgs(tc.args); got != tc.want {
			t.Errorf("firstArgs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// fakeGoOnPath puts a go command on PATH that logs its arguments and
// environment and runs body.
func fakeGoOnPath(t *testing.T, body string) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "go.log")
	script := `#!/bin/sh
echo "args: $*" >> '` + log + `'
echo "GOWORK=$GOWORK GOFLAGS=[$GOFLAGS] CGO_ENABLED=$CGO_ENABLED GO111MODULE=$GO111MODULE GOBIN=$GOBIN pwd=$(pwd)" >> '` + log + `'
` + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return log
}

func TestGoIgnoresWorkspaceAndGOFLAGS(t *testing.T) {
	log := fakeGoOnPath(t, "")
	t.Setenv("GOFLAGS", "-mod=vendor")
	t.Setenv("GOWORK", "/somewhere/go.work")
	dir := t.TempDir()
	if err := Go(context.Background(), nil, dir, []string{"CGO_ENABLED=0"}, "build", "./..."); err != nil {
		t.Fatalf("Go: %v", err)
	}
	data, _ := os.ReadFile(log)
	got := string(data)
	for _, want := range []string{"args: build ./...\n", "GOWORK=off ", "GOFLAGS=[] ", "CGO_ENABLED=0 ", "pwd=" + dir} {
		if !strings.Contains(got, want) {
			t.Errorf("go ran with %q, lacking %q", got, want)
		}
	}
}

func TestGoNotOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := Go(context.Background(), nil, "", nil, "version")
	if err == nil || !strings.Contains(err.Error(), "the go tool is not on PATH") {
		t.Errorf("Go without go: %v", err)
	}
}

func TestInstall(t *testing.T) {
	log := fakeGoOnPath(t, `for a in "$@"; do pkg=$a; done; pkg=${pkg%@*}; echo bin > "$GOBIN/${pkg##*/}"`)
	dir := filepath.Join(t.TempDir(), "bin", "coredns-v1.12.1")
	if err := Install(context.Background(), nil, dir, "github.com/coredns/coredns@v1.12.1"); err != nil {
		t.Fatalf("Install: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "coredns")); err != nil {
		t.Errorf("binary not in dir: %v", err)
	}
	data, _ := os.ReadFile(log)
	got := string(data)
	for _, want := range []string{
		"args: install -ldflags -s -w github.com/coredns/coredns@v1.12.1\n",
		"CGO_ENABLED=0 ", "GO111MODULE=on ", "GOBIN=" + dir + ".tmp ", "GOWORK=off ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("go ran with %q, lacking %q", got, want)
		}
	}
	// Installed: no second go run.
	if err := Install(context.Background(), nil, dir, "github.com/coredns/coredns@v1.12.1"); err != nil {
		t.Fatal(err)
	}
	if data2, _ := os.ReadFile(log); string(data2) != got {
		t.Error("Install ran go again for an installed binary")
	}
}
