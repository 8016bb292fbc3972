package remote

import (
	"context"
	"time"

	"github.com/winconform/winconform/internal/text"
)

// Exec runs PowerShell on one machine.
type Exec interface {
	// RunPS runs script with PowerShell; ctx bounds it (a deadline or cancel
	// stops the remote command: Signal terminate, then Delete the shell) and
	// the returned error says which step timed out.
	RunPS(ctx context.Context, step, script string) (Result, error)
	// Name is the machine's name.
	Name() string
}

// Result is what a step did. RunPS returns one even with an error: the
// output received until then, and ExitCode -1.
type Result struct {
	// Machine and Step say what ran where.
	Machine string
	Step    string
	// Stdout and Stderr are the script's output, as received. PowerShell
	// writes errors to stderr as CLIXML; StderrText decodes it.
	Stdout, Stderr string
	// ExitCode is the script's exit code; -1 when it did not finish.
	ExitCode int
	// Started is when the step started, Duration how long it took.
	Started  time.Time
	Duration time.Duration
}

// stderrTailLines is how many lines of stderr an *ExitError keeps.
const stderrTailLines = 10

// Err returns nil for a zero exit code, else an *ExitError (errors.Is
// ErrExit) with the last lines of stderr.
func (r Result) Err() error {
	if r.ExitCode == 0 {
		return nil
	}
	return &ExitError{Machine: r.Machine, Step: r.Step, ExitCode: r.ExitCode, StderrTail: text.LastLines(r.StderrText(), stderrTailLines)}
}

// StderrText is Stderr with PowerShell's CLIXML error records decoded to
// plain text.
func (r Result) StderrText() string { return decodeCLIXML(r.Stderr) }
