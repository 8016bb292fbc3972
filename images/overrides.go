package images

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
)

// OverridesEnv names the environment variable that FromEnv reads: the path
// of an image override file.
const OverridesEnv = "WINCONFORM_IMAGE_OVERRIDES"

// Overrides point images elsewhere than their defaults, as for a cluster
// that pulls from a mirror (config.ImageOverrides); upstream e2e's
// KUBE_TEST_REPO_LIST does the same, and its files are read too (their
// keys that mean a registry of the harness's images set it).
type Overrides = config.ImageOverrides

// SetOverrides checks o and puts it in force for Ref; nil puts the defaults
// back. Overrides are meant to be set once, before the images are used.
func SetOverrides(o *Overrides) error {
	if o != nil {
		c := *o
		c.Registries, c.Images = maps.Clone(o.Registries), maps.Clone(o.Images)
		if err := config.Errors(append(c.Validate(), check(&c)...)); err != nil {
			return fmt.Errorf("image overrides: %w", err)
		}
		o = &c
	}
	active.Store(o)
	return nil
}

// LoadOverrides reads the override file at path and puts it in force.
func LoadOverrides(path string) error {
	o, err := config.Load[Overrides](path, nil, check)
	if err == nil {
		active.Store(o)
	}
	return err
}

// ParseOverrides checks an override file's content (path names it) without
// putting it in force.
func ParseOverrides(path string, data []byte) (*Overrides, error) {
	return config.Parse[Overrides](path, data, nil, check)
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

// check checks what only the images know: their names, and that each
// reference the overrides make parses. It sets the registries upstream's
// keys mean: microsoftRegistry is mcr.microsoft.com (servercore,
// nanoserver, the HostProcess base), gcRegistry registry.k8s.io (pause,
// which upstream also takes from gcRegistry); the other keys are upstream's
// images only, which follow the file through upstream's own package.
func check(o *Overrides) field.ErrorList {
	for reg, v := range map[string]string{"mcr.microsoft.com": o.MicrosoftRegistry, "registry.k8s.io": o.GCRegistry} {
		if v != "" {
			if o.Registries == nil {
				o.Registries = map[string]string{}
			}
			o.Registries[reg] = v
		}
	}
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(o.Images)) {
		if _, ok := defaults[k]; !ok {
			errs = append(errs, config.Invalid(field.NewPath("images").Key(k), config.Quote(k)+" is not an image's name",
				config.DidYouMean(k, Names())+"the names are "+strings.Join(Names(), ", ")))
		}
	}
	for _, n := range Names() {
		if _, overridden := o.Images[n]; len(errs) > 0 || overridden {
			continue
		}
		if ref := resolve(o, n, defaults[n]); ref != defaults[n] {
			if _, err := name.ParseReference(ref); err != nil {
				errs = append(errs, config.Invalid(field.NewPath("registries"), fmt.Sprintf("make %s %q, which is not an image reference: %v", n, ref, err), "fix the registry that rewrites it"))
			}
		}
	}
	return errs
}

// resolve is the reference of the image called image, whose default is def.
func resolve(o *Overrides, image, def string) string {
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
