package remote

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/winconform/winconform/internal/redact"

	"github.com/winconform/winconform/internal/text"
)

// Entry is one step of a transcript, secrets redacted.
type Entry struct {
	Machine  string        `json:"machine"`
	Step     string        `json:"step"`
	Script   string        `json:"script"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"durationNs"`
	ExitCode int           `json:"exitCode"`
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"`
	// Error is RunPS's error, if any.
	Error string `json:"error,omitempty"`
	// Cleanup is an error stopping the command or deleting the shell after
	// the step (the step's result stands).
	Cleanup string `json:"cleanup,omitempty"`
}

// Transcript keeps every step run on a machine, with secrets redacted as
// they are added. It is safe for concurrent use.
type Transcript struct {
	name     string
	redactor *redact.Set
	mu       sync.Mutex
	entries  []Entry
}

// NewTranscript returns an empty transcript for the machine name that
// redacts secrets (empty ones are ignored).
func NewTranscript(name string, secrets ...string) *Transcript {
	return &Transcript{name: name, redactor: redact.New(secrets...)}
}

// AddSecret redacts secret from the steps added from now on.
func (t *Transcript) AddSecret(secret string) { t.redactor.Add(secret) }

// Add appends a step: its script, its result, and its error and cleanup
// error (either may be nil).
func (t *Transcript) Add(script string, res Result, err, cleanupErr error) {
	r := t.redactor.String
	e := Entry{
		Machine:  r(res.Machine),
		Step:     r(res.Step),
		Script:   r(script),
		Started:  res.Started,
		Duration: res.Duration,
		ExitCode: res.ExitCode,
		Stdout:   r(res.Stdout),
		Stderr:   r(res.Stderr),
	}
	if err != nil {
		e.Error = r(err.Error())
	}
	if cleanupErr != nil {
		e.Cleanup = r(cleanupErr.Error())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, e)
}

// Entries returns the steps so far.
func (t *Transcript) Entries() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Entry(nil), t.entries...)
}

// Files returns the names of the files Write writes in dir: a readable log
// and the same entries as JSON.
func (t *Transcript) Files(dir string) (logPath, jsonPath string) {
	base := filepath.Join(dir, text.FileName(t.name)+".transcript")
	return base + ".log", base + ".json"
}

// Write writes the transcript to dir (created if need be) as
// <name>.transcript.log and <name>.transcript.json.
func (t *Transcript) Write(dir string) error {
	entries := t.Entries()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("remote: writing the transcript of %s: %w", t.name, err)
	}
	logPath, jsonPath := t.Files(dir)
	var b strings.Builder
	for _, e := range entries {
		writeEntry(&b, e)
	}
	if err := os.WriteFile(logPath, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("remote: writing the transcript of %s: %w", t.name, err)
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("remote: encoding the transcript of %s: %w", t.name, err)
	}
	if err := os.WriteFile(jsonPath, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("remote: writing the transcript of %s: %w", t.name, err)
	}
	return nil
}

// writeEntry renders one step for the log.
func writeEntry(b *strings.Builder, e Entry) {
	fmt.Fprintf(b, "=== step %q on %s: started %s, took %s, exit code %d\n",
		e.Step, e.Machine, e.Started.UTC().Format(time.RFC3339Nano), e.Duration.Round(time.Millisecond), e.ExitCode)
	section := func(name, text string) {
		if text == "" {
			return
		}
		fmt.Fprintf(b, "--- %s\n%s", name, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
	}
	section("script", e.Script)
	section("stdout", e.Stdout)
	section("stderr", decodeCLIXML(e.Stderr))
	section("error", e.Error)
	section("cleanup error", e.Cleanup)
	b.WriteString("\n")
}
