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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/internal/strictyaml"
)

// OverridesEnv names the environment variable that FromEnv reads: the path
// of an image override file.
const OverridesEnv = "WINCONFORM_IMAGE_OVERRIDES"

// Overrides point images elsewhere than their defaults, as for a cluster
// that pulls from a mirror; upstream e2e's KUBE_TEST_REPO_LIST does the same,
// and its files are read too (repoListKeys says what they map). The file
// form (LoadOverrides) is
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

// FromEnv loads the override file named by $WINCONFORM_IMAGE_OVERRIDES, else
// by upstream e2e's $KUBE_TEST_REPO_LIST, if one is set, and reports
// whether it did.
func FromEnv() (bool, error) {
	name, path := OverridesEnv, os.Getenv(OverridesEnv)
	if path == "" {
		name, path = RepoListEnv, os.Getenv(RepoListEnv)
	}
	if path == "" {
		return false, nil
	}
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return false, fmt.Errorf("%s=%s: winconform reads a file, not a URL: download it and set %s to its path", name, path, name)
	}
	if err := LoadOverrides(path); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return true, nil
}

// RepoListEnv is upstream e2e's image repository list variable: the suites'
// upstream images (k8s.io/kubernetes/test/utils/image) follow it, and so do
// the harness's own where a key means the same registry (repoListKeys).
const RepoListEnv = "KUBE_TEST_REPO_LIST"

// repoListKeys are the keys of upstream e2e's repository list
// (k8s.io/kubernetes test/utils/image/manifest.go, RegistryList, v1.37.2;
// gcAuthenticatedRegistry in v1.34.4; microsoftRegistry, gcrReleaseRegistry
// and sampleRegistry in older releases, still in users' files, as in
// hydrophone's air-gapped guide), each with the default registry of the
// harness's images it means, or "" when none of the harness's own images
// come from it (the suites' upstream images still follow it, through
// upstream's own package).
var repoListKeys = map[string]string{
	"microsoftRegistry":        "mcr.microsoft.com", // servercore, nanoserver, the HostProcess base
	"gcRegistry":               "registry.k8s.io",   // pause (upstream's pause image is gcRegistry's too)
	"promoterE2eRegistry":      "",
	"buildImageRegistry":       "",
	"invalidRegistry":          "",
	"gcEtcdRegistry":           "",
	"sigStorageRegistry":       "",
	"privateRegistry":          "",
	"dockerLibraryRegistry":    "",
	"cloudProviderGcpRegistry": "",
	"gcAuthenticatedRegistry":  "",
	"gcrReleaseRegistry":       "",
	"sampleRegistry":           "",
}

// isRepoList says whether a file's top-level keys are those of upstream's
// repository list (and none of an override file's).
func isRepoList(keys []strictyaml.Key) bool {
	found := false
	for _, k := range keys {
		switch _, ok := repoListKeys[k.Name]; {
		case k.Name == "registries" || k.Name == "images":
			return false
		case ok:
			found = true
		}
	}
	return found
}

// repoList reads upstream's repository list into o's registries.
func (o *Overrides) repoList(d *strictyaml.Decoder, keys []strictyaml.Key) {
	known := slices.Sorted(maps.Keys(repoListKeys))
	for _, k := range keys {
		ours, ok := repoListKeys[k.Name]
		if !ok {
			fix := "upstream's keys are " + strings.Join(known, ", ")
			if near := strictyaml.Suggest(k.Name, known); near != "" {
				fix = fmt.Sprintf("did you mean %q? %s", near, fix)
			}
			d.Report(nil, k.Line, fmt.Sprintf("unknown key %q of a %s file", k.Name, RepoListEnv), fix)
			continue
		}
		v := strictyaml.Deref(k.Value)
		if v.Kind != yaml.ScalarNode || strictyaml.IsNull(v) {
			d.Report(field.NewPath(k.Name), v.Line, "is "+strictyaml.Describe(v), "want a registry such as mirror.example.com/mcr")
			continue
		}
		if ours == "" {
			continue
		}
		if o.Registries == nil {
			o.Registries = map[string]string{}
		}
		o.Registries[ours] = v.Value
		o.lines["registries."+ours] = k.Line
	}
}

