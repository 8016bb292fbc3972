package wsmantest

import (
	"encoding/base64"
	"fmt"
	"time"
)

// streamChunk is the most output one rsp:Stream element carries: WinRM
// passes a process's output on in pieces of a few KiB, several to a Receive
// response.
const streamChunk = 4096

// maybeStart runs a command that is ready: one that reads stdin once its
// stdin is closed, any other at once. The server's mutex must be held.
func (s *Server) maybeStart(c *command) {
	if c.started || c.done {
		return
	}
	readsToEnd := c.inv.readsStdin() || s.cfg.waitForStdin
	if (readsToEnd || c.sawSend) && !c.stdinClosed {
		return
	}
	if readsToEnd && c.consoleStdin {
		// Console-mode stdin (WINRS_CONSOLEMODE_STDIN=TRUE): the end of
		// the stream is not the end of a console's input, and a process
		// that reads its stdin to the end waits until it is stopped.
		return
	}
	c.started = true
	call := &Call{
		ShellID:    c.shell.id,
		CommandID:  c.id,
		Command:    c.command,
		Arguments:  append([]string(nil), c.args...),
		PowerShell: c.inv.powershell,
		Script:     c.inv.script,
		Stdin:      append([]byte(nil), c.stdin...),
		Ctx:        c.ctx,
	}
	// What PowerShell itself would fail at, the fake fails at too, without
	// calling the handler.
	var failed *Reply
	switch {
	case c.inv.err != nil:
		failed = &Reply{Stderr: "powershell.exe: " + c.inv.err.Error() + "\r\n", ExitCode: 1}
	case c.inv.bootstrap:
		script, err := decodeBootstrapStdin(c.stdin)
		if err != nil {
			failed = &Reply{Stderr: err.Error() + "\r\n", ExitCode: 1}
			break
		}
		call.Bootstrap, call.Script, call.ViaStdin = c.inv.script, script, true
	case c.inv.stdinScript:
		call.Script, call.ViaStdin = stdinText(c.stdin), true
	}
	if failed != nil {
		s.complete(c, *failed)
		return
	}
	s.calls = append(s.calls, call)
	handler := s.handler
	go s.run(c, *call, handler)
}

// run calls the handler for a command and makes its reply the command's
// result.
func (s *Server) run(c *command, call Call, h Handler) {
	reply := callHandler(h, &call)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		t.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.complete(c, reply)
}

// callHandler calls h, turning a panic into a failed command.
func callHandler(h Handler, call *Call) (reply Reply) {
	if h == nil {
		return Reply{}
	}
	defer func() {
		if r := recover(); r != nil {
			reply = Reply{Stderr: fmt.Sprintf("wsmantest: the handler panicked: %v\r\n", r), ExitCode: 1}
		}
	}()
	return h(call)
}

// complete makes reply the result of a command that has not ended. The
// server's mutex must be held.
func (s *Server) complete(c *command, reply Reply) {
	if c.done {
		return // signalled meanwhile
	}
	switch {
	case reply.Fault != nil:
		c.event = &outcome{fault: reply.Fault}
	case reply.Drop:
		c.event = &outcome{drop: true}
	}
	if reply.Stdout != "" {
		c.out = append(c.out, outChunk{stream: "stdout", data: []byte(reply.Stdout)})
	}
	if reply.Stderr != "" {
		c.out = append(c.out, outChunk{stream: "stderr", data: []byte(reply.Stderr)})
	}
	c.exitCode = reply.ExitCode
	c.done = true
	c.changed()
}

// takeOutput renders a Receive response body with as much of the command's
// waiting output as the client's MaxEnvelopeSize (and the server's
// WithMaxOutputPerReceive) allow, and, once all output is out and the
// command has ended, the ends of the streams and the Done state with the
// exit code. The server's mutex must be held.
func (s *Server) takeOutput(c *command, relatesTo string, maxEnvelope int) (string, *Fault) {
	const openTag, closeTag = "<rsp:ReceiveResponse>", "</rsp:ReceiveResponse>"
	tail := streamXML("stdout", c.id, "", true) + streamXML("stderr", c.id, "", true) +
		commandStateXML(c.id, true, -2147483648)
	overhead := len(soapEnvelope(ActionReceive.responseURI(), relatesTo, openTag+closeTag)) + len(tail)
	room := maxEnvelope - overhead
	limit := s.cfg.maxReceiveBytes

	var body []byte
	body = append(body, openTag...)
	sent := 0
	for len(c.out) > 0 {
		chunk := &c.out[0]
		n := min(len(chunk.data), streamChunk)
		if limit > 0 {
			n = min(n, limit-sent)
		}
		free := room - (len(body) - len(openTag)) - len(streamXML(chunk.stream, c.id, "", false))
		n = min(n, free/4*3)
		if n <= 0 {
			break
		}
		body = append(body, streamXML(chunk.stream, c.id, base64.StdEncoding.EncodeToString(chunk.data[:n]), false)...)
		sent += n
		chunk.data = chunk.data[n:]
		if len(chunk.data) == 0 {
			c.out = c.out[1:]
		}
	}
	if sent == 0 && len(c.out) > 0 {
		return "", encodingLimitFault(maxEnvelope)
	}
	if len(c.out) == 0 && c.done {
		body = append(body, streamXML("stdout", c.id, "", true)...)
		body = append(body, streamXML("stderr", c.id, "", true)...)
		body = append(body, commandStateXML(c.id, true, c.exitCode)...)
	} else {
		body = append(body, commandStateXML(c.id, false, 0)...)
	}
	body = append(body, closeTag...)
	return string(body), nil
}
