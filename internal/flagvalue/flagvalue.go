// Package flagvalue has the typed values of winconform's flags: each checks
// itself when the command line is parsed (pflag.Value's Set), so that a bad
// value is refused before the command runs, naming the flag and the fix
// (pflag says `invalid argument "V" for "--flag" flag: ` before the fix).
//
// The rules, for every command:
//   - a duration is positive, and at least a floor where a shorter one would
//     reach what is not the run's own (Duration);
//   - a count is in a range (Int);
//   - a name is not empty (Name);
//   - a directory to write into is one, or can be made, and is writable; a
//     file to write is not a directory and its directory is writable (Dir,
//     OutFile);
//   - a flag of one value given twice is refused (RefuseRepeats), a list
//     accumulates (List).
package flagvalue

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// durationValue is a duration of at least min.
type durationValue struct {
	p        *time.Duration
	min      time.Duration
	why, eg  string
	typeName string
}

// Duration is a flag value for *p (set to def) that must be positive and at
// least min (a floor; 0 means any positive duration). why says what a
// shorter one would do, eg is an example of a good value.
func Duration(p *time.Duration, def, min time.Duration, why, eg string) pflag.Value {
	*p = def
	return &durationValue{p: p, min: min, why: why, eg: eg}
}

// String is the duration, "0" when none (a default left to the command).
func (d *durationValue) String() string {
	if *d.p == 0 {
		return "0"
	}
	return d.p.String()
}
func (d *durationValue) Type() string { return "duration" }

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration: give one such as %s", d.eg)
	}
	switch {
	case v <= 0:
		return fmt.Errorf("want a positive duration, such as %s", d.eg)
	case v < d.min:
		return fmt.Errorf("%s is below the floor of %s (%s): give %s or more, such as %s", v, d.min, d.why, d.min, d.eg)
	}
	*d.p = v
	return nil
}

// intValue is a count in [min, max].
type intValue struct {
	p        *int
	min, max int
	what     string
}

// Int is a flag value for *p (set to def) that must be in [min, max]; what
// says what the count is ("machines created at once").
func Int(p *int, def, min, max int, what string) pflag.Value {
	*p = def
	return &intValue{p: p, min: min, max: max, what: what}
}

func (n *intValue) String() string { return strconv.Itoa(*n.p) }
func (n *intValue) Type() string   { return "int" }

func (n *intValue) Set(s string) error {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < n.min || v > n.max {
		return fmt.Errorf("want %s, a whole number from %d to %d", n.what, n.min, n.max)
	}
	*n.p = v
	return nil
}

// nameValue is a string that is not empty.
type nameValue struct {
	p    *string
	what string
}

// Name is a flag value for *p (set to def) that must not be empty (nor
// blank): leaving the flag out is how its default is asked for. what says
// what to give ("the machine's name in the inventory").
func Name(p *string, def, what string) pflag.Value {
	*p = def
	return &nameValue{p: p, what: what}
}

func (n *nameValue) String() string { return *n.p }
func (n *nameValue) Type() string   { return "string" }

func (n *nameValue) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("empty: give %s, or leave the flag out for its default", n.what)
	}
	*n.p = s
	return nil
}

// listValue is a comma-separated list that accumulates.
type listValue struct {
	p   *string
	set bool
}

// List is a flag value for *p (set to def), a comma-separated list: given
// again, the flag adds to it (--claim A --claim B is --claim A,B), never
// replaces it.
func List(p *string, def string) pflag.Value {
	*p = def
	return &listValue{p: p}
}

func (l *listValue) String() string { return *l.p }
func (l *listValue) Type() string   { return "strings" }

// Repeatable says a list may be given more than once.
func (l *listValue) Repeatable() bool { return true }

func (l *listValue) Set(s string) error {
	switch {
	case !l.set || *l.p == "":
		*l.p = s
	case s != "":
		*l.p += "," + s
	}
	l.set = true
	return nil
}

// dirValue is a directory to write into.
type dirValue struct {
	p    *string
	what string
}

// Dir is a flag value for *p (set to def): a directory the command writes
// into, which is one (or can be made: its nearest existing parent is a
// directory) and is writable. what says what goes there.
func Dir(p *string, def, what string) pflag.Value {
	*p = def
	return &dirValue{p: p, what: what}
}

func (d *dirValue) String() string { return *d.p }
func (d *dirValue) Type() string   { return "string" }

func (d *dirValue) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("empty: give the directory %s go, or leave the flag out for its default", d.what)
	}
	if err := WritableDir(s); err != nil {
		return fmt.Errorf("%v: give a directory that can be written, where %s go", err, d.what)
	}
	*d.p = s
	return nil
}

// fileValue is a file to write.
type fileValue struct {
	p      *string
	stdout bool
}

