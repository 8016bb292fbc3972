package strictyaml

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Unmarshal decodes the YAML document data into out, a pointer to a struct
// whose fields name their keys by their yaml tag (or, without one, their
// json tag), strictly, and records every problem in d.Problems rather than
// stopping at the first: a key that names no field (with the nearest known
// one: "did you mean"), a key written twice, a value of the wrong shape or
// type for its field, each with its field path and line. Fields the
// document leaves out keep the values out had (defaults); a value written
// empty (~) leaves its field as it was. A field whose type decodes itself
// (yaml.Unmarshaler, json.Unmarshaler) gets its value that way, and its
// error is the problem's message. It returns false when the file holds no
// document. The line of every field written is kept (Line).
func (d *Decoder) Unmarshal(data []byte, out any) bool {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic(fmt.Sprintf("strictyaml: Unmarshal into %T, not a pointer", out))
	}
	top := d.Document(data)
	if top == nil {
		return false
	}
	d.value(nil, top, v.Elem(), "the file")
	return true
}

// Line is the line the field at path p was written at, or 0 (a field left
// out, or a file not decoded by Unmarshal).
func (d *Decoder) Line(p *field.Path) int {
	return d.lines[p.String()]
}

// LineOf is Line for a path written as field.Path writes it
// ("required[0].claims[1]"), as a field.Error has it. A field left out (a
// required one, say) is at the line of the nearest field that holds it.
func (d *Decoder) LineOf(path string) int {
	for path != "" {
		if line, ok := d.lines[path]; ok {
			return line
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}

func (d *Decoder) setLine(p *field.Path, line int) {
	if d.lines == nil {
		d.lines = map[string]int{}
	}
	if _, ok := d.lines[p.String()]; !ok {
		d.lines[p.String()] = line
	}
}

var (
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// value decodes n, found at p, into v; what names the mapping that holds
// it, for messages about its keys.
func (d *Decoder) value(p *field.Path, n *yaml.Node, v reflect.Value, what string) {
	n = Deref(n)
	if IsNull(n) {
		return
	}
	if v.CanAddr() {
		switch pt := v.Addr().Type(); {
		case pt.Implements(yamlUnmarshaler):
			if err := n.Decode(v.Addr().Interface()); err != nil {
				d.Report(p, n.Line, "is "+Describe(n)+": "+typeErrorText(err), "")
			}
			return
		case pt.Implements(jsonUnmarshaler):
			var raw any
			if err := n.Decode(&raw); err != nil {
				d.Report(p, n.Line, "is "+Describe(n)+": "+typeErrorText(err), "")
				return
			}
			data, err := json.Marshal(raw)
			if err == nil {
				err = v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data)
			}
			if err != nil {
				d.Report(p, n.Line, "is "+Describe(n)+": "+err.Error(), "")
			}
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		// A new value, from the default's: a default shared through its
		// pointer is never written to.
		nv := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			nv.Elem().Set(v.Elem())
		}
		d.value(p, n, nv.Elem(), what)
		v.Set(nv)
	case reflect.Struct:
		d.structure(p, n, v, what)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.add(Invalid, p, n.Line, "is "+Describe(n)+", not a list", "write a list: one '- item' a line, or [a, b]")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.setLine(p.Index(i), Deref(item).Line)
			d.value(p.Index(i), item, s.Index(i), what)
		}
		v.Set(s)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			panic(fmt.Sprintf("strictyaml: map %s: keys must be strings", v.Type()))
		}
		if n.Kind != yaml.MappingNode {
			d.add(NotMapping, p, n.Line, "is "+Describe(n)+", not a mapping", "write one 'key: value' a line, indented under it")
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for _, k := range d.entries(p, n) {
			e := reflect.New(v.Type().Elem()).Elem()
			d.setLine(p.Key(k.Name), k.Line)
			d.value(p.Key(k.Name), k.Value, e, what)
			v.SetMapIndex(reflect.ValueOf(k.Name).Convert(v.Type().Key()), e)
		}
	case reflect.Interface:
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.Report(p, n.Line, "is "+Describe(n)+": "+typeErrorText(err), "")
		}
	default:
		if n.Kind != yaml.ScalarNode {
			d.Report(p, n.Line, "is "+Describe(n)+", not "+typeName(v.Type()), "write a single value")
			return
		}
		// YAML 1.2's types, strictly: "no" or "1" is no boolean, "5" (quoted)
		// no number. A string field takes any scalar as it is written.
		tag, fix := n.ShortTag(), ""
		switch v.Kind() {
		case reflect.Bool:
			if tag != "!!bool" {
				fix = "write true or false"
			}
		case reflect.Float32, reflect.Float64:
			if tag != "!!int" && tag != "!!float" {
				fix = "write a number, unquoted"
			}
		case reflect.String:
		default:
			if tag != "!!int" {
				fix = "write a whole number, unquoted"
			}
		}
		if fix != "" {
			d.Report(p, n.Line, "is "+Describe(n)+", not "+typeName(v.Type()), fix)
			return
		}
		tmp := reflect.New(v.Type())
		if err := n.Decode(tmp.Interface()); err != nil {
			d.Report(p, n.Line, "is "+Describe(n)+", not "+typeName(v.Type()), "")
			return
		}
		v.Set(tmp.Elem())
	}
}

