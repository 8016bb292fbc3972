package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/winconform/winconform/internal/userfile"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// APIVersion is the version of the files' API. A file may name it and its
// kind (apiVersion: winconform.io/v1alpha1, kind: Inventory); a file that
// names neither is read as this version.
const APIVersion = "winconform.io/v1alpha1"

// File is a file a user writes: Cluster, Inventory, Machines (the VM
// file), GatePolicy or ImageOverrides.
type File interface {
	// kind is the file's kind, as its kind: field names it.
	kind() string
	// check gives the decoded file its defaults and reports its problems.
	check(l *loader)
}

// Env looks up an environment variable, as os.LookupEnv does: files
// reference secrets by the variables that hold them.
type Env func(string) (string, bool)

// Load reads the file at path as a T and returns it with its defaults,
// checked. env looks up the variables the file references (os.LookupEnv
// when nil). Each check adds the problems only its caller can see (a
// policy's claims, against the catalogue). Anything wrong is a *Error
// that lists every problem.
func Load[T any, P interface {
	*T
	File
}](path string, env Env, checks ...func(*T) field.ErrorList) (*T, error) {
	data, err := userfile.Read("", path, userfile.Config(P(new(T)).kind()+" file"))
	if err != nil {
		var ue *userfile.Error
		if !errors.As(err, &ue) {
			return nil, err
		}
		msg, fix := "the path "+ue.Problem, ue.Fix
		if errors.Is(err, fs.ErrNotExist) {
			msg, fix = "the file does not exist", "check the path (a relative path is from the working directory)"
		}
		return nil, &Error{File: path, List: field.ErrorList{Invalid(nil, msg, fix)}, Lines: []int{0}, err: err}
	}
	return Parse[T, P](path, data, env, checks...)
}

// Parse is Load for data, the content of the file path: relative paths in
// it are relative to path's directory.
func Parse[T any, P interface {
	*T
	File
}](path string, data []byte, env Env, checks ...func(*T) field.ErrorList) (*T, error) {
	if env == nil {
		env = os.LookupEnv
	}
	l := newLoader(path, env)
	v := P(new(T))
	if d, ok := any(v).(interface{ defaults() *T }); ok {
		*v = *d.defaults()
	}
	top := l.document(data)
	if top != nil {
		l.decode(nil, l.typeMeta(top, v.kind()), reflect.ValueOf(v).Elem(), v.kind())
	} else if len(l.problems) > 0 {
		return nil, l.err() // not YAML: there is nothing to check
	}
	l.decoded = len(l.problems)
	v.check(l)
	for _, c := range checks {
		l.addAll(c((*T)(v)))
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return v, nil
}

func newLoader(path string, env Env) *loader {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	return &loader{path: path, dir: dir, env: env, lines: map[string]int{}, nulls: map[string]bool{}}
}

// typeMeta checks the apiVersion and kind the top mapping n names, if it
// names them, and returns n without them.
func (l *loader) typeMeta(n *yaml.Node, kind string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	rest := *n
	rest.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, ""
		if vn := deref(n.Content[i+1]); vn != nil {
			v = vn.Value
		}
		switch {
		case k == "apiVersion" && v != APIVersion:
			l.add(field.NewPath(k), n.Content[i].Line, Quote(v)+" is not an API version this harness reads",
				"write apiVersion: "+APIVersion+", or leave it out (a file without it is read as "+APIVersion+")")
		case k == "kind" && v != kind:
			l.add(field.NewPath(k), n.Content[i].Line, Quote(v)+" is not the kind of this file",
				"write kind: "+kind+" (the kind of file read here), or leave it out")
		case k != "apiVersion" && k != "kind":
			rest.Content = append(rest.Content, n.Content[i], n.Content[i+1])
		}
	}
	return &rest
}

// resolve makes a path written in the file absolute, from its directory.
func (l *loader) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

