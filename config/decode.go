package config

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxValues bounds the values a file decodes to, its aliases and merge
// keys (<<) expanded: a "billion laughs" of anchors stays cheap.
const maxValues = 100000

// maxDepth bounds chains of aliases and merge keys nested in what they merge.
const maxDepth = 16

// loader reads one file: it decodes it strictly into the file's Go type,
// remembering the line of every value, then gives it its defaults and
// checks it, collecting every problem.
type loader struct {
	path, dir string                      // the file, and its directory (absolute)
	env       func(string) (string, bool) // looks up the variables references name
	problems  []problem
	decoded   int             // how many of the problems decoding found (the first ones)
	lines     map[string]int  // the line of each value written, by path
	nulls     map[string]bool // the values written empty (~)
	values    int             // values decoded so far
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

type problem struct {
	err  *field.Error
	line int // 0: the line of the value at err.Field
}

// entry is a key of a mapping, the line it is at, and its value.
type entry struct {
	name  string
	line  int
	value *yaml.Node
}

// decodable is a type that decodes itself from a node: a reference to a
// secret, a file of certificates.
type decodable interface {
	decodeYAML(l *loader, p *field.Path, n *yaml.Node)
}

// extraKeys is a struct that takes keys it has no field for (the VM file
// takes its provider's block): extra reports whether it took e.
type extraKeys interface {
	extra(e entry) bool
}

// add records a problem of the value at p: what is wrong (msg), and the fix.
func (l *loader) add(p *field.Path, line int, msg, fix string) {
	l.problems = append(l.problems, problem{Invalid(p, msg, fix), line})
}

// addAll records problems found by a check.
func (l *loader) addAll(errs field.ErrorList) {
	for _, e := range errs {
		l.problems = append(l.problems, problem{err: e})
	}
}

// require records a field left out; fix says what to set.
func (l *loader) require(p *field.Path, fix string) {
	l.problems = append(l.problems, problem{err: Missing(p, fix)})
}

// written reports whether the file writes the value at p (empty counts).
func (l *loader) written(p *field.Path) bool {
	_, ok := l.lines[p.String()]
	return ok
}

// lineOf is the line of the value at path, or of the nearest value that
// holds it (a field left out is at its mapping's line), or 0.
func (l *loader) lineOf(path string) int {
	for path != "" {
		if line, ok := l.lines[path]; ok {
			return line
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// spend counts a value decoded, and reports (once) a file whose aliases
// and merge keys expand past maxValues.
func (l *loader) spend(p *field.Path, line int) bool {
	l.values++
	if l.values == maxValues+1 {
		l.add(p, line, fmt.Sprintf("the file's aliases and merge keys (<<) expand to more than %d values", maxValues),
			"write the repeated values out instead of merging anchors into each other")
	}
	return l.values <= maxValues
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses data as one YAML document and returns its top node, or
// nil when it holds none (or only an empty one). A syntax error or a
// second document is reported at the path "yaml".
func (l *loader) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) {
			l.syntax(err)
		}
		return nil
	}
	switch err := dec.Decode(&extra); {
	case err == nil && len(extra.Content) > 0 && !isNull(extra.Content[0]):
		l.add(field.NewPath("yaml"), extra.Content[0].Line, "the file holds more than one YAML document",
			"keep one document: remove the '---' line and what follows it")
	case err != nil && !errors.Is(err, io.EOF):
		l.syntax(err)
		return nil
	}
	top := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		top = doc.Content[0]
	}
	if isNull(top) {
		return nil
	}
	return deref(top)
}

func (l *loader) syntax(err error) {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	l.add(field.NewPath("yaml"), line, "the file is not valid YAML: "+msg,
		"fix the YAML near that line: indent with spaces (not tabs), line up the keys of each mapping, and quote values that hold ': ' or ' #'")
}

// decode decodes n, the value at p, into v; what names the mapping that
// holds it, for messages about its keys. A value written empty (~) leaves
// v as it is.
func (l *loader) decode(p *field.Path, n *yaml.Node, v reflect.Value, what string) {
	n = deref(n)
	if n == nil || !l.spend(p, n.Line) {
		return
	}
	if _, ok := l.lines[p.String()]; !ok {
		l.lines[p.String()] = n.Line
	}
	if isNull(n) {
		l.nulls[p.String()] = true
		return
	}
	l.value(p, n, v, what)
}

func (l *loader) value(p *field.Path, n *yaml.Node, v reflect.Value, what string) {
	switch u := v.Addr().Interface().(type) {
	case decodable:
		u.decodeYAML(l, p, n)
		return
	case encoding.TextUnmarshaler:
		if n.Kind != yaml.ScalarNode {
			l.add(p, n.Line, "is "+describe(n)+", not a single value", "write a single value")
		} else if err := u.UnmarshalText([]byte(n.Value)); err != nil {
			l.add(p, n.Line, err.Error(), "")
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			nv.Elem().Set(v.Elem()) // a default is copied, never written to
		}
		l.value(p, n, nv.Elem(), what)
		v.Set(nv)
	case reflect.Struct:
		l.structure(p, n, v, what)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			l.add(p, n.Line, "is "+describe(n)+", not a list", "write a list: one '- item' a line, or [a, b]")
			return
		}
		s := reflect.Zero(v.Type()) // an empty list is nil
		if len(n.Content) > 0 {
			s = reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		}
		for i, item := range n.Content {
			l.decode(p.Index(i), item, s.Index(i), what)
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			l.add(p, n.Line, "is "+describe(n)+", not a mapping", "write one 'key: value' a line, indented under it")
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		refs := v.Type().Elem() == reflect.TypeFor[SecretRef]()
		for _, e := range l.entries(p, n, 0) {
			if !refs && isSecretKey(e.name) {
				l.inlineSecret(p.Key(e.name), e.line)
				continue
			}
			ev := reflect.New(v.Type().Elem()).Elem()
			l.decode(p.Key(e.name), e.value, ev, what)
			v.SetMapIndex(reflect.ValueOf(e.name).Convert(v.Type().Key()), ev)
		}
	default:
		l.scalar(p, n, v)
	}
}

// scalar decodes a scalar, YAML 1.2's types strictly: "no" or "1" is no
// boolean, "5" (quoted) no number. A string takes any scalar as written.
func (l *loader) scalar(p *field.Path, n *yaml.Node, v reflect.Value) {
	want, fix := "", ""
	switch v.Kind() {
	case reflect.String:
		if n.Kind == yaml.ScalarNode {
			if credentialInURL(n.Value) {
				l.add(p, n.Line, "holds a password inside a URL (user:password@): a file never holds a credential, not inside a URL either",
					"write the URL without it (scheme://user@host/...) and give the credential by reference where the file takes one: connection.credentials.NAME: {env: VARIABLE} or {file: PATH} (libvirt over ssh takes a key: ssh-agent, or ?keyfile=PATH)")
				return
			}
			v.SetString(n.Value)
			return
		}
		want, fix = "a string", "write a single value"
	case reflect.Bool:
		want, fix = "true or false", "write true or false"
	case reflect.Float32, reflect.Float64:
		want, fix = "a number", "write a number, unquoted"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want, fix = "a whole number", "write a whole number, unquoted"
	default:
		panic(fmt.Sprintf("config: cannot decode a %s (%s)", v.Type(), p))
	}
	tag := map[reflect.Kind]string{reflect.Bool: "!!bool", reflect.Float32: "!!float", reflect.Float64: "!!float"}[v.Kind()]
	if tag == "" {
		tag = "!!int"
	}
	ok := n.Kind == yaml.ScalarNode && (n.ShortTag() == tag || tag == "!!float" && n.ShortTag() == "!!int")
	tmp := reflect.New(v.Type())
	if !ok || n.Decode(tmp.Interface()) != nil {
		l.add(p, n.Line, "is "+describe(n)+", not "+want, fix)
		return
	}
	v.Set(tmp.Elem())
}

// structure decodes the mapping n into the struct v, each key a field
// (named by its yaml tag).
func (l *loader) structure(p *field.Path, n *yaml.Node, v reflect.Value, what string) {
	if n.Kind != yaml.MappingNode {
		l.add(p, n.Line, "is "+describe(n)+", not a mapping", "write one 'key: value' a line, indented under it")
		return
	}
	ex, _ := v.Addr().Interface().(extraKeys)
	for _, e := range l.entries(p, n, 0) {
		i := -1
		for j := range v.NumField() {
			if keyOf(v.Type().Field(j)) == e.name {
				i = j
			}
		}
		switch known := keys(v.Interface()); {
		case i >= 0 && e.name != "":
			l.decode(p.Child(e.name), e.value, v.Field(i), e.name)
		case ex != nil && ex.extra(e):
		case isSecretKey(e.name):
			l.inlineSecret(p.Child(e.name), e.line)
		default:
			l.add(p.Child(e.name), e.line, "is not a field of "+what,
				DidYouMean(e.name, known)+"the fields of "+what+" are "+strings.Join(known, ", "))
		}
	}
}

// entries returns the keys of the mapping n with their values, those its
// merge keys (<<) bring in after those it writes, in the order of the
// file. Keys that are not names, keys written twice and merges of what is
// not a mapping are reported and left out.
func (l *loader) entries(p *field.Path, n *yaml.Node, depth int) []entry {
	var out []entry
	seen := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !l.spend(p, k.Line) {
			return nil
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		kd := deref(k)
		switch first, dup := seen[kd.Value]; {
		case kd.Kind != yaml.ScalarNode || isNull(kd):
			l.add(p, k.Line, "has a key that is "+describe(kd)+", not a name", "write each key as a plain name")
		case dup:
			l.add(p.Child(kd.Value), k.Line, fmt.Sprintf("is written twice (first at line %d)", first), "keep one of them")
		default:
			seen[kd.Value] = k.Line
			out = append(out, entry{kd.Value, k.Line, v})
		}
	}
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if dm := deref(m); dm != nil && dm.Kind == yaml.SequenceNode {
			srcs = dm.Content
		}
		for _, src := range srcs {
			ms := deref(src)
			switch {
			case ms == nil || ms.Kind != yaml.MappingNode:
				l.add(p.Child("<<"), src.Line, "merges "+describe(ms), "merge a mapping (<<: *anchor) or a list of them")
				continue
			case depth >= maxDepth:
				l.add(p.Child("<<"), src.Line, "merge keys (<<) are nested too deep", "write the merged values out")
				return out
			}
			for _, e := range l.entries(p, ms, depth+1) {
				if _, ok := seen[e.name]; !ok {
					seen[e.name] = e.line
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// keys lists the keys of the struct v (or *v), in the order of its fields:
// their yaml tags' names, without unexported fields and those tagged "-".
func keys(v any) []string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		out = append(out, keyOf(t.Field(i)))
	}
	return slices.DeleteFunc(out, func(k string) bool { return k == "" })
}

// keyOf is the key of a struct field, "" for none.
func keyOf(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if !f.IsExported() || name == "-" {
		return ""
	}
	return name
}

// DidYouMean returns `did you mean "port"? ` for the known word nearest to
// word ("prot"), or "" when none is close: the harness's one suggestion.
func DidYouMean(word string, known []string) string {
	best, bestDist := "", 3
	lw := strings.ToLower(word)
	for _, k := range known {
		if strings.ToLower(k) == lw {
			best = k
			break
		}
		if d := distance(lw, strings.ToLower(k)); d < bestDist && d < len(k)/2+1 {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %q? ", best)
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// deref follows aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// isNull reports whether n is absent or written empty (~, null or nothing).
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names a node's value for messages: "a list", "a mapping", "the
// number 5", "the string \"yes\"", "empty".
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "empty"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return n.Value
	}
	return "the string " + Quote(n.Value)
}

// Quote quotes a value for a message, cut short when long.
func Quote(s string) string {
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "…"
	}
	return strconv.Quote(s)
}
