package remote

import "context"

// Recorder wraps any Exec and keeps a transcript of its steps, with secrets
// redacted. WinRM keeps its own; Recorder is for other Execs (fakes, other
// transports). What RunPS returns is passed on unchanged.
type Recorder struct {
	exec       Exec
	transcript *Transcript
}

var _ Exec = (*Recorder)(nil)

// NewRecorder records the steps run through exec, redacting secrets.
func NewRecorder(exec Exec, secrets ...string) *Recorder {
	return &Recorder{exec: exec, transcript: NewTranscript(exec.Name(), secrets...)}
}

// RunPS runs the step with the wrapped Exec and records it.
func (r *Recorder) RunPS(ctx context.Context, step, script string) (Result, error) {
	res, err := r.exec.RunPS(ctx, step, script)
	r.transcript.Add(script, res, err, nil)
	return res, err
}

// Name is the wrapped Exec's name.
func (r *Recorder) Name() string { return r.exec.Name() }

// Transcript is the steps recorded so far.
func (r *Recorder) Transcript() *Transcript { return r.transcript }

// WriteTranscript writes the transcript to dir (see Transcript.Write).
func (r *Recorder) WriteTranscript(dir string) error { return r.transcript.Write(dir) }

// AddSecret redacts secret from the steps recorded from now on.
func (r *Recorder) AddSecret(secret string) { r.transcript.AddSecret(secret) }
