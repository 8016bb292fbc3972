package images

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"go.yaml.in/yaml/v3"
)

// OverridesEnv names the environment variable that FromEnv reads: the path
// of an image override file.
const OverridesEnv = "WINCONFORM_IMAGE_OVERRIDES"

// Overrides point images elsewhere than their defaults, as for a cluster
// that pulls from a mirror; upstream e2e's KUBE_TEST_REPO_LIST does the same.
// The file form (LoadOverrides) is
//
//	registries:              # prefix rewrites, longest prefix wins
//	  mcr.microsoft.com: mirror.example.com/mcr
//	  winconform.local: mirror.example.com/winconform
//	images:                  # whole references, by name (win over registries)
//	  probe: mirror.example.com/winconform/probe:v0.1
type Overrides struct {
	// Registries rewrites the start of default references: a key, a
	// registry or registry/repository prefix, is replaced by its value.
	// A key matches up to a '/', ':' or '@' (mcr.microsoft.com does not
	// match mcr.microsoft.com.example), and the longest matching key wins.
	Registries map[string]string
	// Images replaces the references of images, by name (see Names); the
	// registries do not apply to these.
	Images map[string]string
	// Source names where the overrides come from, for messages.
	Source string

	lines map[string]int // "section.key" -> line in Source
}

// SetOverrides checks o and puts it in force for Ref; nil puts the defaults
// back. Overrides are meant to be set once, before the images are used.
func SetOverrides(o *Overrides) error {
	if o != nil {
		if err := o.validate(); err != nil {
			return err
		}
		o = o.clone()
	}
	active.Store(o)
	return nil
}

// LoadOverrides reads the override file at path and puts it in force.
func LoadOverrides(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("image overrides: %w", err)
	}
	o, err := ParseOverrides(path, data)
	if err != nil {
		return err
	}
	return SetOverrides(o)
}

// FromEnv loads the override file named by $WINCONFORM_IMAGE_OVERRIDES, if
// the variable is set, and reports whether it did.
func FromEnv() (bool, error) {
	path := os.Getenv(OverridesEnv)
	if path == "" {
		return false, nil
	}
	if err := LoadOverrides(path); err != nil {
		return false, fmt.Errorf("%s: %w", OverridesEnv, err)
	}
	return true, nil
}

// ParseOverrides parses an override file's contents and checks them; source
// names the file in errors, which also give the line and the key.
func ParseOverrides(source string, data []byte) (*Overrides, error) {
	o := &Overrides{Source: source, lines: map[string]int{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", source, err)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return o, nil // an empty file overrides nothing
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the file is %s; want a mapping with the keys registries and images", source, root.Line, describe(root))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		if seen[k.Value] {
			return nil, fmt.Errorf("%s:%d: %s appears twice", source, k.Line, k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "registries":
			o.Registries, err = o.stringMap(k.Value, v, "mcr.microsoft.com", "mirror.example.com/mcr")
		case "images":
			o.Images, err = o.stringMap(k.Value, v, "probe", "mirror.example.com/winconform/probe:v0.1")
		default:
			err = fmt.Errorf("%s:%d: unknown key %q (want registries or images)", source, k.Line, k.Value)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// stringMap reads a section, a mapping of strings to strings; exampleKey and
// exampleValue show an entry in messages.
func (o *Overrides) stringMap(section string, n *yaml.Node, exampleKey, exampleValue string) (map[string]string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: %s is %s; want a mapping such as\n  %s:\n    %s: %s", o.Source, n.Line, section, describe(n), section, exampleKey, exampleValue)
	}
	m := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s:%d: %s: a key is %s; want a name", o.Source, k.Line, section, describe(k))
		}
		if _, dup := m[k.Value]; dup {
			return nil, fmt.Errorf("%s:%d: %s.%s appears twice", o.Source, k.Line, section, k.Value)
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			return nil, fmt.Errorf("%s:%d: %s.%s is %s; want one such as %s", o.Source, v.Line, section, k.Value, describe(v), exampleValue)
		}
		m[k.Value] = v.Value
		o.lines[section+"."+k.Value] = k.Line
	}
	return m, nil
}

// validate checks the names and references of o, and that every image's
// reference, as o makes it, parses.
func (o *Overrides) validate() error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(o.Images)) {
		ref := o.Images[k]
		if _, ok := defaults[k]; !ok {
			errs = append(errs, fmt.Errorf("%s: unknown image name (names: %s)", o.where("images", k), strings.Join(Names(), ", ")))
		} else if _, err := name.ParseReference(ref); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an image reference: %v", o.where("images", k), ref, err))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Registries)) {
		v := o.Registries[k]
		if err := checkPrefix(k); err != nil {
			errs = append(errs, fmt.Errorf("%s: the key %v", o.where("registries", k), err))
		} else if err := checkPrefix(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", o.where("registries", k), err))
		}
	}
	if len(errs) == 0 {
		for _, n := range Names() {
			if _, overridden := o.Images[n]; overridden {
				continue
			}
			if ref := o.resolve(n, defaults[n]); ref != defaults[n] {
				if _, err := name.ParseReference(ref); err != nil {
					errs = append(errs, fmt.Errorf("%s: registries make %s %q, which is not an image reference: %v", o.label(), n, ref, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// checkPrefix checks a registry or registry/repository prefix.
func checkPrefix(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty; want a registry such as mirror.example.com or mirror.example.com/mcr")
	case strings.Contains(p, "://"):
		return fmt.Errorf("%q has a scheme; write the registry without one, as mirror.example.com/mcr", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("%q ends with '/'; write it without", p)
	}
	if _, err := name.NewRepository(p+"/image", name.StrictValidation); err != nil {
		return fmt.Errorf("%q is not a registry or registry/repository prefix: %v", p, err)
	}
	return nil
}

// resolve is the reference of the image called image, whose default is def.
func (o *Overrides) resolve(image, def string) string {
	if o == nil {
		return def
	}
	if ref, ok := o.Images[image]; ok {
		return ref
	}
	best := ""
	for prefix := range o.Registries {
		if len(prefix) > len(best) && hasRefPrefix(def, prefix) {
			best = prefix
		}
	}
	if best == "" {
		return def
	}
	return o.Registries[best] + def[len(best):]
}

// hasRefPrefix reports whether ref starts with prefix up to a boundary of
// its parts: the end, '/', ':' (a tag or port) or '@' (a digest).
func hasRefPrefix(ref, prefix string) bool {
	if !strings.HasPrefix(ref, prefix) {
		return false
	}
	return len(ref) == len(prefix) || strings.ContainsRune("/:@", rune(ref[len(prefix)]))
}

// label names the overrides' source in messages.
func (o *Overrides) label() string {
	if o.Source == "" {
		return "image overrides"
	}
	return o.Source
}

// where names a key of a section for messages: file:line: section.key.
func (o *Overrides) where(section, key string) string {
	if line := o.lines[section+"."+key]; line > 0 {
		return fmt.Sprintf("%s:%d: %s.%s", o.label(), line, section, key)
	}
	return fmt.Sprintf("%s: %s.%s", o.label(), section, key)
}

func (o *Overrides) clone() *Overrides {
	c := *o
	c.Registries = maps.Clone(o.Registries)
	c.Images = maps.Clone(o.Images)
	c.lines = maps.Clone(o.lines)
	return &c
}

// deref follows a YAML alias (*name) to the node it stands for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names a node's kind for messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "empty"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}
