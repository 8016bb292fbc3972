package inventory

import (
	"fmt"
	"strings"

	"github.com/winconform/winconform/internal/strictyaml"
)

// Problem is one thing wrong in an inventory file.
type Problem struct {
	// Machine is the machine's name as written (possibly empty or invalid);
	// it is meaningful only when Index is not 0.
	Machine string
	// Index is the machine's position in the machines list, counting from 1;
	// 0 for a problem that is not about one machine (the YAML syntax, the
	// top level, defaults).
	Index int
	// Field is the field's path: "winrm.port" within a machine,
	// "defaults.winrm.port" or "machines" outside one, "yaml" for syntax.
	Field string
	// Line is the line of the file the problem is at, or 0 when unknown.
	Line int
	// Message says what is wrong. It never holds a password.
	Message string
	// Fix says what to do about it.
	Fix string
}

// String renders the problem without the file:
//
//	machine "<name>" (#<index>): <field>: <problem> (line N); <fix>
func (p Problem) String() string {
	s := strictyaml.Render(p.Field, p.Line, p.Message, p.Fix)
	if p.Index > 0 {
		s = fmt.Sprintf("machine %q (#%d): %s", p.Machine, p.Index, s)
	}
	return s
}

// Error is every problem found in one inventory file. Load and Parse return
// it (as a *Error) whenever the inventory is not usable; errors.As reaches it
// through wrapping.
type Error struct {
	// Path is the inventory file, as it was given to Load or Parse.
	Path string
	// Problems are file-wide problems first, then each machine's in list
	// order; within each, in line order.
	Problems []Problem

	cause error // the error that stopped reading the file, if any
}

// Error lists the problems one per line, each as
//
//	<file>: machine "<name>" (#<index>): <field>: <problem>; <fix>
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.Path + ": " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the error that stopped the file from being read (such as
// one matching fs.ErrNotExist), or nil.
func (e *Error) Unwrap() error { return e.cause }