// Invalid is the problem of the value at p: what is wrong, and the fix.
func Invalid(p *field.Path, msg, fix string) *field.Error {
	if fix != "" {
		msg += "; " + fix
	}
	return &field.Error{Type: field.ErrorTypeInvalid, Field: pathString(p), BadValue: field.OmitValueType{}, Detail: msg}
}

// Missing is the problem of a field left out; fix says what to set.
func Missing(p *field.Path, fix string) *field.Error {
	return &field.Error{Type: field.ErrorTypeRequired, Field: pathString(p), BadValue: field.OmitValueType{}, Detail: fix}
}

func pathString(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
}

// Errors makes one error of problems found outside a file (in values the
// flags set), one a line: "field: what is wrong; the fix"; nil without any.
func Errors(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &Error{List: errs, Lines: make([]int, len(errs))}
}

// Problem is a problem of the value at p found after its file was loaded,
// by what reaches what the file names (a VM provider: an endpoint that
// does not answer, credentials it refuses, an image it does not have):
// msg says what is wrong, fix what to do, cause (nil for none) what was
// found. It is an *Error of that one problem, which says "field: what is
// wrong; the fix" as the loader's problems do; errors.As gets its
// *field.Error, and errors.Is and errors.As reach cause.
func Problem(p *field.Path, msg, fix string, cause error) error {
	return &Error{List: field.ErrorList{Invalid(p, msg, fix)}, Lines: []int{0}, err: cause}
}

// Error is every problem of one file, in the order of its lines.
type Error struct {
	// File is the file, as given to Load or Parse.
	File string
	// List holds the problems: each Field is a path from the top of the
	// file ("" for the file as a whole), each Detail what is wrong and
	// (after "; ") the fix. No Detail holds a secret.
	List field.ErrorList
	// Lines are the problems' lines, 0 where there is none.
	Lines []int

	err error // what stopped the file from being read
}

// Error says every problem, one a line: "file:line: field: what is wrong; the fix".
func (e *Error) Error() string {
	out := make([]string, len(e.List))
	for i, fe := range e.List {
		parts := []string{e.File, fe.Field, Detail(fe)}
		if e.Lines[i] > 0 {
			parts[0] += fmt.Sprintf(":%d", e.Lines[i])
		}
		out[i] = strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ": ")
	}
	return strings.Join(out, "\n")
}

// Unwrap returns what stopped the file from being read (such as an error
// matching fs.ErrNotExist) or made a Problem, if anything did, and the
// problems: errors.As gets the first *field.Error.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.err != nil {
		errs = append(errs, e.err)
	}
	for _, fe := range e.List {
		errs = append(errs, fe)
	}
	return errs
}

// Detail is a problem without its file, line and field: what is wrong and
// the fix.
func Detail(e *field.Error) string {
	switch {
	case e.Type == field.ErrorTypeRequired:
		return strings.TrimSuffix("is missing; "+e.Detail, "; ")
	case e.BadValue == field.OmitValueType{}:
		return e.Detail
	}
	return e.ErrorBody()
}

// err makes the problems one *Error, nil without any. A check's problem
// of a value decoding found wrong (it, or a value within it or holding
// it) is left out: it says the same again.
func (l *loader) err() error {
	var ps []problem
	for i, p := range l.problems {
		if i >= l.decoded && l.underDecoded(p.err.Field) {
			continue
		}
		if p.line == 0 {
			p.line = l.lineOf(p.err.Field)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].line < ps[b].line })
	e := &Error{File: l.path}
	for _, p := range ps {
		e.List, e.Lines = append(e.List, p.err), append(e.Lines, p.line)
	}
	return e
}

// underDecoded reports whether decoding found a problem with the value at
// path, with one that holds it, or with one it holds.
func (l *loader) underDecoded(path string) bool {
	within := func(inner, outer string) bool {
		return inner == outer || strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"[")
	}
	for _, p := range l.problems[:l.decoded] {
		if f := p.err.Field; f == "" || within(path, f) || within(f, path) {
			return true // "": the file is no mapping, and nothing was decoded
		}
	}
	return false
}
