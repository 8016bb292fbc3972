package strictyaml

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type server struct {
	Port    yaml.Node            `yaml:"port"`
	Auth    yaml.Node            `yaml:"auth"`
	Skipped string               `yaml:"-"`
	Unknown map[string]yaml.Node `yaml:",inline"`
}

// decode decodes doc's top mapping into a server at the path "server".
func decode(t *testing.T, doc string) (*Decoder, server, []Key, bool) {
	t.Helper()
	var d Decoder
	top := d.Document([]byte(doc))
	if top == nil {
		t.Fatalf("no document in %q: %+v", doc, d.Problems)
	}
	var s server
	keys, ok := d.Mapping(field.NewPath("server"), top, &s, "write a mapping such as {port: 1}")
	return &d, s, keys, ok
}

// problems renders problems as "path: message (line N)".
func problems(d *Decoder) []string {
	var out []string
	for _, p := range d.Problems {
		path := "<file>"
		if p.Path != nil {
			path = p.Path.String()
		}
		out = append(out, fmt.Sprintf("%s: %s (line %d)", path, p.Message, p.Line))
	}
	return out
}

func names(keys []Key) []string {
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s@%d", k.Name, k.Line))
	}
	return out
}

func TestDocument(t *testing.T) {
	for doc, want := range map[string]string{
		"a: 1\n   b: 2\n":     "yaml: the file is not valid YAML: mapping values are not allowed in this context (line 2)",
		"a: 1\n---\nb: 2\n":   "yaml: the file holds more than one YAML document (line 3)",
		"a: *nowhere\n":       "yaml: the file is not valid YAML: unknown anchor 'nowhere' referenced (line 0)",
		"":                    "",
		"# only a comment\n":  "",
		"~\n":                 "",
		"a: 1\n---\n# none\n": "",
	} {
		var d Decoder
		top := d.Document([]byte(doc))
		got := strings.Join(problems(&d), "\n")
		if got != want {
			t.Errorf("%q: problems %q, want %q", doc, got, want)
		}
		if want == "" && strings.HasPrefix(doc, "a:") && (top == nil || top.Kind != yaml.MappingNode) {
			t.Errorf("%q: top = %+v", doc, top)
		}
		if want == "" && !strings.HasPrefix(doc, "a:") && top != nil {
			t.Errorf("%q: top = %+v, want nil for an empty document", doc, top)
		}
	}
	for _, p := range (&Decoder{}).Problems {
		t.Errorf("a new Decoder has problems: %v", p)
	}
}

func TestMapping(t *testing.T) {
	d, s, keys, ok := decode(t, "port: ~\nauth: basic\ncolour: blue\nshape:\n  round: true\n")
	if !ok || len(d.Problems) != 0 {
		t.Fatalf("ok=%v problems %v", ok, problems(d))
	}
	if !IsNull(&s.Port) || s.Port.Kind == 0 || s.Port.Line != 1 {
		t.Errorf("port written empty: %+v; want a null node at line 1, not an absent one", s.Port)
	}
	if s.Auth.Value != "basic" || s.Auth.Line != 2 {
		t.Errorf("auth = %+v", s.Auth)
	}
	// Unknown keys at their own line (shape's value starts on line 5).
	if got := names(keys); !reflect.DeepEqual(got, []string{"colour@3", "shape@4"}) {
		t.Errorf("unknown keys = %v", got)
	}
	_, s, _, _ = decode(t, "auth: x\n")
	if s.Port.Kind != 0 || !IsNull(&s.Port) {
		t.Errorf("port left out: %+v, want an absent node", s.Port)
	}
}

func TestMappingProblems(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		ok    bool
		want  []string
		port  string // the port decoded, when ok
		extra []string
	}{
		{doc: "port: 1\nport: 2\nauth: a\n", ok: true, port: "1",
			want: []string{"server.port: is written twice (first at line 1) (line 2)"}},
		{doc: "? [a]\n: b\nport: 3\n", ok: true, port: "3",
			want: []string{"server: has a key that is a list, not a name (line 1)"}},
		{doc: "~: z\nport: 3\n", ok: true, port: "3",
			want: []string{"server: has a key that is empty, not a name (line 1)"}},
		{doc: "<<: 5\nport: 4\n", ok: true, port: "4",
			want: []string{"server.<<: merges the number 5 (line 1)"}},
		{doc: "<<: [{port: 1}, [x]]\n", ok: true,
			want: []string{"server.<<: merges a list (line 1)"}},
		{doc: "a: &a {<<: 5}\n<<: *a\nport: 6\n", ok: true, port: "6", extra: []string{"a@1"},
			want: []string{"server.<<: merges the number 5 (line 1)"}},
		{doc: "a: &a {port: 1, port: 2}\n<<: *a\n", ok: false, extra: nil,
			want: []string{`server: what its merge keys (<<) bring in does not decode: mapping key "port" already defined at line 1 (line 1)`}},
		{doc: "a: &a {? [x] : 1}\n<<: *a\nauth: b\n", ok: false,
			want: []string{"server: what its merge keys (<<) bring in does not decode: cannot unmarshal !!seq into string (line 1)"}},
	} {
		d, s, keys, ok := decode(t, tc.doc)
		if got := problems(d); ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: ok=%v problems\n%q\nwant ok=%v\n%q", tc.doc, ok, got, tc.ok, tc.want)
		}
		if tc.port != "" && s.Port.Value != tc.port {
			t.Errorf("%q: port %q, want %q: the rest of the mapping is decoded", tc.doc, s.Port.Value, tc.port)
		}
		if tc.ok && tc.extra != nil && !reflect.DeepEqual(names(keys), tc.extra) {
			t.Errorf("%q: unknown keys %v, want %v", tc.doc, names(keys), tc.extra)
		}
	}
}

