// Package gotool compiles programs with the go tool for the harness's local
// builds: commands whose output goes to a build log and whose errors carry its
// last lines, and cache directories that are filled once and atomically.
package gotool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Run runs name with args in dir (and env added to this process's), writing
// its output to log. A failure's error holds the output's last lines.
func Run(ctx context.Context, log io.Writer, dir string, env []string, name string, args ...string) error {
	if log == nil {
		log = io.Discard
	}
	var tail tailBuffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// One writer for both streams: os/exec then never writes from two goroutines at once.
	out := io.MultiWriter(log, &tail)
	cmd.Stdout, cmd.Stderr = out, out
	fmt.Fprintf(log, "$ %s %s\n", filepath.Base(name), strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", filepath.Base(name), firstArgs(args), err, tail.String())
	}
	return nil
}

// Go runs the go tool, outside any workspace and ignoring GOFLAGS.
func Go(ctx context.Context, log io.Writer, dir string, env []string, args ...string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return errors.New("the go tool is not on PATH: local builds compile from the Go module cache, install Go first")
	}
	return Run(ctx, log, dir, append(env, "GOWORK=off", "GOFLAGS="), goBin, args...)
}

// Install compiles pkg@version (a main package from the Go module proxy) as
// a static binary into dir, unless dir already holds it.
func Install(ctx context.Context, log io.Writer, dir, pkgAtVersion string) error {
	return Once(dir, func(tmp string) error {
		return Go(ctx, log, os.TempDir(), []string{"CGO_ENABLED=0", "GOBIN=" + tmp, "GO111MODULE=on"},
			"install", "-ldflags", "-s -w", pkgAtVersion)
	})
}

// Download downloads module@version from the Go module proxy (checked
// against the checksum database) into the module cache and returns its
// directory and its go.mod. The go tool runs in dir, outside any module's
// settings, with env added to this process's environment (GOTOOLCHAIN for
// a module that needs a newer Go than the one on PATH); its standard error
// goes to log.
func Download(ctx context.Context, log io.Writer, dir, moduleAtVersion string, env ...string) (moduleDir, goMod string, err error) {
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", moduleAtVersion)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "GOWORK=off", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = &out, log
	runErr := cmd.Run()
	var info struct{ Dir, GoMod, Error string }
	if jerr := json.Unmarshal(out.Bytes(), &info); jerr == nil && info.Error != "" {
		return "", "", fmt.Errorf("go mod download %s: %s", moduleAtVersion, info.Error)
	}
	if runErr != nil {
		return "", "", fmt.Errorf("go mod download %s: %w", moduleAtVersion, runErr)
	}
	if info.Dir == "" || info.GoMod == "" {
		return "", "", fmt.Errorf("go mod download %s: no directory", moduleAtVersion)
	}
	return info.Dir, info.GoMod, nil
}

// Once fills dir unless it exists: f fills a temporary directory that is
// renamed into place only when f succeeds, so an interrupted build leaves
// nothing that looks finished.
func Once(dir string, f func(tmp string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := f(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return os.Rename(tmp, dir)
}

func firstArgs(args []string) string {
	if len(args) > 3 {
		return strings.Join(args[:3], " ") + " ..."
	}
	return strings.Join(args, " ")
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 800 {
		t.b = t.b[len(t.b)-800:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }
