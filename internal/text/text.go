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

// LastLines returns the last n lines of s that are not blank, without their
// trailing white space, joined by newlines: the end of a command's output
// for an error message. CRLF line ends count as LF.
func LastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t\r"))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-max(n, 0):]
	}
	return strings.Join(lines, "\n")
}

// FileName makes a name (a machine's, a node's) safe as a file or directory
// name: every character but ASCII letters, digits, '-', '_' and '.' becomes
// '_'; an empty name is "machine", and "." and ".." (which name directories
// already there) are "_" and "__".
func FileName(name string) string {
	switch name {
	case "":
		return "machine"
	case ".", "..":
		return strings.Repeat("_", len(name))
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}
