package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/winconform/winconform/internal/redact"

	"github.com/masterzen/winrm"
)

// envelopeSize is the MaxEnvelopeSize sent: WinRM's default of 150 KiB.
const envelopeSize = 153600

// WinRM runs PowerShell on a machine over WinRM. It is safe for concurrent
// use: each RunPS has its own shell.
type WinRM struct {
	cfg Config
	url string
	// ntlm are the sealed connections of NTLM; http is the client of
	// Basic.
	ntlm       *ntlmPool
	http       *http.Client
	endpoint   *winrm.Endpoint
	redactor   *redact.Set
	transcript *Transcript
}

var _ Exec = (*WinRM)(nil)

// NewWinRM checks cfg and returns a WinRM for it. It does not connect.
func NewWinRM(cfg Config) (*WinRM, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if cfg.HTTPS {
		scheme = "https"
	}
	host := cfg.Address
	if strings.Contains(host, ":") { // IPv6: winrm's endpoint URL does not bracket it
		host = "[" + strings.Trim(host, "[]") + "]"
	}
	w := &WinRM{
		cfg: cfg,
		url: scheme + "://" + net.JoinHostPort(strings.Trim(cfg.Address, "[]"), strconv.Itoa(cfg.Port)) + "/wsman",
		// Only the URL of the endpoint is used (for the messages' To
		// header): the transport is runTransport.
		endpoint:   &winrm.Endpoint{Host: host, Port: cfg.Port, HTTPS: cfg.HTTPS},
		redactor:   redact.New(cfg.Password),
		transcript: NewTranscript(cfg.Name, cfg.Password),
	}
	tlsConf := tlsConfig(cfg)
	if cfg.Auth == AuthNTLM {
		w.ntlm = newNTLMPool(cfg, w.url, sealedTransport(cfg, tlsConf))
	} else {
		w.http = &http.Client{Transport: basicTransport(cfg, tlsConf)}
	}
	return w, nil
}

// Name is the machine's name.
func (w *WinRM) Name() string { return w.cfg.Name }

// String describes the machine and how it is reached, without the password.
func (w *WinRM) String() string {
	return "winrm " + w.cfg.Name + " (" + w.url + ", user " + w.cfg.User + ", auth " + w.cfg.Auth + ")"
}

// Transcript is every step run so far, secrets redacted.
func (w *WinRM) Transcript() *Transcript { return w.transcript }

// AddSecret keeps secret (a bootstrap token, say) out of the results,
// errors and transcript of every step from now on, as the password is.
func (w *WinRM) AddSecret(secret string) {
	w.redactor.Add(secret)
	w.transcript.AddSecret(secret)
}

// WriteTranscript writes the transcript to dir as <name>.transcript.log and
// <name>.transcript.json.
func (w *WinRM) WriteTranscript(dir string) error { return w.transcript.Write(dir) }

// Close closes idle connections to the machine.
func (w *WinRM) Close() error {
	if w.ntlm != nil {
		w.ntlm.close()
	} else {
		w.http.CloseIdleConnections()
	}
	return nil
}

// RunPS runs script with PowerShell in a new shell, which it always deletes.
// ctx bounds the run: when it ends, the command is stopped (Signal
// terminate) and the shell deleted, and the error, a *Error naming the step,
// wraps ctx.Err(). A non-zero exit code is not an error (see Result.Err).
// The password is redacted from the result (the step's name included), the
// error and the transcript.
func (w *WinRM) RunPS(ctx context.Context, step, script string) (Result, error) {
	step = w.redactor.String(step)
	res := Result{Machine: w.cfg.Name, Step: step, Started: time.Now(), ExitCode: -1}
	out, cleanupErr, err := w.run(ctx, step, script)
	res.Duration = time.Since(res.Started)
	res.Stdout = w.redactor.String(out.stdout)
	res.Stderr = w.redactor.String(out.stderr)
	if err == nil {
		res.ExitCode = out.exitCode
	}
	w.transcript.Add(script, res, err, cleanupErr)
	return res, err
}

// runOutput is what a run received.
type runOutput struct {
	stdout, stderr string
	exitCode       int
}

// run does RunPS's work: create a shell, start the command, send stdin,
// receive output, then stop the command and delete the shell.
func (w *WinRM) run(ctx context.Context, step, script string) (out runOutput, cleanupErr, err error) {
	if ctx.Err() != nil {
		return out, nil, w.wrap(step, "starting", w.classify(ctx, ctx.Err()))
	}
	cmdline, stdin, err := commandFor(script, w.cfg.MaxCommandLine)
	if err != nil {
		return out, nil, &Error{Machine: w.cfg.Name, Step: step, Op: "encoding the script", Detail: err.Error()}
	}

	// runCtx is cancelled when sending stdin fails, to stop waiting for
	// output of a command that will never get its script.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	rt := &runTransport{w: w, ctx: runCtx, pipeStdin: len(stdin) > 0}
	defer rt.close()
	params := winrm.NewParameters(wsmanDuration(w.cfg.OperationTimeout), "en-US", envelopeSize)
	params.TransportDecorator = func() winrm.Transporter { return rt }
	client, err := winrm.NewClientWithParameters(w.endpoint, w.cfg.User, w.cfg.Password, params)
	if err != nil {
		return out, nil, w.wrap(step, "setting up the client", err)
	}

	shell, err := client.CreateShell()
	if err != nil {
		return out, nil, w.wrap(step, operations["Create"], err)
	}
	defer func() {
		if derr := shell.Close(); derr != nil {
			cleanupErr = errors.Join(cleanupErr, w.wrap(step, operations["Delete"], derr))
		}
	}()

	// The command's own context is not the run's: the run's transport
	// bounds every request, and stops the command itself.
	cmd, err := shell.ExecuteWithContext(context.Background(), cmdline)
	if err != nil {
		return out, nil, w.wrap(step, operations["Command"], err)
	}
	var stdout, stderr bytes.Buffer
	var outErr, errErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, outErr = io.Copy(&stdout, cmd.Stdout) }()
	go func() { defer wg.Done(); _, errErr = io.Copy(&stderr, cmd.Stderr) }()
	var sendErr error
	if len(stdin) > 0 {
		if sendErr = sendStdin(cmd, stdin, rt); sendErr != nil {
			cancelRun()
		}
	}
	// The output ends when the command does, or when a Receive fails (as
	// all do once runCtx has ended).
	wg.Wait()
	cmd.Wait()
	out.stdout, out.stderr = stdout.String(), stderr.String()

	// Signal terminate: it ends a command still running, and frees one that
	// has ended, as winrm's own Run does.
	if serr := cmd.Close(); serr != nil {
		cleanupErr = w.wrap(step, operations["Signal"], serr)
	}
	if err := firstError(sendErr, outErr, errErr); err != nil {
		op := operations["Receive"]
		if sendErr != nil {
			op = operations["Send"]
		}
		return out, cleanupErr, w.wrap(step, op, err)
	}
	out.exitCode = cmd.ExitCode()
	return out, cleanupErr, nil
}

// wrap returns err as a *Error of the machine and the step: a copy of the
// transport's, or, for an error of winrm's own, an unreadable answer.
func (w *WinRM) wrap(step, op string, err error) error {
	if e, ok := isClassified(err); ok {
		c := *e
		c.Machine, c.Step = w.cfg.Name, step
		if c.Op == "" {
			c.Op = op
		}
		return &c
	}
	return &Error{Machine: w.cfg.Name, Step: step, Op: op, Kind: ErrRemote,
		Detail: "unreadable answer: " + w.redactor.String(err.Error()), Err: w.redactError(err)}
}
