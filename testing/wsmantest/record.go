package wsmantest

import (
	"time"
)

// Request is one request the server received, as recorded for assertions.
type Request struct {
	// Seq is the request's position in arrival order, from 1. Every POST to
	// /wsman with a body counts, rejected ones (401, 415, unreadable) too;
	// the empty-bodied requests of an NTLM handshake do not (see
	// Server.Handshakes).
	Seq int
	// Time is when the request arrived.
	Time time.Time
	// Action is the request's action; ActionURI its full URI.
	Action    Action
	ActionURI string
	// ShellID is the shell the request is for; for a Create, the shell it
	// created.
	ShellID string
	// CommandID is the command the request is for; for a Command, the
	// command it started.
	CommandID string
	// CommandLine is a Command's command line (rsp:Command then
	// rsp:Arguments).
	CommandLine string
	// Signal is a Signal's code URI (SignalTerminate, SignalCtrlC).
	Signal string
	// Stdin is a Send's data; End is true when the Send closed stdin.
	Stdin []byte
	End   bool
	// OperationTimeout and MaxEnvelopeSize are the request's headers.
	OperationTimeout time.Duration
	MaxEnvelopeSize  int
	// Options are the request's w:OptionSet.
	Options map[string]string
	// User is the user the request was authenticated as, or claimed to be:
	// the Basic user name, or the NTLM user (DOMAIN\user when a domain was
	// sent).
	User string
	// Auth is the scheme of the request's Authorization header: "Basic",
	// "Negotiate" (the AUTHENTICATE_MESSAGE of an NTLM handshake), or ""
	// when the connection's NTLM context authenticated it.
	Auth string
	// Sealed is true when the request was an encrypted message (MS-WSMV
	// 2.2.9.1.1).
	Sealed bool

	// Status is the HTTP status of the answer, 0 while it is pending or
	// when the connection was dropped.
	Status int
	// ResponseBytes is the size of the answer's SOAP envelope.
	ResponseBytes int
	// Fault is the subcode of the SOAP fault answered, if any.
	Fault string
	// Dropped is true when the server closed the connection without
	// answering.
	Dropped bool
	// Unauthorized is true when the request was rejected with HTTP 401.
	Unauthorized bool
	// Abandoned is true when the client gave up on the request (or the
	// server closed) before it was answered.
	Abandoned bool
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// Conversation returns the actions of the authorised requests for shellID,
// in arrival order: for a successful command, Create, Command, [Send...],
// Receive..., Signal, Delete.
func (s *Server) Conversation(shellID string) []Action {
	var actions []Action
	for _, r := range s.Requests() {
		if r.ShellID == shellID && !r.Unauthorized {
			actions = append(actions, r.Action)
		}
	}
	return actions
}

// Count returns how many requests for action the server received.
func (s *Server) Count(action Action) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Action == action {
			n++
		}
	}
	return n
}

// ShellIDs returns the IDs of the shells created, in creation order.
func (s *Server) ShellIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.shellOrder...)
}

// OpenShells returns the IDs of the shells created and not deleted.
func (s *Server) OpenShells() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var open []string
	for _, id := range s.shellOrder {
		if sh := s.shells[id]; sh != nil && !sh.deleted {
			open = append(open, id)
		}
	}
	return open
}

// Calls returns the commands the handler was called for, in the order they
// ran.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		out[i] = *c
		out[i].Stdin = append([]byte(nil), c.Stdin...)
		out[i].Arguments = append([]string(nil), c.Arguments...)
	}
	return out
}
