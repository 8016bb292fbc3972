package remote

import (
	"errors"
	"fmt"
	"strings"
)

// The classes of failure. A *Error is errors.Is-able against one (or, for a
// connect timeout, two) of them.
var (
	// ErrAuth: the machine refused the credentials (HTTP 401).
	ErrAuth = errors.New("authentication failed")
	// ErrUnreachable: no connection could be made (refused, no route, name
	// not found, connect timed out).
	ErrUnreachable = errors.New("machine unreachable")
	// ErrTLS: the TLS handshake failed (untrusted certificate, name
	// mismatch, not TLS at all).
	ErrTLS = errors.New("TLS failure")
	// ErrTimeout: something took too long: the run's context deadline, the
	// connect timeout, the TLS handshake, or the wait for an answer.
	ErrTimeout = errors.New("timed out")
	// ErrRemote: the machine answered with a SOAP fault or an unexpected
	// HTTP answer.
	ErrRemote = errors.New("remote error")
	// ErrConnLost: the connection broke before the machine answered.
	ErrConnLost = errors.New("connection lost")
	// ErrExit: the script ended with a non-zero exit code (see Result.Err).
	ErrExit = errors.New("non-zero exit code")
)

// Unreached says whether err is WinRM failing to reach the machine or to
// hear it out (credentials refused, no connection, TLS, a timeout, the
// connection lost), rather than the machine's own answer (a fault, an exit
// code).
func Unreached(err error) bool {
	for _, class := range []error{ErrAuth, ErrUnreachable, ErrTLS, ErrTimeout, ErrConnLost} {
		if errors.Is(err, class) {
			return true
		}
	}
	return false
}

// Error is a failure of a step on a machine.
type Error struct {
	// Machine is the machine's name.
	Machine string
	// Step is the step, as given to RunPS.
	Step string
	// Op is what was being done, such as "creating the shell" or
	// "receiving output".
	Op string
	// Kind is the class of failure: ErrAuth, ErrUnreachable, ErrTLS,
	// ErrTimeout, ErrRemote, ErrConnLost, or nil when cancelled.
	Kind error
	// Detail explains the failure and, where there is one, the fix.
	Detail string
	// Err is the cause: context.DeadlineExceeded, a *FaultError, a
	// *net.OpError...
	Err error

	// also is a second class, for failures that are two things at once (a
	// connect timeout is ErrTimeout and ErrUnreachable).
	also error
}

// Error reads "machine win-1: step "install": creating the shell: detail".
func (e *Error) Error() string {
	var parts []string
	if e.Machine != "" {
		parts = append(parts, "machine "+e.Machine)
	}
	if e.Step != "" {
		parts = append(parts, fmt.Sprintf("step %q", e.Step))
	}
	if e.Op != "" {
		parts = append(parts, e.Op)
	}
	var b strings.Builder
	b.WriteString(strings.Join(parts, ": "))
	detail := e.Detail
	if detail == "" && e.Kind != nil {
		detail = e.Kind.Error()
	}
	for _, s := range []string{detail, e.cause(detail)} {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// cause is the cause's text, unless detail says it already.
func (e *Error) cause(detail string) string {
	if e.Err == nil || strings.Contains(detail, e.Err.Error()) {
		return ""
	}
	return e.Err.Error()
}

// Unwrap returns the error's classes and its cause.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Kind, e.also, e.Err} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// FaultError is a SOAP fault the machine answered with.
type FaultError struct {
	// Code is the SOAP code (s:Receiver, s:Sender), Subcode the
	// WS-Management one (w:TimedOut, w:InvalidSelectors...).
	Code, Subcode string
	// Reason is the s:Reason text.
	Reason string
	// WSManCode is the Windows error number of the f:WSManFault detail.
	WSManCode string
	// Message is the f:Message text, often more precise than Reason.
	Message string
	// Status is the HTTP status of the answer.
	Status int
}

// Error reads "WS-Management fault w:Subcode: message [code N]". A
// w:TimedOut fault always mentions OperationTimeout: that is how
// masterzen/winrm tells a Receive that found no new output from a failure.
func (f *FaultError) Error() string {
	text := strings.TrimSpace(f.Message)
	if reason := strings.TrimSpace(f.Reason); text == "" {
		text = reason
	} else if reason != "" && !strings.Contains(text, reason) && f.Subcode != "w:TimedOut" {
		text = reason + " " + text
	}
	sub := f.Subcode
	if sub == "" {
		sub = f.Code
	}
	s := "WS-Management fault " + sub + ": " + text
	if f.Subcode == "w:TimedOut" && !strings.Contains(s, "OperationTimeout") {
		s += " (OperationTimeout)"
	}
	if f.WSManCode != "" {
		s += " [code " + f.WSManCode + "]"
	}
	return s
}

// Is makes every fault an ErrRemote.
func (f *FaultError) Is(target error) bool { return target == ErrRemote }

// ExitError is a script that ended with a non-zero exit code.
type ExitError struct {
	Machine, Step string
	ExitCode      int
	// StderrTail is the last lines of the script's stderr (CLIXML decoded).
	StderrTail string
}

// Error reads "machine win-1: step "install" exited with code 1: <stderr tail>".
func (e *ExitError) Error() string {
	s := fmt.Sprintf("machine %s: step %q exited with code %d", e.Machine, e.Step, e.ExitCode)
	if e.StderrTail != "" {
		s += ": " + e.StderrTail
	}
	return s
}

// Is makes an *ExitError an ErrExit.
func (e *ExitError) Is(target error) bool { return target == ErrExit }