// OutFile is a flag value for *p (set to def): a file the command writes,
// which is not a directory and whose directory is writable (or can be
// made). With stdout, "-" is standard output.
func OutFile(p *string, def string, stdout bool) pflag.Value {
	*p = def
	return &fileValue{p: p, stdout: stdout}
}

func (f *fileValue) String() string { return *f.p }
func (f *fileValue) Type() string   { return "string" }

func (f *fileValue) Set(s string) error {
	if s == "-" && f.stdout {
		*f.p = s
		return nil
	}
	if strings.TrimSpace(s) == "" {
		if f.stdout {
			return errors.New("empty: give the file to write, - for standard output")
		}
		return errors.New("empty: give the file to write")
	}
	if fi, err := os.Stat(s); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: give a file's path, e.g. %s", s, filepath.Join(s, "out"))
	}
	if err := WritableDir(filepath.Dir(s)); err != nil {
		return fmt.Errorf("cannot write %s: %v: give a file in a directory that can be written", s, err)
	}
	*f.p = s
	return nil
}

// WritableDir says why dir is no directory that can be written into: it
// is something else, or it does not exist and cannot be made (its nearest
// existing parent is no directory), or a file cannot be made in it (or in
// that parent). It makes nothing but a file it removes at once.
func WritableDir(dir string) error {
	probe := filepath.Clean(dir)
	for {
		fi, err := os.Stat(probe)
		if err == nil {
			if !fi.IsDir() {
				if probe == filepath.Clean(dir) {
					return fmt.Errorf("%s is not a directory", dir)
				}
				return fmt.Errorf("%s cannot be made: %s is not a directory", dir, probe)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s: %v", dir, errors.Unwrap(err))
		}
		parent := filepath.Dir(probe)
		if parent == probe {
			return fmt.Errorf("%s cannot be made", dir)
		}
		probe = parent
	}
	f, err := os.CreateTemp(probe, ".winconform-write-check-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if probe == filepath.Clean(dir) {
			return fmt.Errorf("%s is not writable (%v)", dir, err)
		}
		return fmt.Errorf("%s cannot be made in %s (%v)", dir, probe, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// repeatable is a value that may be given more than once (a list).
type repeatable interface{ Repeatable() bool }

// once refuses a value's second Set of another value: a flag of one value
// given twice (--name a --name b), or two flags of one variable
// (--kubeconfig and its old name --existing). The same value again is
// taken (nothing is dropped; cobra's completion parses twice).
type once struct {
	pflag.Value
	name  string
	given Repeats
}

// Repeats is what RefuseRepeats shares across a command tree: which flag
// set each value (by the value's key), to what.
type Repeats map[any]given

// given is who set a value, and to what.
type given struct{ flag, value string }

// onceKey is what two flags of one variable share: their value (pflag's
// values are pointers to the variable).
func onceKey(v pflag.Value) any {
	if reflect.TypeOf(v).Comparable() {
		return v
	}
	return new(int) // not comparable: its own
}

func (o *once) Set(s string) error {
	key := onceKey(o.Value)
	if by, ok := o.given[key]; ok && by.value != s {
		if by.flag == o.name {
			return fmt.Errorf("--%s was given already (%q): it takes one value, give it once", o.name, by.value)
		}
		return fmt.Errorf("--%s was given already (%q), and it is the same setting: give one of them once", by.flag, by.value)
	}
	if err := o.Value.Set(s); err != nil {
		return err
	}
	o.given[key] = given{o.name, s}
	return nil
}

// RefuseRepeats makes every flag of fs that takes one value (all but
// booleans, counts, slices, arrays and Lists) refuse being given twice,
// sharing given (one map for a whole command tree) so that two flags of one
// variable count as one. A flag already made so is left as it is.
func RefuseRepeats(fs *pflag.FlagSet, given Repeats) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(*once); done {
			return
		}
		if r, ok := f.Value.(repeatable); ok && r.Repeatable() {
			return
		}
		t := f.Value.Type()
		if t == "bool" || t == "count" || strings.HasSuffix(t, "Slice") || strings.HasSuffix(t, "Array") {
			return
		}
		f.Value = &once{Value: f.Value, name: f.Name, given: given}
	})
}

// programValue is a program to run.
type programValue struct {
	p    *string
	what string
}

// Program is a flag value for *p (set to def): a program the command runs,
// a path or a name on PATH, that must be there and be executable. what says
// what it is ("the Chromium binary").
func Program(p *string, def, what string) pflag.Value {
	*p = def
	return &programValue{p: p, what: what}
}

func (v *programValue) String() string { return *v.p }
func (v *programValue) Type() string   { return "string" }

func (v *programValue) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("empty: give %s, or leave the flag out for its default", v.what)
	}
	if _, err := exec.LookPath(s); err != nil {
		return fmt.Errorf("%s is no program that can be run (%v): give %s", s, errors.Unwrap(err), v.what)
	}
	*v.p = s
	return nil
}
