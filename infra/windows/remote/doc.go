// Package remote runs PowerShell on the Windows machines the harness joins,
// over WinRM, with clear, classified errors and a redacted transcript of
// every step.
//
// Exec is the interface the harness uses; WinRM implements it over
// github.com/masterzen/winrm. That version of winrm has no context API, so
// WinRM builds cancellation on winrm's Shell and Command API and its own
// transport (see Transporter in winrm): a run's context bounds every request
// of the run, and when it ends, the command is stopped (Signal terminate) and
// the shell deleted (Delete) under a separate, short cleanup deadline. A shell
// WinRM creates is always deleted, whatever happens to the run.
//
// # Long scripts
//
// A Windows command line holds at most 8191 characters, and
// "powershell.exe -NoProfile -NonInteractive -EncodedCommand" needs about
// 2.7 characters per script character: about 3000 characters of script fit
// (FitsCommandLine). A script whose command line would be longer travels on
// stdin instead: the command line runs a short bootstrap (its first line is
// "# stdin-script: base64-utf8") that reads the base64 of the script's UTF-8
// text from stdin, decodes it and runs it. Such a Command asks WinRM for
// pipe-mode stdin (WINRS_CONSOLEMODE_STDIN=FALSE, which masterzen/winrm
// never sends): with console-mode stdin the end of the stream does not
// reach the process as the end of its input, and the bootstrap would wait
// forever. The wsmantest fake understands the bootstrap, models
// console-mode stdin, and hands its handler the real script.
//
// # Authentication
//
// NTLM (the default) seals every message with the NTLM session (MS-WSMV
// encrypted messages), over HTTP as over HTTPS, on a small pool of
// keep-alive connections, each holding its own NTLM context: what a stock
// Windows Server, with Basic off and AllowUnencrypted=false, accepts on its
// HTTP listener (5985). Basic goes over HTTPS only.
//
// # Errors
//
// RunPS returns a *Error that names the machine, the step and what was being
// done, and is errors.Is-able against ErrAuth, ErrUnreachable, ErrTLS,
// ErrTimeout, ErrRemote or ErrConnLost, and against its cause
// (context.DeadlineExceeded, a *FaultError...). A non-zero exit code is not
// an error of RunPS: Result.Err turns it into an *ExitError.
//
// # Secrets
//
// The password never appears in what this package returns or writes: errors,
// results, transcripts and the String of a Config or a WinRM show "********"
// instead.
package remote
