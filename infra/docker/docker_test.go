package docker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/internal/text"
)

func TestNewFindsDockerOnPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "docker")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	c, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c.Bin != bin {
		t.Errorf("Bin = %q, want %q", c.Bin, bin)
	}
}

func TestNewWithoutDocker(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	c, err := New()
	if err == nil {
		t.Fatalf("New found %+v on an empty PATH", c)
	}
	for _, want := range []string{"docker CLI not found on PATH", "apt-get install -y docker.io"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestOutputReturnsStdoutAndPassesArgsAndStdin(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record()+`
echo "out: $1"
cat >&2
cat`)
	c := &Client{Bin: bin}
	out, err := c.Output(context.Background(), strings.NewReader("from stdin"), "load", "-q")
	if err != nil {
		t.Fatalf("Output: %v", err)
	}
	if got := string(out); got != "out: load\n" {
		t.Errorf("stdout = %q, want only stdout (not stderr) of the command", got)
	}
	calls := log.calls(t)
	if len(calls) != 1 || !slices.Equal(calls[0], []string{"load", "-q"}) {
		t.Errorf("docker called with %q, want [[load -q]]", calls)
	}

	// stdin reaches the command.
	bin = fakeDocker(t, `cat`)
	out, err = (&Client{Bin: bin}).Output(context.Background(), strings.NewReader("payload"), "x")
	if err != nil || string(out) != "payload" {
		t.Errorf("stdin not passed through: out=%q err=%v", out, err)
	}
}

func TestOutputFailureIsRunErrorWithStderr(t *testing.T) {
	bin := fakeDocker(t, `echo partial; echo "Error: No such image: foo" >&2; exit 3`)
	c := &Client{Bin: bin}
	out, err := c.Output(context.Background(), nil, "image", "inspect", "foo")
	if err == nil {
		t.Fatal("a failing command returned no error")
	}
	if string(out) != "partial\n" {
		t.Errorf("stdout of the failed command = %q, want it returned too", out)
	}
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("error %T is not a *RunError", err)
	}
	if !slices.Equal(re.Args, []string{"image", "inspect", "foo"}) {
		t.Errorf("RunError.Args = %q", re.Args)
	}
	if strings.TrimSpace(string(re.Stderr)) != "Error: No such image: foo" {
		t.Errorf("RunError.Stderr = %q", re.Stderr)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("error does not unwrap to the exit status 3: %v", err)
	}
	want := "docker image inspect foo: exit status 3: Error: No such image: foo"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if err := c.Run(context.Background(), "image", "inspect", "foo"); err == nil || err.Error() != want {
		t.Errorf("Run error = %v, want %q", err, want)
	}
}

func TestOutputTimeoutSaysSo(t *testing.T) {
	bin := fakeDocker(t, `exec sleep 30`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := (&Client{Bin: bin}).Output(ctx, nil, "pull", "x")
	if err == nil {
		t.Fatal("a command that outlived its context succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Output took %s after its context expired", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	if !strings.HasPrefix(err.Error(), "docker pull x: context deadline exceeded") {
		t.Errorf("error = %q", err)
	}
}

func TestRunErrorMessage(t *testing.T) {
	inner := errors.New("exit status 1")
	e := &RunError{Args: []string{"ps"}, Err: inner}
	if got := e.Error(); got != "docker ps: exit status 1" {
		t.Errorf("no stderr: %q", got)
	}
	if !errors.Is(e, inner) {
		t.Error("RunError does not unwrap to its Err")
	}

	e = &RunError{Args: []string{"run", "--name", "n", "--hostname", "n", "--label", "a=b", "--privileged", "img"}, Err: inner, Stderr: []byte("  boom\n")}
	if got := e.Error(); got != "docker run --name n --hostname n --label a=b ...: exit status 1: boom" {
		t.Errorf("long command line: %q", got)
	}
	// Exactly 8 arguments are shown in full.
	e.Args = e.Args[:8]
	if got := e.Error(); !strings.HasPrefix(got, "docker run --name n --hostname n --label a=b --privileged: ") {
		t.Errorf("8 arguments: %q", got)
	}

	// Short multi-line output is kept whole.
	e = &RunError{Args: []string{"x"}, Err: inner, Stderr: []byte("one\ntwo\n")}
	if got := e.Error(); got != "docker x: exit status 1: one\ntwo" {
		t.Errorf("short output: %q", got)
	}

	// Long output keeps its last line only.
	long := strings.Repeat("noise noise noise noise\n", 40) + "the real reason"
	e = &RunError{Args: []string{"x"}, Err: inner, Stderr: []byte(long)}
	got := e.Error()
	if !strings.HasSuffix(got, "the real reason") || strings.Contains(got, "noise") || !strings.Contains(got, "...") {
		t.Errorf("long output: %q", got)
	}
}

func TestRunErrorLongOutputIsOneLine(t *testing.T) {
	long := strings.Repeat("noise noise noise noise\n", 40) + "the real reason"
	e := &RunError{Args: []string{"x"}, Err: errors.New("exit status 1"), Stderr: []byte(long)}
	if got := e.Error(); strings.Contains(got, "\n") {
		t.Errorf("error of a long output spans lines: %q", got)
	}
}

func TestTruncateArgs(t *testing.T) {
	short := []string{"a", "b", "c"}
	if got := truncateArgs(short); !slices.Equal(got, short) {
		t.Errorf("truncateArgs(%q) = %q", short, got)
	}
	long := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
	got := truncateArgs(long)
	if !slices.Equal(got, []string{"1", "2", "3", "4", "5", "6", "7", "..."}) {
		t.Errorf("truncateArgs(9 args) = %q", got)
	}
	if long[7] != "8" {
		t.Error("truncateArgs modified its argument")
	}
}

func TestPingReturnsServerVersion(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record()+"\necho ' 24.0.7 '")
	v, err := (&Client{Bin: bin}).Ping(context.Background())
	if err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if v != "24.0.7" {
		t.Errorf("version = %q, want 24.0.7", v)
	}
	calls := log.calls(t)
	if len(calls) != 1 || !slices.Equal(calls[0], []string{"version", "--format", "{{.Server.Version}}"}) {
		t.Errorf("Ping ran docker %q", calls)
	}
}

func TestPingDaemonDown(t *testing.T) {
	bin := fakeDocker(t, `
echo "Client: Docker Engine - Community"
echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
echo "second line that should not be shown" >&2
exit 1`)
	v, err := (&Client{Bin: bin}).Ping(context.Background())
	if err == nil {
		t.Fatalf("Ping of a stopped daemon returned version %q", v)
	}
	msg := err.Error()
	for _, want := range []string{
		"docker is not running",
		"Cannot connect to the Docker daemon at unix:///var/run/docker.sock",
		"start the Docker daemon",
		"systemctl start docker",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "second line") || strings.Contains(msg, "\n") {
		t.Errorf("error should carry only the first line of stderr: %q", msg)
	}
}

func TestPingSilentFailureAndMissingBinary(t *testing.T) {
	bin := fakeDocker(t, `exit 7`)
	_, err := (&Client{Bin: bin}).Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "docker is not running (exit status 7)") {
		t.Errorf("silent failure: %v", err)
	}
	_, err = (&Client{Bin: filepath.Join(t.TempDir(), "no-docker")}).Ping(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "docker is not running (") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing binary: %v", err)
	}
}

