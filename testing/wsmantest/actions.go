package wsmantest

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// dispatch acts on an authorised, readable request.
func (s *Server) dispatch(ctx context.Context, env *envelope, rec *Request, remoteAddr string) outcome {
	if uri := strings.TrimSpace(env.Header.ResourceURI); uri != resourceCmd {
		return outcome{fault: &Fault{
			Code:      "s:Sender",
			Subcode:   "w:DestinationUnreachable",
			Reason:    "The WS-Management service cannot process the request because the resource URI " + uri + " is not served. ",
			WSManCode: 2150858770, // ERROR_WSMAN_INVALID_RESOURCE_URI
			Status:    http.StatusBadRequest,
		}}
	}
	switch rec.Action {
	case ActionCreate:
		return s.create(env, rec, remoteAddr)
	case ActionCommand:
		return s.command(env, rec)
	case ActionSend:
		return s.send(env, rec)
	case ActionReceive:
		return s.receive(ctx, env, rec)
	case ActionSignal:
		return s.signal(env, rec)
	case ActionDelete:
		return s.deleteShell(rec)
	}
	return outcome{fault: actionNotSupportedFault(rec.ActionURI)}
}

// create creates a shell.
func (s *Server) create(env *envelope, rec *Request, remoteAddr string) outcome {
	if env.Body.Shell == nil {
		return outcome{fault: badRequestFault("A Create request for a shell needs an rsp:Shell body.")}
	}
	clientIP, _, _ := net.SplitHostPort(remoteAddr)
	id := newGUID()
	s.mu.Lock()
	s.shells[id] = &shell{id: id, options: env.Header.options(), commands: map[string]*command{}}
	s.shellOrder = append(s.shellOrder, id)
	rec.ShellID = id
	s.mu.Unlock()
	return outcome{
		action: ActionCreate.responseURI(),
		body:   createdBody(s.url, id, s.cfg.user, clientIP),
	}
}

// command starts a command in a shell.
func (s *Server) command(env *envelope, rec *Request) outcome {
	cl := env.Body.CommandLine
	if cl == nil {
		return outcome{fault: badRequestFault("A Command request needs an rsp:CommandLine body.")}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, f := s.lookupShell(rec.ShellID)
	if f != nil {
		return outcome{fault: f}
	}
	id := strings.TrimSpace(cl.CommandID)
	if id == "" {
		id = newGUID()
	}
	ctx, cancel := context.WithCancel(s.ctx)
	sh.commands[id] = &command{
		id:      id,
		shell:   sh,
		command: cl.Command,
		args:    cl.Arguments,
		inv:     interpret(cl.Command, cl.Arguments),
		// Absent, the option means pipe (MS-WSMV 3.1.4.11).
		consoleStdin: strings.EqualFold(env.Header.options()["WINRS_CONSOLEMODE_STDIN"], "TRUE"),
		notify:       make(chan struct{}),
		ctx:          ctx,
		cancel:       cancel,
	}
	rec.CommandID = id
	return outcome{action: ActionCommand.responseURI(), body: commandBody(id)}
}

// send takes stdin for a command.
func (s *Server) send(env *envelope, rec *Request) outcome {
	if env.Body.Send == nil || len(env.Body.Send.Streams) == 0 {
		return outcome{fault: badRequestFault("A Send request needs an rsp:Send body with a stream.")}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range env.Body.Send.Streams {
		c, f := s.lookupCommand(rec.ShellID, st.CommandID)
		if f != nil {
			return outcome{fault: f}
		}
		if st.Name != "stdin" {
			continue
		}
		data, err := decodeStream(st.Data)
		if err != nil {
			return outcome{fault: badRequestFault("The stdin stream is not base64: " + err.Error())}
		}
		c.stdin = append(c.stdin, data...)
		c.sawSend = true
		if st.End == "true" {
			c.stdinClosed = true
		}
		s.maybeStart(c)
	}
	return outcome{action: ActionSend.responseURI(), body: `<rsp:SendResponse/>`}
}

// receive answers a Receive: the output waiting, or, once the command has
// ended and all its output is received, its exit code. With nothing to say
// it waits, until the request's OperationTimeout, for the command to say
// something.
func (s *Server) receive(ctx context.Context, env *envelope, rec *Request) outcome {
	if env.Body.Receive == nil {
		return outcome{fault: badRequestFault("A Receive request needs an rsp:Receive body.")}
	}
	wait := rec.OperationTimeout
	if wait <= 0 {
		wait = 60 * time.Second
	}
	if s.cfg.maxReceiveWait > 0 && wait > s.cfg.maxReceiveWait {
		wait = s.cfg.maxReceiveWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		c, f := s.lookupCommand(rec.ShellID, rec.CommandID)
		if f != nil {
			s.mu.Unlock()
			return outcome{fault: f}
		}
		s.maybeStart(c)
		if ev := c.event; ev != nil {
			c.event = nil
			s.mu.Unlock()
			return *ev
		}
		if len(c.out) > 0 || c.done {
			body, f := s.takeOutput(c, env.Header.MessageID, rec.MaxEnvelopeSize)
			s.mu.Unlock()
			if f != nil {
				return outcome{fault: f}
			}
			return outcome{action: ActionReceive.responseURI(), body: body}
		}
		changed := c.notify
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return outcome{fault: TimedOutFault()}
		case <-ctx.Done():
			return outcome{abandoned: true}
		case <-s.ctx.Done():
			return outcome{abandoned: true}
		}
	}
}

// signal sends a command a signal.
func (s *Server) signal(env *envelope, rec *Request) outcome {
	if env.Body.Signal == nil {
		return outcome{fault: badRequestFault("A Signal request needs an rsp:Signal body.")}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, f := s.lookupCommand(rec.ShellID, rec.CommandID)
	if f != nil {
		return outcome{fault: f}
	}
	switch strings.TrimSpace(rec.Signal) {
	case SignalTerminate:
		c.end(TerminatedExitCode)
	case SignalCtrlC:
		c.end(CtrlCExitCode)
	default:
		return outcome{fault: &Fault{
			Code:      "s:Sender",
			Subcode:   "w:InvalidParameter",
			Reason:    "The parameter is incorrect. ",
			WSManCode: codeInvalidParameter,
			Message:   "Unknown signal code " + rec.Signal + ". ",
		}}
	}
	return outcome{action: ActionSignal.responseURI(), body: `<rsp:SignalResponse/>`}
}

// deleteShell deletes a shell and ends its commands.
func (s *Server) deleteShell(rec *Request) outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, f := s.lookupShell(rec.ShellID)
	if f != nil {
		return outcome{fault: f}
	}
	sh.deleted = true
	for _, c := range sh.commands {
		c.end(TerminatedExitCode)
	}
	return outcome{action: ActionDelete.responseURI()}
}
