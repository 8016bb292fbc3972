package docker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the docker shim: the shim tests run
// this very binary through a symlink named docker, as the harness does.
func TestMain(m *testing.M) {
	if IsShim(os.Args[0]) {
		os.Exit(ShimMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeDocker writes an executable shell script standing in for the docker
// CLI and returns its path. body runs with the script's arguments in "$@".
func fakeDocker(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "fake-docker")
	script := "#!/bin/sh\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// callLog is a file a fake docker appends its invocations to: each
// invocation's arguments one per line, then a line "--".
type callLog string

func newCallLog(t *testing.T) callLog {
	t.Helper()
	return callLog(filepath.Join(t.TempDir(), "calls.log"))
}

// record is the shell snippet that logs one invocation.
func (l callLog) record() string {
	return `printf '%s\n' "$@" >> '` + string(l) + `'; echo -- >> '` + string(l) + `'`
}

// calls returns the logged invocations, each as its argument list.
func (l callLog) calls(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(string(l))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "--" {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return out
}
