package vms

import (
	"strings"

	"github.com/winconform/winconform/internal/strictyaml"
)

// Problem is one thing wrong in a VM file.
type Problem struct {
	// Field is the field's path from the top of the file
	// (connection.credentials.password, machine.winrm.port, libvirt.network),
	// "yaml" for the syntax, "" for the file as a whole.
	Field string
	// Line is the line of the file the problem is at, or 0 when unknown.
	Line int
	// Message says what is wrong; it never holds a secret. Fix says what
	// to do about it.
	Message, Fix string
}

// String renders the problem without the file: "<field>: <problem> (line N); <fix>".
func (p Problem) String() string {
	return strictyaml.Render(p.Field, p.Line, p.Message, p.Fix)
}

// Error is every problem found in one VM file. Load and Parse return it
// (as a *Error) whenever the file is not usable.
type Error struct {
	// Path is the VM file, as given to Load or Parse.
	Path string
	// Problems are in line order.
	Problems []Problem

	cause error
}

// Error lists the problems one per line: "<file>: <field>: <problem>; <fix>".
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.Path + ": " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the error that stopped the file from being read, or nil.
func (e *Error) Unwrap() error { return e.cause }

// joinOr joins words as "a", "a or b", "a, b or c".
func joinOr(words []string) string {
	switch len(words) {
	case 0:
		return "(none registered)"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

var describe, quote = strictyaml.Describe, strictyaml.Quote
