// Package redact is the harness's one redaction. The process's own set
// holds every secret the run loads (config adds each secret it reads, from
// a variable or a file), and what leaves the process through a Writer
// (the errors and logs on stderr) has each of them replaced by Mask. A Set
// of its own holds the secrets of one text besides (a WinRM session's
// password and the bootstrap token it makes, a namespace's Secrets in its
// artifacts, a VM file's credentials in a console log); its String masks
// those and the process's.
package redact

import (
	"io"
	"sort"
	"strings"
	"sync"
)

// Mask is what a secret becomes.
const Mask = "********"

// minLen is the shortest value the process's set redacts: it masks every
// message on stderr, and a shorter value would mask common words of each.
// A Set of its own masks every value it is given, however short, in the
// one text it is for.
const minLen = 4

// Set is secrets to redact. Secrets can be added while it is in use.
type Set struct {
	mu      sync.RWMutex
	min     int
	mask    string
	secrets []string // longest first, so that a value inside another goes with it
}

// New returns a Set of the non-empty secrets, which it replaces by Mask.
func New(secrets ...string) *Set { return NewMasking(Mask, secrets...) }

// NewMasking returns a Set that replaces the non-empty secrets, and the
// process's, by mask: a text with a syntax of its own (YAML reads
// "********" as an alias) takes a mask that keeps it readable.
func NewMasking(mask string, secrets ...string) *Set {
	s := &Set{mask: mask}
	s.Add(secrets...)
	return s
}

// Add redacts secrets from now on.
func (s *Set) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		if strings.TrimSpace(v) == "" || len(v) < s.min {
			continue
		}
		s.secrets = append(s.secrets, v)
		if t := strings.TrimSpace(v); t != v && len(t) >= max(s.min, 1) {
			s.secrets = append(s.secrets, t)
		}
	}
	sort.SliceStable(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
}

// String returns text with every secret of s, and every secret of the
// process, replaced by Mask.
func (s *Set) String(text string) string {
	mask := Mask
	if s != nil && s != &process {
		mask = s.mask
		text = s.own(text, mask)
	}
	return process.own(text, mask)
}

func (s *Set) own(text, mask string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.secrets {
		text = strings.ReplaceAll(text, v, mask)
	}
	return text
}

// process is the secrets the run has loaded.
var process = Set{min: minLen}

// Add registers secret values of the process to redact from now on.
func Add(values ...string) { process.Add(values...) }

// String returns s with every secret of the process replaced by Mask.
func String(s string) string { return process.String(s) }

// Writer returns w with every write redacted: each write is redacted
// whole (fmt.Fprintf writes one message in one write).
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (r writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