// overridesDoc is the file as written (see strictyaml).
type overridesDoc struct {
	Registries yaml.Node            `yaml:"registries"`
	Images     yaml.Node            `yaml:"images"`
	Unknown    map[string]yaml.Node `yaml:",inline"`
}

// ParseOverrides parses an override file's contents and checks them; source
// names the file in errors, which also give the line and the key.
func ParseOverrides(source string, data []byte) (*Overrides, error) {
	o := &Overrides{Source: source, lines: map[string]int{}}
	var d strictyaml.Decoder
	var doc overridesDoc
	if top := d.Document(data); top != nil { // an empty file overrides nothing
		unknown, ok := d.Mapping(nil, top, &doc, "want a mapping with the keys registries and images")
		if ok && isRepoList(unknown) {
			o.repoList(&d, unknown)
			unknown, ok = nil, false
		}
		for _, k := range unknown {
			fix := "or a " + RepoListEnv + " file's keys alone (microsoftRegistry, gcRegistry, ...)"
			if near := strictyaml.Suggest(k.Name, []string{"registries", "images"}); near != "" {
				fix = fmt.Sprintf("did you mean %q?", near)
			}
			d.Report(nil, k.Line, fmt.Sprintf("unknown key %q (want registries or images)", k.Name), fix)
		}
		if ok {
			o.Registries = o.section(&d, "registries", &doc.Registries, "mcr.microsoft.com", "mirror.example.com/mcr")
			o.Images = o.section(&d, "images", &doc.Images, "probe", "mirror.example.com/winconform/probe:v0.1")
		}
	}
	if len(d.Problems) > 0 {
		return nil, o.problems(d.Problems)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// section reads a section, a mapping of strings to strings; exampleKey and
// exampleValue show an entry in messages.
func (o *Overrides) section(d *strictyaml.Decoder, name string, n *yaml.Node, exampleKey, exampleValue string) map[string]string {
	p := field.NewPath(name)
	var entries map[string]yaml.Node
	es, ok := d.Mapping(p, n, &entries, fmt.Sprintf("want a mapping such as\n  %s:\n    %s: %s", name, exampleKey, exampleValue))
	if !ok || len(es) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, e := range es {
		if v := strictyaml.Deref(e.Value); v.Kind != yaml.ScalarNode || strictyaml.IsNull(v) {
			d.Report(p.Child(e.Name), v.Line, "is "+strictyaml.Describe(v), "want one such as "+exampleValue)
			continue
		}
		m[e.Name] = strictyaml.Deref(e.Value).Value
		o.lines[name+"."+e.Name] = e.Line
	}
	return m
}

// problems renders the problems of a file, one a line, as
// file:line: field problem; fix.
func (o *Overrides) problems(ps []strictyaml.Problem) error {
	var errs []error
	for _, p := range ps {
		var msg string
		switch {
		case p.Kind == strictyaml.Syntax:
			msg = fmt.Sprintf("%s: %s (line %d); %s", o.label(), p.Message, p.Line, p.Fix)
		case p.Kind == strictyaml.Duplicate:
			msg = fmt.Sprintf("%s: %s appears twice", o.at(p.Line), p.Path)
		case p.Path == nil:
			msg = fmt.Sprintf("%s: %s", o.at(p.Line), p.Message)
		default:
			msg = fmt.Sprintf("%s: %s %s", o.at(p.Line), p.Path, p.Message)
		}
		if p.Fix != "" && p.Kind != strictyaml.Syntax {
			msg += "; " + p.Fix
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
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
	return fmt.Sprintf("%s: %s.%s", o.at(o.lines[section+"."+key]), section, key)
}

// at names a line of the overrides' source: file:line, or file alone for
// line 0 (unknown).
func (o *Overrides) at(line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", o.label(), line)
	}
	return o.label()
}

func (o *Overrides) clone() *Overrides {
	c := *o
	c.Registries = maps.Clone(o.Registries)
	c.Images = maps.Clone(o.Images)
	c.lines = maps.Clone(o.lines)
	return &c
}