func TestImageExists(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record()+`
for a in "$@"; do last=$a; done
[ "$last" = present:1 ]`)
	c := &Client{Bin: bin}
	if !c.ImageExists(context.Background(), "present:1") {
		t.Error("present image reported missing")
	}
	if c.ImageExists(context.Background(), "absent:1") {
		t.Error("absent image reported present")
	}
	calls := log.calls(t)
	if len(calls) != 2 || !slices.Equal(calls[0], []string{"image", "inspect", "--format", "{{.Id}}", "present:1"}) {
		t.Errorf("calls = %q", calls)
	}
}

func TestImageLabel(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record()+`
case "$5" in
  labelled) echo abc123 ;;
  unlabelled) echo '<no value>' ;;
  *) echo "Error: No such image: $5" >&2; exit 1 ;;
esac`)
	c := &Client{Bin: bin}
	v, err := c.ImageLabel(context.Background(), "labelled", "winconform.io/key")
	if err != nil || v != "abc123" {
		t.Errorf("labelled: %q, %v", v, err)
	}
	v, err = c.ImageLabel(context.Background(), "unlabelled", "winconform.io/key")
	if err != nil || v != "" {
		t.Errorf("unset label: %q, %v (want \"\", nil)", v, err)
	}
	if _, err := c.ImageLabel(context.Background(), "missing", "k"); err == nil || !strings.Contains(err.Error(), "No such image: missing") {
		t.Errorf("missing image: %v", err)
	}
	calls := log.calls(t)
	if len(calls) == 0 || !slices.Equal(calls[0], []string{"image", "inspect", "--format", `{{index .Config.Labels "winconform.io/key"}}`, "labelled"}) {
		t.Errorf("calls = %q", calls)
	}
}

func TestPull(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record())
	c := &Client{Bin: bin}
	if err := c.Pull(context.Background(), "kindest/node:v1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if calls := log.calls(t); len(calls) != 1 || !slices.Equal(calls[0], []string{"pull", "--quiet", "kindest/node:v1"}) {
		t.Errorf("calls = %q", calls)
	}
	slow := fakeDocker(t, `exec sleep 30`)
	start := time.Now()
	err := (&Client{Bin: slow}).Pull(context.Background(), "x", 100*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Pull past its timeout: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Pull ignored its timeout (%s)", time.Since(start))
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"one":              "one",
		"\n  one\ntwo\n":   "one",
		"   \n\n  spaced ": "spaced",
	} {
		if got := text.FirstLine(in); got != want {
			t.Errorf("text.FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCgroupVersion(t *testing.T) {
	for out, want := range map[string]int{"1": 1, "2\n": 2} {
		log := newCallLog(t)
		c := &Client{Bin: fakeDocker(t, log.record()+"\nprintf '"+out+"'")}
		got, err := c.CgroupVersion(context.Background())
		if err != nil || got != want {
			t.Errorf("docker info says %q: CgroupVersion = %d, %v; want %d", out, got, err, want)
		}
		if calls := log.calls(t); len(calls) != 1 || !slices.Equal(calls[0], []string{"info", "--format", "{{.CgroupVersion}}"}) {
			t.Errorf("docker called with %q", calls)
		}
	}
	// Docker before 20.10 has no such field: the template prints nothing.
	c := &Client{Bin: fakeDocker(t, "echo")}
	if v, err := c.CgroupVersion(context.Background()); err == nil || !strings.Contains(err.Error(), `cgroup version ""`) {
		t.Errorf("empty answer: %d, %v", v, err)
	}
	c = &Client{Bin: fakeDocker(t, "echo 'Cannot connect to the Docker daemon' >&2; exit 1")}
	if _, err := c.CgroupVersion(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "docker info: ") {
		t.Errorf("failing docker: %v", err)
	}
}
