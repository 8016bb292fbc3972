package strictyaml

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

type duration struct{ time.Duration }

func (d *duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) < 2 || s[0] != '"' {
		return fmt.Errorf("write it as a quoted string such as \"5m\"")
	}
	v, err := time.ParseDuration(s[1 : len(s)-1])
	d.Duration = v
	return err
}

type inner struct {
	Backend string `json:"backend"`
	VNI     int    `json:"vni,omitempty"`
}

type typedDoc struct {
	Name    string            `json:"name"`
	Workers int               `json:"workers"`
	Enabled *bool             `json:"enabled,omitempty"`
	CNI     inner             `json:"cni"`
	SANs    []string          `json:"certSANs,omitempty"`
	Timeout duration          `json:"readyTimeout,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	// A yaml tag wins over the json tag.
	Level string `yaml:"level" json:"lvl"`
}

func decodeTyped(t *testing.T, doc string, out any) *Decoder {
	t.Helper()
	var d Decoder
	d.Unmarshal([]byte(doc), out)
	return &d
}

func problemsText(d *Decoder) string {
	err := Err("c.yaml", d.Problems)
	if err == nil {
		return ""
	}
	return err.Error()
}

// Every problem at once, each with its file, line and field, and an
// unknown key with the nearest known field.
func TestUnmarshalReportsEveryProblemWithLineAndSuggestion(t *testing.T) {
	doc := `name: wc
wrokers: 3
cni:
  backend: vxlan
  vnii: 4096
workers: many
certSANs: a.example
readyTimeout: 300
colour: blue
`
	var out typedDoc
	d := decodeTyped(t, doc, &out)
	got := problemsText(d)
	for _, want := range []string{
		"c.yaml:2: wrokers: is not a field of the file; did you mean workers?",
		"c.yaml:5: cni.vnii: is not a field of cni; did you mean vni?",
		`c.yaml:6: workers: is the string "many", not a whole number`,
		"c.yaml:7: certSANs: is the string \"a.example\", not a list",
		`c.yaml:8: readyTimeout: is the number 300: write it as a quoted string such as "5m"`,
		"c.yaml:9: colour: is not a field of the file; the fields of the file are name, workers, enabled, cni, certSANs, readyTimeout, labels, level",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if n := len(d.Problems); n != 6 {
		t.Errorf("%d problems, want 6:\n%s", n, got)
	}
	if lines := strings.Split(got, "\n"); !strings.HasPrefix(lines[0], "c.yaml:2:") || !strings.HasPrefix(lines[len(lines)-1], "c.yaml:9:") {
		t.Errorf("problems not in the order of the file:\n%s", got)
	}
	// What decoded, decoded.
	if out.Name != "wc" || out.CNI.Backend != "vxlan" {
		t.Errorf("decoded %+v", out)
	}
}

// Fields the document leaves out keep their defaults; a value written
// empty leaves its field as it was; merges, anchors and pointers decode;
// lines are kept for the checks that follow.
func TestUnmarshalOverDefaults(t *testing.T) {
	type doc struct {
		Base    inner             `json:"base"`
		Name    string            `json:"name"`
		CNI     inner             `json:"cni"`
		Enabled *bool             `json:"enabled"`
		Labels  map[string]string `json:"labels"`
		Level   string            `yaml:"level" json:"lvl"`
	}
	on := true
	out := doc{Name: "default", CNI: inner{Backend: "vxlan", VNI: 4096}, Enabled: &on}
	var d Decoder
	if !d.Unmarshal([]byte(`base: &base {backend: host-gw}
name: mine
cni:
  <<: *base
  vni: ~
enabled: false
labels: {a: b}
level: windows-node
`), &out) || len(d.Problems) != 0 {
		t.Fatalf("problems: %v", problemsText(&d))
	}
	if out.Name != "mine" || out.CNI.Backend != "host-gw" || out.CNI.VNI != 4096 || *out.Enabled || out.Labels["a"] != "b" || out.Level != "windows-node" {
		t.Errorf("decoded %+v (cni %+v)", out, out.CNI)
	}
	if !on {
		t.Error("decoding wrote through a pointer it was given as a default")
	}
	// Lines: a merged key's is where its anchor wrote it.
	if d.Line(field.NewPath("cni", "backend")) != 1 || d.Line(field.NewPath("level")) != 8 || d.LineOf("labels[a]") != 7 {
		t.Errorf("lines: cni.backend %d, level %d, labels[a] %d", d.Line(field.NewPath("cni", "backend")), d.Line(field.NewPath("level")), d.LineOf("labels[a]"))
	}
}

func TestUnmarshalDuplicatesAndSyntax(t *testing.T) {
	var out typedDoc
	d := decodeTyped(t, "name: a\nworkers: 1\nname: b\n", &out)
	if got := problemsText(d); !strings.Contains(got, "c.yaml:3: name: is written twice (first at line 1)") {
		t.Errorf("duplicate: %s", got)
	}
	d = decodeTyped(t, "name: [a\n", &out)
	if got := problemsText(d); !strings.Contains(got, "c.yaml:") || !strings.Contains(got, "not valid YAML") {
		t.Errorf("syntax: %s", got)
	}
	d = decodeTyped(t, "- a\n- b\n", &out)
	if got := problemsText(d); !strings.Contains(got, "c.yaml:1: the file is a list, not a mapping") {
		t.Errorf("a list: %s", got)
	}
	var empty Decoder
	if empty.Unmarshal([]byte("# nothing\n"), &out) || len(empty.Problems) != 0 {
		t.Errorf("an empty file: problems %v", empty.Problems)
	}
	var fe *FileError
	if err := Err("c.yaml", d.Problems); !errors.As(err, &fe) || fe.Source != "c.yaml" || len(fe.Problems) != 1 {
		t.Errorf("Err: %v", err)
	}
	if Err("c.yaml", nil) != nil {
		t.Error("no problems, an error")
	}
}
