package inventory

import (
	"strings"

	"github.com/winconform/winconform/internal/winrelease"
)

// Build is a Windows build, such as 10.0.20348 (see winrelease, which holds
// the supported releases and the one parser of builds).
type Build = winrelease.Build

// joinOr joins words as "a", "a or b", "a, b or c".
func joinOr(words []string) string { return joinWords(words, "or") }

// joinWords joins words with commas and conj before the last.
func joinWords(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
