package remote

import (
	"sort"
	"strings"
)

// redactor replaces secrets with "********".
type redactor struct {
	secrets []string
}

// newRedactor redacts the non-empty secrets, longest first so that a secret
// inside another does not leave part of the longer one.
func newRedactor(secrets ...string) redactor {
	var r redactor
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// redact returns s with every occurrence of a secret replaced.
func (r redactor) redact(s string) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}
