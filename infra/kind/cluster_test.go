package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kinderrors "sigs.k8s.io/kind/pkg/errors"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

func runError(output string) *kindexec.RunError {
	return &kindexec.RunError{
		Command: []string{"docker", "run", "--name", "wc-control-plane"},
		Output:  []byte(output),
		Inner:   errors.New("exit status 125"),
	}
}

func TestDescribeKindErrorAddsOutput(t *testing.T) {
	re := runError("docker: Error response from daemon: OCI runtime create failed:\n\nunable to apply caps: operation not permitted: unknown.\n")
	// kind wraps its command errors with pkg/errors.
	err := kinderrors.Wrap(re, "failed to create cluster")
	got := describeKindError(err)
	if !errors.Is(got, err) {
		t.Error("the described error does not wrap kind's")
	}
	want := err.Error() + ": docker: Error response from daemon: OCI runtime create failed: | unable to apply caps: operation not permitted: unknown."
	if got.Error() != want {
		t.Errorf("describeKindError =\n%q\nwant\n%q", got.Error(), want)
	}
}

func TestDescribeKindErrorKeepsLastSixLines(t *testing.T) {
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i), "   ")
	}
	got := describeKindError(kinderrors.Wrap(runError(strings.Join(lines, "\n")), "kind"))
	msg := got.Error()
	if !strings.HasSuffix(msg, ": line 5 | line 6 | line 7 | line 8 | line 9 | line 10") {
		t.Errorf("describeKindError = %q, want the last six non-blank lines", msg)
	}
	if strings.Contains(msg, "line 4 ") {
		t.Errorf("older lines kept: %q", msg)
	}
}

func TestDescribeKindErrorWithoutOutput(t *testing.T) {
	plain := errors.New("node(s) already exist for a cluster with the name \"wc\"")
	if got := describeKindError(plain); got != plain {
		t.Errorf("an error without command output changed: %v", got)
	}
	silent := kinderrors.Wrap(runError("\n  \n"), "kind")
	if got := describeKindError(silent); got != silent {
		t.Errorf("an error with blank output changed: %v", got)
	}
}

func TestNewNeedsDocker(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := New(context.Background(), DefaultConfig(), Options{}); err == nil || !strings.Contains(err.Error(), "docker CLI not found") {
		t.Errorf("New without docker: %v", err)
	}

	// A docker CLI whose daemon is down.
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	_, err := New(context.Background(), DefaultConfig(), Options{})
	if err == nil || !strings.Contains(err.Error(), "docker is not running (Cannot connect to the Docker daemon") {
		t.Errorf("New with the daemon down: %v", err)
	}
}
