package remote

import (
	"sort"
	"strings"
	"sync"
)

// redactor replaces secrets with "********". Secrets can be added while it
// is in use (a bootstrap token made during a join).
type redactor struct {
	mu      sync.RWMutex
	secrets []string
}

// newRedactor redacts the non-empty secrets.
func newRedactor(secrets ...string) *redactor {
	r := &redactor{}
	for _, s := range secrets {
		r.add(s)
	}
	return r
}

// add redacts secret from now on, longest secrets first so that a secret
// inside another does not leave part of the longer one.
func (r *redactor) add(secret string) {
	if secret == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// redact returns s with every occurrence of a secret replaced.
func (r *redactor) redact(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}

// SecretKeeper is an Exec (or transcript) that can be told of a secret to
// keep out of everything it records and reports from now on.
type SecretKeeper interface {
	AddSecret(secret string)
}