func TestNotAMapping(t *testing.T) {
	var d Decoder
	top := d.Document([]byte("- a\n"))
	if _, ok := d.Mapping(nil, top, &server{}, "write a mapping with port:"); ok {
		t.Error("a list decoded as a mapping")
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "5", Line: 7}
	if _, ok := d.Mapping(field.NewPath("server"), n, &server{}, "write a mapping such as {port: 1}"); ok {
		t.Error("a number decoded as a mapping")
	}
	want := []Problem{
		{Kind: NotMapping, Line: 1, Message: "the file is a list, not a mapping", Fix: "write a mapping with port:"},
		{Kind: NotMapping, Path: field.NewPath("server"), Line: 7, Message: "is the number 5, not a mapping", Fix: "write a mapping such as {port: 1}"},
	}
	if !reflect.DeepEqual(d.Problems, want) {
		t.Errorf("problems\n%+v\nwant\n%+v", d.Problems, want)
	}
	for _, null := range []*yaml.Node{nil, {}, {Kind: yaml.ScalarNode, Tag: "!!null"}} {
		if keys, ok := d.Mapping(nil, null, &server{}, ""); !ok || keys != nil {
			t.Errorf("%+v: %v %v; an empty mapping", null, keys, ok)
		}
	}
}

func TestMergeKeys(t *testing.T) {
	d, s, keys, ok := decode(t, "base: &b {port: 1, auth: base, colour: red}\nmore: &m {auth: more, size: 2}\n<<: [*m, *b]\nport: 9\n")
	if !ok || len(d.Problems) != 0 {
		t.Fatalf("ok=%v %v", ok, problems(d))
	}
	// A key written in the mapping wins over merged ones; of the merged, the earlier.
	if s.Port.Value != "9" || s.Auth.Value != "more" {
		t.Errorf("port %q auth %q, want 9 and more", s.Port.Value, s.Auth.Value)
	}
	if got := names(keys); !reflect.DeepEqual(got, []string{"base@1", "colour@1", "more@2", "size@2"}) {
		t.Errorf("unknown keys %v: merged ones at their value's line", got)
	}

	var m map[string]yaml.Node
	var d2 Decoder
	top := d2.Document([]byte("x: &x {a: 1}\ny: {<<: *x, b: 2}\n"))
	var doc struct {
		X, Y    yaml.Node
		Unknown map[string]yaml.Node `yaml:",inline"`
	}
	d2.Mapping(nil, top, &doc, "")
	entries, ok := d2.Mapping(field.NewPath("y"), &doc.Y, &m, "")
	if !ok || !reflect.DeepEqual(names(entries), []string{"a@1", "b@2"}) || len(d2.Problems) != 0 {
		t.Errorf("a map: %v %v %v", names(entries), ok, problems(&d2))
	}
}

func TestMergeBomb(t *testing.T) {
	// Each level merges the one before it ten times over: expanded, the last
	// would bring in 10^8 entries.
	var b strings.Builder
	b.WriteString("l0: &l0 {a: b}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "l%d: &l%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	b.WriteString("server: {<<: *l8}\n")
	var d Decoder
	top := d.Document([]byte(b.String()))
	var doc struct {
		Server  yaml.Node            `yaml:"server"`
		Unknown map[string]yaml.Node `yaml:",inline"`
	}
	start := time.Now()
	if _, ok := d.Mapping(nil, top, &doc, ""); !ok {
		t.Fatalf("the top level: %v", problems(&d))
	}
	_, ok := d.Mapping(field.NewPath("server"), &doc.Server, &server{}, "")
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v", elapsed)
	}
	want := []string{"server.<<: merge keys bring in more than 10000 entries (line 10)"}
	if got := problems(&d); ok || !reflect.DeepEqual(got, want) {
		t.Errorf("ok=%v problems %q, want %q", ok, got, want)
	}
	// Once over the bound, further merges are refused without a second report.
	if _, ok := d.Mapping(field.NewPath("server"), &doc.Server, &server{}, ""); ok || len(d.Problems) != 1 {
		t.Errorf("second time: ok=%v %v", ok, problems(&d))
	}
}

func TestFields(t *testing.T) {
	if got := Fields(&server{}); !reflect.DeepEqual(got, []string{"port", "auth"}) {
		t.Errorf("Fields = %v", got)
	}
	if got := Fields(server{}); !reflect.DeepEqual(got, []string{"port", "auth"}) {
		t.Errorf("Fields of a value = %v", got)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"name", "address", "winrm", "port", "passwordFrom", "machines"}
	for key, want := range map[string]string{
		"prot": "port", "adress": "address", "WinRM": "winrm", "passwordfrom": "passwordFrom",
		"machine": "machines", "colour": "", "x": "", "nam": "name",
	} {
		if got := Suggest(key, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	var d Decoder
	top := d.Document([]byte("a: 5\nb: 1.5\nc: true\nd: yes\ne: [1]\nf: {x: 1}\ng:\nh: &h x\ni: *h\n"))
	want := map[string]string{"a": "the number 5", "b": "the number 1.5", "c": "true", "d": `the string "yes"`,
		"e": "a list", "f": "a mapping", "g": "empty", "h": `the string "x"`, "i": `the string "x"`}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i].Value, top.Content[i+1]
		if got := Describe(v); got != want[k] {
			t.Errorf("Describe(%s) = %q, want %q", k, got, want[k])
		}
	}
	if got := Quote(strings.Repeat("é", 70)); got != `"`+strings.Repeat("é", 64)+`…"` {
		t.Errorf("Quote of a long value = %s", got)
	}
	if !IsNull(nil) || Deref(nil) != nil {
		t.Error("nil")
	}
}
