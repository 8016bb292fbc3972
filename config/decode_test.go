package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sample is a file of every shape the decoder takes, with defaults.
type sample struct {
	Name    string            `yaml:"name"`
	Workers int               `yaml:"workers"`
	Enabled *bool             `yaml:"enabled"`
	CNI     sampleCNI         `yaml:"cni"`
	SANs    []string          `yaml:"certSANs"`
	Timeout Duration          `yaml:"readyTimeout"`
	Labels  map[string]string `yaml:"labels"`
	Ratio   float64           `yaml:"ratio"`
	Skipped string            `yaml:"-"`
}

type sampleCNI struct {
	Backend string `yaml:"backend"`
	VNI     int    `yaml:"vni"`
}

var sampleOn = true

func (*sample) kind() string  { return "Sample" }
func (*sample) check(*loader) {}
func (*sample) defaults() *sample {
	return &sample{Name: "default", CNI: sampleCNI{Backend: "vxlan", VNI: 4096}, Enabled: &sampleOn}
}

func parseSample(doc string) (*sample, error) { return Parse[sample]("c.yaml", []byte(doc), nil) }

// Every problem at once, each with its file, line and field, in the order
// of the file, and an unknown key with the nearest known field.
func TestEveryProblemWithLineAndSuggestion(t *testing.T) {
	_, err := parseSample(`name: wc
wrokers: 3
cni:
  backend: vxlan
  vnii: 4096
workers: many
certSANs: a.example
readyTimeout: 300
colour: blue
ratio: "1.5"
`)
	list, lines := problemsOf(t, err)
	for _, want := range []string{
		`c.yaml:2: wrokers: is not a field of Sample; did you mean "workers"?`,
		`c.yaml:5: cni.vnii: is not a field of cni; did you mean "vni"?`,
		`c.yaml:6: workers: is the string "many", not a whole number; write a whole number, unquoted`,
		`c.yaml:7: certSANs: is the string "a.example", not a list`,
		`c.yaml:8: readyTimeout: "300" is not a duration; write one such as 5m or 90s`,
		"c.yaml:9: colour: is not a field of Sample; the fields of Sample are name, workers, enabled, cni, certSANs, readyTimeout, labels, ratio",
		`c.yaml:10: ratio: is the string "1.5", not a number`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems lack %q:\n%v", want, err)
		}
	}
	if len(list) != 7 || lines[0] != 2 || lines[6] != 10 {
		t.Errorf("%d problems at lines %v, want 7 from line 2 to 10:\n%v", len(list), lines, err)
	}
}

// Fields the file leaves out keep their defaults; a value written empty
// leaves its field as it was; merges, anchors and pointers decode; a
// default reached through a pointer is never written to.
func TestDecodeOverDefaults(t *testing.T) {
	s, err := parseSample("name: mine\ncni: {<<: {backend: host-gw}, vni: ~}\nenabled: false\nlabels: {a: b, n: 12}\nratio: 2\nworkers: 0x10\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mine" || s.CNI != (sampleCNI{"host-gw", 4096}) || *s.Enabled || s.Labels["n"] != "12" || s.Ratio != 2 || s.Workers != 16 {
		t.Errorf("decoded %+v", s)
	}
	if !sampleOn {
		t.Error("decoding wrote through a pointer it was given as a default")
	}
	if s, err := parseSample("# nothing\n"); err != nil || s.Name != "default" {
		t.Errorf("an empty file: %+v, %v; want the defaults", s, err)
	}
}

func TestDocument(t *testing.T) {
	for doc, want := range map[string]string{
		"name: 1\n   b: 2\n":            "c.yaml:2: yaml: the file is not valid YAML: mapping values are not allowed in this context",
		"name: a\n---\nname: b\n":       "c.yaml:3: yaml: the file holds more than one YAML document",
		"name: *nowhere\n":              "c.yaml: yaml: the file is not valid YAML: unknown anchor 'nowhere' referenced",
		"- a\n":                         "c.yaml:1: is a list, not a mapping",
		"name: a\n---\n# none\n":        "",
		"~\n":                           "",
		"name: a\nname: b\n":            "c.yaml:2: name: is written twice (first at line 1); keep one of them",
		"? [a]\n: b\nname: x\n":         "c.yaml:1: has a key that is a list, not a name",
		"~: z\nname: x\n":               "c.yaml:1: has a key that is empty, not a name",
		"<<: 5\nname: x\n":              "c.yaml:1: <<: merges the number 5",
		"<<: [{name: x}, [y]]\n":        "c.yaml:1: <<: merges a list",
		"cni: {<<: {vni: 1, vni: 2}}\n": "c.yaml:1: cni.vni: is written twice (first at line 1)",
		"cni: {<<: {<<: 5}}\n":          "c.yaml:1: cni.<<: merges the number 5",
		"cni: {<<: {? [x] : 1}}\n":      "c.yaml:1: cni: has a key that is a list, not a name",
	} {
		_, err := parseSample(doc)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", doc, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%q: %v\nwant %s", doc, err, want)
		}
	}
}

