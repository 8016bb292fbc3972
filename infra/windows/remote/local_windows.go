package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Local runs PowerShell on this machine the way WinRM runs it on a remote
// one: the same command line (powershell.exe -NoProfile -NonInteractive
// -EncodedCommand with the script, or with the stdin bootstrap and the
// script on stdin), run by cmd.exe as WinRM's shell runs it, with pipes for
// stdin (as the harness asks WinRM for pipe-mode stdin), stdout and stderr
// and no console. It exists for the Windows runners, whose tests put the
// harness's command lines and scripts through the real powershell.exe
// without WinRM; the harness itself always uses WinRM.
type Local struct {
	// MachineName names the machine in results; "local" when empty.
	MachineName string
	// MaxCommandLine is the longest command line sent as is, as in Config;
	// MaxCommandLine when 0.
	MaxCommandLine int
}

var _ Exec = Local{}

// Name is the machine's name.
func (l Local) Name() string {
	if l.MachineName == "" {
		return "local"
	}
	return l.MachineName
}

// RunPS runs script and returns what it printed and its exit code. ctx
// bounds the run: when it ends, the process is killed and the error wraps
// ctx.Err().
func (l Local) RunPS(ctx context.Context, step, script string) (Result, error) {
	res := Result{Machine: l.Name(), Step: step, Started: time.Now(), ExitCode: -1}
	limit := l.MaxCommandLine
	if limit <= 0 {
		limit = MaxCommandLine
	}
	cmdline, stdin, err := commandFor(script, limit)
	if err != nil {
		return res, &Error{Machine: res.Machine, Step: step, Op: "encoding the script", Detail: err.Error()}
	}
	cmd := shellCommand(ctx, cmdline)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	res.Duration = time.Since(res.Started)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, &Error{Machine: res.Machine, Step: step, Op: "running the script", Kind: ErrTimeout, Detail: "the step's deadline passed", Err: ctx.Err()}
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		return res, &Error{Machine: res.Machine, Step: step, Op: "running the script", Kind: ErrRemote, Detail: err.Error(), Err: err}
	}
	return res, nil
}

// shellCommand is cmdline run as WinRM's shell runs a command: by cmd.exe,
// given the line exactly (no quoting added).
func shellCommand(ctx context.Context, cmdline string) *exec.Cmd {
	shell := os.Getenv("ComSpec")
	if shell == "" {
		shell = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	cmd := exec.CommandContext(ctx, shell)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /c ` + cmdline}
	return cmd
}
