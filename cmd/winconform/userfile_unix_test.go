//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileFilesRefusedNamingTheFlag: /dev/zero, a FIFO nobody writes, a
// directory and a too-large file, given to each flag that names a file,
// are refused promptly with a message naming the flag and the fix.
func TestHostileFilesRefusedNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // sparse, past every YAML and kubeconfig limit
		t.Fatal(err)
	}
	f.Close()
	inputs := map[string]string{
		"/dev/zero": "is a character device, not a file",
		fifo:        "write it to a file and pass that file's path",
		dir:         "is a directory, not a file",
		big:         "more than a",
	}
	flags := []struct {
		flag string
		args []string
	}{
		{"--inventory", []string{"e2e", "--check", "--inventory"}},
		{"--vms", []string{"vms", "up", "--check", "--vms"}},
		{"--state", []string{"vms", "down", "--state"}},
		{"--policy", []string{"gate", "--check", "--policy"}},
		{"--overrides", []string{"images", "list", "--overrides"}},
		{"--image-overrides", []string{"sonobuoy", "plugin", "--image-overrides"}},
		{"--kubeconfig", []string{"sweep", "--kubeconfig"}},
		{"--config", []string{"up", "--config"}},
	}
	for _, fl := range flags {
		for path, want := range inputs {
			if fl.flag == "--state" && path == dir {
				continue // a run's directory: its state.json is read
			}
			start := time.Now()
			code, _, stderr := runCLI(t, append(append([]string(nil), fl.args...), path)...)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("%s %s: took %s", fl.flag, path, took)
			}
			if code == 0 || !strings.Contains(stderr, fl.flag) || !strings.Contains(stderr, want) {
				t.Errorf("%s %s: exit %d, %q; want the flag and %q", fl.flag, path, code, stderr, want)
			}
		}
	}
}
