// Package wsmantest runs an in-process WS-Management (WinRM) endpoint for
// tests, so that code which drives Windows machines over WinRM can be proven
// without a Windows machine.
//
// The Server speaks the part of WS-Management and of the Windows Remote Shell
// (WinRS) protocol that github.com/masterzen/winrm uses, with the same
// actions, namespaces, selectors, options and response shapes as a real
// Windows endpoint: Create (a cmd shell), Command, Send (stdin), Receive
// (stdout and stderr, base64, split over several responses when large; a
// long poll that ends in a w:TimedOut fault after the request's
// OperationTimeout), Signal (terminate, ctrl_c) and Delete. It serves HTTP or
// HTTPS (with its own CA), keeps state per shell and per command, and
// answers requests for unknown shells with the fault a real server sends.
//
// # Authentication and encryption
//
// By default the server is a stock Windows Server's WinRM service
// (Auth\Basic=false, AllowUnencrypted=false, Negotiate on): it
// authenticates with NTLMv2 through the Negotiate scheme, the context bound
// to the TCP connection, checks the NTProofStr, the MIC and, over HTTPS, the
// channel bindings, and over HTTP it wants every message sealed with the
// connection's NTLM session (MS-WSMV 2.2.9.1.1 encrypted messages, and
// answers them sealed). Basic requests, and plain messages over HTTP, get
// 401, as on Windows. WithBasicAuth and WithAllowUnencrypted make it a
// server configured the insecure way, for clients that speak Basic. Its
// NTLM and sealing are checked against clients written elsewhere:
// masterzen/winrm's Encryption (bodgit/ntlmssp) and pywinrm (ntlm-auth),
// in auth_test.go. See auth.go for the sources.
//
// # Scripting a machine
//
// A test describes the machine with a Handler, called once per command when
// the command runs (after its stdin is complete, see below):
//
//	srv := wsmantest.New(t, wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply {
//		if strings.Contains(c.Script, "Get-Service kubelet") {
//			return wsmantest.Reply{Stdout: "Running\r\n"}
//		}
//		return wsmantest.Reply{Stderr: "unexpected script", ExitCode: 1}
//	}))
//
// Call.Script is the PowerShell script: the command line's
// "powershell.exe -EncodedCommand <base64 UTF-16LE>" decoded (without the
// "$ProgressPreference = 'SilentlyContinue';" that winrm.Powershell puts in
// front), or the text after -Command. Call.Command and Call.Arguments are the
// raw command line as sent.
//
// Scripts can also travel on stdin, and the handler then still sees the real
// script in Call.Script (with Call.ViaStdin set):
//
//   - "powershell.exe ... -Command -" reads the script from stdin as text;
//   - a stdin bootstrap: an encoded command whose first line is
//     StdinBootstrapMarker ("# stdin-script: base64-utf8") reads stdin as the
//     base64 of the script's UTF-8 text. Call.Bootstrap holds the decoded
//     bootstrap, Call.Stdin the raw stdin.
//
// # When a command runs
//
// A real process runs as soon as it is created and reads its stdin as it
// comes; the fake instead calls the handler once, with all of stdin. A command
// that reads stdin (the two forms above, any command that has received stdin
// before its first Receive, or every command under WithWaitForStdin) runs
// when its stdin is closed (a Send with End="true"); any other command runs
// at its first Receive.
//
// Stdin is a pipe only when the Command asks for it: WINRS_CONSOLEMODE_STDIN
// is "the client-side mode for standard input", console if TRUE, pipe if
// FALSE or absent (MS-WSMV 3.1.4.11). With console-mode stdin, the end of the
// stream does not reach the process as the end of its input: a command that
// reads stdin to its end (the two forms above, or any under
// WithWaitForStdin) never runs, and waits until it is signalled or its
// shell deleted. That is why Ansible's WinRM connection turns console mode
// off whenever it streams stdin (ansible/ansible
// lib/ansible/plugins/connection/winrm.py, _winrm_exec:
// console_mode_stdin=(stdin_iterator is None)), and why MetricsHub/winrm-java
// switches a command fed stdin to pipe mode so that "closing the writer
// actually delivers EOF" (src/site/markdown/commands.md). masterzen/winrm
// always sends TRUE.
//
// # Faults
//
// Reply.Delay, Reply.Fault and Reply.Drop make one command answer slowly,
// answer with a SOAP fault, or lose its connection. An Intercept (see
// WithIntercept, FaultAction, DropRequest) does the same to any request,
// before the server acts on it: fail the Create of a shell, drop the N-th
// request, delay every Receive.
//
// # Assertions
//
// The server records every request in order (Server.Requests,
// Server.Conversation) and every handler call (Server.Calls), and knows which
// shells were never deleted (Server.OpenShells).
package wsmantest
