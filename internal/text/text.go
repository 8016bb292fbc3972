// Package text holds the string helpers the harness's messages share.
package text

import "strings"

// FirstLine is s trimmed down to its first line, without a trailing CR, for
// one-line error messages made from a command's output.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, "\r")
}
