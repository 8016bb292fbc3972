// Package redact is the process's one redaction at the boundary: every
// secret the run loads is added to it (config adds each secret it reads,
// from a variable or a file), and what leaves the process through a
// Writer (the errors and logs on stderr) has each of them replaced by
// Mask.
package redact

import (
	"io"
	"sort"
	"strings"
	"sync"
)

// Mask is what a secret becomes.
const Mask = "********"

// minLen is the shortest value redacted: a shorter one would mask common
// words of every message.
const minLen = 4

var (
	mu      sync.RWMutex
	secrets []string // longest first, so a value inside another goes with it
)

// Add registers secret values to redact from now on.
func Add(values ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, v := range values {
		if v = strings.TrimSpace(v); len(v) >= minLen {
			secrets = append(secrets, v)
		}
	}
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
}

// String returns s with every registered secret replaced by Mask.
func String(s string) string {
	mu.RLock()
	defer mu.RUnlock()
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, Mask)
	}
	return s
}

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
