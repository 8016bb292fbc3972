// Package strictyaml decodes the harness's YAML files (the inventory, the
// VM file, the image overrides, the cluster file, the release gate policy)
// into typed structs strictly, and says where each problem is: the field's
// path (apimachinery's field.Path) and the line. It collects every problem
// instead of stopping at the first, so that a file's author sees them all
// at once, and names the nearest known field for an unknown one.
//
// Unmarshal decodes into plain tagged structs by reflection (the cluster
// file, the policy). The inventory and the VM file, whose checks need each
// value's node, decode as follows.
//
// A struct to decode into holds a yaml.Node per field, so that a field
// written empty (~) differs from one left out and every value keeps its line
// for the checks that follow, and one `yaml:",inline"` map[string]yaml.Node
// that receives the keys the struct does not know: the caller refuses them
// (Suggest offers the nearest known one). yaml.v3 does the decoding: keys
// to fields, anchors, aliases and merge keys (<<). Before it does, Mapping
// checks the keys: each a name, none written twice, merges of mappings only,
// and no more merged entries over the whole file than a bound (a "billion
// laughs" of merges stays cheap).
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kind is what sort of problem a Problem is.
type Kind int

// The kinds of problems.
const (
	// Invalid: a value is wrong (the callers' own checks report these).
	Invalid Kind = iota
	// Syntax: the file is not YAML, or holds more than one document.
	Syntax
	// NotMapping: a mapping was expected.
	NotMapping
	// BadKey: a key that is not a name (a list, a mapping, or empty).
	BadKey
	// Duplicate: a key written twice in one mapping.
	Duplicate
	// BadMerge: a merge key (<<) whose value is not a mapping or a list of
	// them, or merges that bring in too many entries.
	BadMerge
)

// Problem is one thing wrong in a file.
type Problem struct {
	Kind Kind
	// Path is the field's path from the top of the file; nil for the file
	// as a whole. Syntax problems have the path "yaml".
	Path *field.Path
	// Line is the line of the file the problem is at, or 0 when unknown.
	Line int
	// Message says what is wrong, Fix what to do about it.
	Message, Fix string
}

// MaxMerged bounds the entries that merge keys bring in over a whole file.
const MaxMerged = 10000

// maxDepth bounds nested aliases and merges, which can only nest as deep as
// the file itself but need no more than a few levels in practice.
const maxDepth = 16

// Decoder decodes the mappings of one file, collecting its problems.
type Decoder struct {
	Problems []Problem

	lines map[string]int // the line of each field Unmarshal decoded, by path

	merged        int  // entries brought in by merge keys so far
	mergeReported bool // too many merged entries was reported
}

// Report records a problem of a value.
func (d *Decoder) Report(p *field.Path, line int, msg, fix string) {
	d.add(Invalid, p, line, msg, fix)
}

func (d *Decoder) add(k Kind, p *field.Path, line int, msg, fix string) {
	d.Problems = append(d.Problems, Problem{Kind: k, Path: p, Line: line, Message: msg, Fix: fix})
}

// yamlLine and typeErrorLine split a YAML library error into its line and message.
var (
	yamlLine      = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	typeErrorLine = regexp.MustCompile(`^line (\d+): (.*)$`)
)

// Document parses data as one YAML document and returns its top node,
// aliases followed, or nil when the file holds no document or only an
// empty one. A syntax error or a second document is reported (path "yaml").
func (d *Decoder) Document(data []byte) *yaml.Node {
	syntax := field.NewPath("yaml")
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) {
			d.syntax(err)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		if len(extra.Content) > 0 && !IsNull(extra.Content[0]) {
			d.add(Syntax, syntax, extra.Content[0].Line, "the file holds more than one YAML document",
				"keep one document: remove the '---' line and what follows it, or merge the documents")
		}
	case !errors.Is(err, io.EOF):
		d.syntax(err)
		return nil
	}
	top := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		top = doc.Content[0]
	}
	if IsNull(top) {
		return nil
	}
	return Deref(top)
}

// syntax reports a YAML syntax error, with its line when the library gives one.
func (d *Decoder) syntax(err error) {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	d.add(Syntax, field.NewPath("yaml"), line, "the file is not valid YAML: "+msg,
		"fix the YAML near that line: indent with spaces (not tabs), line up the keys of each mapping, and quote values that hold ': ' or ' #'")
}

// Key is a key of a mapping: its name, the line it is at, and its value.
type Key struct {
	Name  string
	Line  int
	Value *yaml.Node
	col   int
}

// Mapping decodes the mapping n, found at path p, into out: a pointer to a
// struct (yaml.Node fields and an inline map[string]yaml.Node) or to a
// map[string]yaml.Node. Empty (null or absent) n decodes as an empty
// mapping. It returns the keys out has no field for (for a map: every key),
// written or merged, in the order of the file; and false when n is not a
// mapping (fix says how to write one) or cannot be decoded, after reporting
// why. Keys that are not names, keys written twice and bad merges are
// reported and left out; the rest is decoded.
func (d *Decoder) Mapping(p *field.Path, n *yaml.Node, out any, fix string) ([]Key, bool) {
	n = Deref(n)
	if IsNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		msg := "is " + Describe(n) + ", not a mapping"
		if p == nil {
			msg = "the file " + msg
		}
		d.add(NotMapping, p, n.Line, msg, fix)
		return nil, false
	}
	clean, lines, ok := d.keys(p, n)
	if !ok {
		return nil, false
	}
	if err := clean.Decode(out); err != nil {
		// The keys were checked: what is left is in what merge keys bring in.
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			te = &yaml.TypeError{Errors: []string{strings.TrimPrefix(err.Error(), "yaml: ")}}
		}
		for _, e := range te.Errors {
			line := n.Line
			if m := typeErrorLine.FindStringSubmatch(e); m != nil {
				line, _ = strconv.Atoi(m[1])
				e = m[2]
			}
			d.add(BadMerge, p, line, "what its merge keys (<<) bring in does not decode: "+e,
				"merge mappings whose keys are names, each written once")
		}
		return nil, false
	}
	return rest(out, lines), true
}