// structure decodes the mapping n into the struct v: every key a field.
func (d *Decoder) structure(p *field.Path, n *yaml.Node, v reflect.Value, what string) {
	if n.Kind != yaml.MappingNode {
		msg := "is " + Describe(n) + ", not a mapping"
		if p == nil {
			msg = "the file " + msg
		}
		d.add(NotMapping, p, n.Line, msg, "write one 'key: value' a line")
		return
	}
	fields, names := structFields(v.Type())
	for _, k := range d.entries(p, n) {
		at := p.Child(k.Name)
		i, ok := fields[k.Name]
		if !ok {
			fix := "the fields of " + what + " are " + strings.Join(names, ", ")
			if near := Suggest(k.Name, names); near != "" {
				fix = "did you mean " + near + "?"
			}
			d.add(Invalid, at, k.Line, "is not a field of "+what, fix)
			continue
		}
		d.setLine(at, k.Line)
		d.value(at, k.Value, v.Field(i), k.Name)
	}
}

// entries are the keys of the mapping n with their values, merged keys
// (<<) included where the mapping does not write them itself, in the
// order of the file; bad keys, keys written twice and bad merges are
// reported and left out.
func (d *Decoder) entries(p *field.Path, n *yaml.Node) []Key {
	clean, _, ok := d.keys(p, n)
	if !ok {
		return nil
	}
	var out []Key
	seen := map[string]bool{}
	var merged [][2]*yaml.Node
	for i := 0; i+1 < len(clean.Content); i += 2 {
		k, v := clean.Content[i], clean.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, [2]*yaml.Node{k, v})
			continue
		}
		kd := Deref(k)
		seen[kd.Value] = true
		out = append(out, Key{Name: kd.Value, Line: k.Line, Value: v, col: k.Column})
	}
	// Merged mappings, the first listed first: a key the mapping writes,
	// or an earlier merge brings, wins (YAML's merge key type).
	for _, m := range merged {
		sources := []*yaml.Node{m[1]}
		if dv := Deref(m[1]); dv.Kind == yaml.SequenceNode {
			sources = dv.Content
		}
		for _, src := range sources {
			for _, k := range d.entries(p, Deref(src)) {
				if !seen[k.Name] {
					seen[k.Name] = true
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// structFields maps a struct's keys (yaml tag, else json tag, else the
// field's name) to their field index, and lists the keys.
func structFields(t reflect.Type) (map[string]int, []string) {
	fields := map[string]int{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("yaml")
		if !ok {
			tag = f.Tag.Get("json")
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = i
		names = append(names, name)
	}
	return fields, names
}

// typeName says what a value of kind t is, for messages.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a " + t.String()
}

// typeErrorText is a yaml.v3 decoding error without its "yaml: " and line prefixes.
func typeErrorText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	if m := typeErrorLine.FindStringSubmatch(msg); m != nil {
		msg = m[2]
	}
	return msg
}

// Wrap puts the file and the line in err, an error of a check that follows
// decoding whose message starts with the path of the field it is about
// ("networking.podSubnet: ..."): "source:LINE: networking.podSubnet: ...".
func (d *Decoder) Wrap(source string, err error) error {
	if err == nil {
		return nil
	}
	path, _, _ := strings.Cut(err.Error(), ": ")
	if line := d.LineOf(path); line > 0 {
		return fmt.Errorf("%s:%d: %w", source, line, err)
	}
	return fmt.Errorf("%s: %w", source, err)
}

// Err makes one error of the problems of the file source (nil without
// any): one line each, in the order of the file, "source:LINE: field: what
// is wrong; the fix" (file-wide problems without a field).
func Err(source string, ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	ps = append([]Problem(nil), ps...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Format(source)
	}
	return &FileError{Source: source, Problems: ps, text: strings.Join(lines, "\n")}
}

// FileError is every problem of one file.
type FileError struct {
	Source   string
	Problems []Problem
	text     string
}

func (e *FileError) Error() string { return e.text }

// Format says the problem in one line: "source:LINE: field: what is wrong; the fix".
func (p Problem) Format(source string) string {
	var b strings.Builder
	b.WriteString(source)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != nil && p.Kind != Syntax {
		b.WriteString(p.Path.String() + ": ")
	}
	b.WriteString(p.Message)
	if p.Fix != "" {
		b.WriteString("; " + p.Fix)
	}
	return b.String()
}
