package wsmantest

import (
	"context"
	"strings"
	"time"
)

// Handler scripts the machine: it is called once per command, when the
// command runs, and says what the command prints and how it ends. It runs on
// its own goroutine and may block; c.Ctx is cancelled when the command is
// signalled, its shell deleted or the server closed.
type Handler func(c *Call) Reply

// Call is one command run by the machine.
type Call struct {
	// ShellID and CommandID identify the command.
	ShellID, CommandID string
	// Command and Arguments are the command line exactly as the client sent
	// them (rsp:Command and rsp:Arguments).
	Command   string
	Arguments []string
	// PowerShell is true when the command line runs powershell.exe or pwsh.
	PowerShell bool
	// Script is the PowerShell script the command runs: the decoded
	// -EncodedCommand (without winrm's "$ProgressPreference =
	// 'SilentlyContinue';" preamble), the text after -Command, or, when
	// ViaStdin, the script read from stdin.
	Script string
	// ViaStdin is true when Script arrived on stdin: "-Command -", or a stdin
	// bootstrap (see StdinBootstrapMarker).
	ViaStdin bool
	// Bootstrap is the decoded stdin bootstrap when Script came through one.
	Bootstrap string
	// Stdin is everything the client sent on stdin, in order.
	Stdin []byte
	// Ctx is cancelled when the command is signalled, its shell deleted or
	// the server closed.
	Ctx context.Context
}

// CommandLine is Command followed by Arguments, separated by spaces.
func (c *Call) CommandLine() string {
	return strings.Join(append([]string{c.Command}, c.Arguments...), " ")
}

// Reply is what a command does.
type Reply struct {
	// Stdout and Stderr are the command's output. Output larger than a
	// Receive response allows is split over several Receives, as WinRM does.
	Stdout, Stderr string
	// ExitCode is the command's exit code.
	ExitCode int
	// Delay makes the command run that long before its output and exit code
	// appear; Receives meanwhile long-poll (and end in w:TimedOut after the
	// request's OperationTimeout, as on a real machine). A Signal or Delete
	// ends the wait.
	Delay time.Duration
	// Fault makes the first Receive after Delay answer with this SOAP fault
	// instead of output; later Receives answer normally.
	Fault *Fault
	// Drop makes the server close the connection of the first Receive after
	// Delay without answering; later Receives answer normally.
	Drop bool
}

// Injection is what an Intercept does to a request before the server acts on
// it. The zero Injection lets the request through.
type Injection struct {
	// Delay holds the request that long before going on.
	Delay time.Duration
	// Fault answers the request with this SOAP fault; the server does not act
	// on it (a failed Create creates no shell).
	Fault *Fault
	// Drop closes the connection without answering; the server does not act
	// on the request.
	Drop bool
	// SignatureSize frames the sealed answer's NTLM signature as this many
	// bytes, cut or padded with zeros, as a broken or hostile peer would
	// (an NTLM signature is 16 bytes, MS-NLMP 2.2.2.9.1); 0 leaves it whole.
	// The server acts on the request.
	SignatureSize int
}

// Intercept is consulted for every authenticated request, with the request as
// recorded so far (Seq, Action, ShellID, CommandID...), before the server acts
// on it.
type Intercept func(r Request) Injection

// FaultAction is an Intercept that answers every request for action with
// fault.
func FaultAction(action Action, fault *Fault) Intercept {
	return func(r Request) Injection {
		if r.Action == action {
			return Injection{Fault: fault}
		}
		return Injection{}
	}
}

// DropRequest is an Intercept that drops the connection of the n-th request
// the server receives (counting from 1, as Request.Seq does).
func DropRequest(n int) Intercept {
	return func(r Request) Injection {
		return Injection{Drop: r.Seq == n}
	}
}

// DelayAction is an Intercept that holds every request for action for d.
func DelayAction(action Action, d time.Duration) Intercept {
	return func(r Request) Injection {
		if r.Action == action {
			return Injection{Delay: d}
		}
		return Injection{}
	}
}

// Intercepts combines intercepts: the first one that injects anything wins.
func Intercepts(list ...Intercept) Intercept {
	return func(r Request) Injection {
		for _, in := range list {
			if in == nil {
				continue
			}
			if inj := in(r); inj != (Injection{}) {
				return inj
			}
		}
		return Injection{}
	}
}