// keys checks the keys of the mapping n and returns a copy of n without the
// ones it reported, and the line and column of each key written in n.
func (d *Decoder) keys(p *field.Path, n *yaml.Node) (*yaml.Node, map[string][2]int, bool) {
	clean := *n
	clean.Content = nil
	lines := map[string][2]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if !d.merge(p, v, 0, k.Line) {
				if d.mergeReported {
					return nil, nil, false
				}
				continue
			}
		} else {
			kd := Deref(k)
			if kd == nil || kd.Kind != yaml.ScalarNode || IsNull(kd) {
				d.add(BadKey, p, k.Line, "has a key that is "+Describe(kd)+", not a name", "write each key as a plain name")
				continue
			}
			if first, dup := lines[kd.Value]; dup {
				d.add(Duplicate, p.Child(kd.Value), k.Line, fmt.Sprintf("is written twice (first at line %d)", first[0]), "keep one of them")
				continue
			}
			lines[kd.Value] = [2]int{k.Line, k.Column}
		}
		clean.Content = append(clean.Content, k, v)
	}
	return &clean, lines, true
}

// merge checks the value of a merge key (written at line): a mapping or a
// list of mappings, whose own merges are as good, and which bring in no more
// than MaxMerged entries over the whole file.
func (d *Decoder) merge(p *field.Path, v *yaml.Node, depth, line int) bool {
	at := p.Child("<<")
	if depth > maxDepth {
		d.add(BadMerge, at, line, "merge keys (<<) are nested too deep", "flatten the merged mappings")
		return false
	}
	sources := []*yaml.Node{v}
	if dv := Deref(v); dv != nil && dv.Kind == yaml.SequenceNode {
		sources = dv.Content
	}
	for _, src := range sources {
		m := Deref(src)
		if m == nil || m.Kind != yaml.MappingNode {
			d.add(BadMerge, at, src.Line, "merges "+Describe(m), "merge a mapping (<<: *anchor) or a list of them")
			return false
		}
		d.merged += len(m.Content) / 2
		if d.merged > MaxMerged {
			if !d.mergeReported {
				d.mergeReported = true
				d.add(BadMerge, at, line, fmt.Sprintf("merge keys bring in more than %d entries", MaxMerged),
					"write the repeated fields out, or use defaults")
			}
			return false
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" && !d.merge(p, m.Content[i+1], depth+1, line) {
				return false
			}
		}
	}
	return true
}

// rest returns the keys of out's inline map (or of out itself, a map), in
// the order of the file: those written at their own line, merged ones at
// their value's.
func rest(out any, lines map[string][2]int) []Key {
	v := reflect.ValueOf(out).Elem()
	if v.Kind() == reflect.Struct {
		v = inlineMap(v)
	}
	var keys []Key
	for it := v.MapRange(); it.Next(); {
		node := it.Value().Interface().(yaml.Node)
		k := Key{Name: it.Key().String(), Value: &node, Line: node.Line, col: node.Column}
		if at, ok := lines[k.Name]; ok {
			k.Line, k.col = at[0], at[1]
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Line != keys[j].Line {
			return keys[i].Line < keys[j].Line
		}
		return keys[i].col < keys[j].col
	})
	return keys
}

// inlineMap returns the struct's `yaml:",inline"` map.
func inlineMap(v reflect.Value) reflect.Value {
	for i := 0; i < v.NumField(); i++ {
		if strings.Contains(v.Type().Field(i).Tag.Get("yaml"), ",inline") {
			return v.Field(i)
		}
	}
	panic(fmt.Sprintf("strictyaml: %s has no inline map for the keys it does not know", v.Type()))
}

// Fields returns the keys the struct out (or *out) has fields for, in the
// order of its fields.
func Fields(out any) []string {
	t := reflect.TypeOf(out)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// Suggest returns the known key nearest to key ("port" for "prot"), or ""
// when none is close.
func Suggest(key string, known []string) string {
	best, bestDist := "", 3
	lk := strings.ToLower(key)
	for _, k := range known {
		if strings.ToLower(k) == lk {
			return k
		}
		if dist := levenshtein(lk, strings.ToLower(k)); dist < bestDist && dist < len(k)/2+1 {
			best, bestDist = k, dist
		}
	}
	return best
}

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
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

// Deref follows aliases (*name) to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent (nil, or a field left out) or an
// explicit null (~, null or nothing).
func IsNull(n *yaml.Node) bool {
	n = Deref(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// Describe names a node's value for messages: "a list", "a mapping", "the
// number 5", "the string \"yes\"", "empty".
func Describe(n *yaml.Node) string {
	n = Deref(n)
	switch {
	case IsNull(n):
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
	const max = 64
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return strconv.Quote(s)
}

// Render is a problem's one line without the file: "<field>: <message>
// (line N); <fix>", leaving out the field, the line and the fix where they
// are empty (0 for the line).
func Render(field string, line int, message, fix string) string {
	var b strings.Builder
	if field != "" {
		b.WriteString(field)
		b.WriteString(": ")
	}
	b.WriteString(message)
	if line > 0 {
		fmt.Fprintf(&b, " (line %d)", line)
	}
	if fix != "" {
		b.WriteString("; ")
		b.WriteString(fix)
	}
	return b.String()
}