// A key the mapping writes wins over merged ones; of the merged, the
// earlier.
func TestMergeKeys(t *testing.T) {
	s, err := parseSample("cni: {<<: [{backend: more, vni: 7}, {backend: base, vni: 8}], vni: 9}\nlabels: {<<: {a: '1'}, b: '2'}\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.CNI != (sampleCNI{"more", 9}) || !reflect.DeepEqual(s.Labels, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("decoded %+v", s)
	}
}

// Each level merges the one before it ten times over: expanded, the last
// would bring in 10^8 entries. The loader stops at maxValues, soon.
func TestMergeBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("labels:\n  <<: *l8\nx:\n  l0: &l0 {a: b}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	doc := strings.Replace(b.String(), "labels:\n  <<: *l8\n", "", 1) + "labels: {<<: *l8}\n"
	start := time.Now()
	_, err := parseSample(doc)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v", elapsed)
	}
	if err == nil || strings.Count(err.Error(), "expand to more than 100000 values") != 1 {
		t.Errorf("error = %v", err)
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"name", "address", "winrm", "port", "passwordFrom", "machines"}
	for word, want := range map[string]string{
		"prot": "port", "adress": "address", "WinRM": "winrm", "passwordfrom": "passwordFrom",
		"machine": "machines", "colour": "", "x": "", "nam": "name",
	} {
		got := DidYouMean(word, known)
		if (want == "" && got != "") || (want != "" && got != fmt.Sprintf("did you mean %q? ", want)) {
			t.Errorf("DidYouMean(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	l := newLoader("c.yaml", nil)
	top := l.document([]byte("a: 5\nb: 1.5\nc: true\nd: yes\ne: [1]\nf: {x: 1}\ng:\nh: &h x\ni: *h\n"))
	want := map[string]string{"a": "the number 5", "b": "the number 1.5", "c": "true", "d": `the string "yes"`,
		"e": "a list", "f": "a mapping", "g": "empty", "h": `the string "x"`, "i": `the string "x"`}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i].Value, deref(top.Content[i+1])
		if got := describe(v); got != want[k] {
			t.Errorf("describe(%s) = %q, want %q", k, got, want[k])
		}
	}
	if got := Quote(strings.Repeat("é", 70)); got != `"`+strings.Repeat("é", 64)+`…"` {
		t.Errorf("Quote of a long value = %s", got)
	}
}

// A file may say what it is; it is refused when it says something else,
// naming the field and the fix.
func TestAPIVersionAndKind(t *testing.T) {
	for doc, want := range map[string]string{
		"apiVersion: winconform.io/v1alpha1\nkind: Sample\nname: a\n": "",
		"kind: Sample\nname: a\n":                                     "",
		"apiVersion: winconform.io/v1\nname: a\n":                     `c.yaml:1: apiVersion: "winconform.io/v1" is not an API version this harness reads; write apiVersion: winconform.io/v1alpha1, or leave it out`,
		"apiVersion: winconform.io/v1alpha1\nkind: Cluster\n":         `c.yaml:2: kind: "Cluster" is not the kind of this file; write kind: Sample`,
		"kind: [Sample]\n":                                            `c.yaml:1: kind: "" is not the kind of this file`,
	} {
		s, err := parseSample(doc)
		switch {
		case want == "" && (err != nil || s.Name != "a"):
			t.Errorf("%q: %+v, %v", doc, s, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%q: %v\nwant %s", doc, err, want)
		}
	}
}
