package wsmantest

import (
	"context"
	"encoding/base64"
	"strings"
)

// Exit codes the fake reports for a command ended by a Signal before it
// finished. Real Windows reports whatever the killed process's code is; the
// fake picks these.
const (
	// TerminatedExitCode is the exit code of a command ended by
	// SignalTerminate (or by the deletion of its shell).
	TerminatedExitCode = 1
	// CtrlCExitCode is the exit code of a command ended by SignalCtrlC:
	// STATUS_CONTROL_C_EXIT, what Windows gives a process CTRL+C ends.
	CtrlCExitCode = 0xC000013A
)

// shell is a cmd shell the server created.
type shell struct {
	id       string
	options  map[string]string
	deleted  bool
	commands map[string]*command
}

// command is a command started in a shell. Its fields are guarded by the
// server's mutex.
type command struct {
	id    string
	shell *shell
	// command and args are the command line as sent.
	command string
	args    []string
	inv     invocation

	stdin   []byte
	sawSend bool
	// consoleStdin: the Command asked for console-mode stdin
	// (WINRS_CONSOLEMODE_STDIN=TRUE).
	consoleStdin bool
	stdinClosed  bool
	started      bool
	// done is set when the command has ended (its reply is in, or it was
	// signalled); exitCode is then valid.
	done       bool
	terminated bool
	exitCode   int
	// out is the output not yet received.
	out []outChunk
	// event is a one-shot fault or drop for the next Receive.
	event *outcome
	// notify is closed, and replaced, whenever the command changes.
	notify chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

// outChunk is output waiting to be received.
type outChunk struct {
	stream string
	data   []byte
}

// changed wakes whoever waits on the command. The server's mutex must be held.
func (c *command) changed() {
	close(c.notify)
	c.notify = make(chan struct{})
}

// end ends a command that has not ended yet, as a signal does. The server's
// mutex must be held.
func (c *command) end(exitCode int) {
	if !c.done {
		c.done = true
		c.terminated = true
		c.exitCode = exitCode
		c.event = nil
	}
	c.cancel()
	c.changed()
}

// lookupShell finds a live shell. The server's mutex must be held.
func (s *Server) lookupShell(id string) (*shell, *Fault) {
	sh := s.shells[id]
	if sh == nil || sh.deleted {
		return nil, ShellNotFoundFault(id)
	}
	return sh, nil
}

// lookupCommand finds a command of a live shell. The server's mutex must be
// held.
func (s *Server) lookupCommand(shellID, commandID string) (*command, *Fault) {
	sh, f := s.lookupShell(shellID)
	if f != nil {
		return nil, f
	}
	c := sh.commands[commandID]
	if c == nil {
		return nil, commandNotFoundFault(shellID, commandID)
	}
	return c, nil
}

// joinCommandLine joins a command and its arguments with spaces.
func joinCommandLine(command string, args []string) string {
	return strings.Join(append([]string{command}, args...), " ")
}

// decodeStream decodes a stream's base64 content.
func decodeStream(data string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimSpace(data))
}
