package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ImageOverrides point the harness's images elsewhere than their
// defaults, as for a cluster that pulls from a mirror. The file may
// instead be upstream e2e's KUBE_TEST_REPO_LIST file: its keys (the
// fields after Images) set registries where they mean one of the
// harness's (package images says which).
type ImageOverrides struct {
	// Registries rewrites the start of default references: a key, a
	// registry or registry/repository prefix, is replaced by its value;
	// the longest matching key wins.
	Registries map[string]string `yaml:"registries"`
	// Images replaces whole references, by image name.
	Images map[string]string `yaml:"images"`

	// Upstream e2e's registries (k8s.io/kubernetes test/utils/image,
	// RegistryList, v1.37.2; gcAuthenticatedRegistry in v1.34.4;
	// microsoftRegistry, gcrReleaseRegistry and sampleRegistry in older
	// releases, still in users' files).
	MicrosoftRegistry        string `yaml:"microsoftRegistry"`
	GCRegistry               string `yaml:"gcRegistry"`
	PromoterE2eRegistry      string `yaml:"promoterE2eRegistry"`
	BuildImageRegistry       string `yaml:"buildImageRegistry"`
	InvalidRegistry          string `yaml:"invalidRegistry"`
	GCEtcdRegistry           string `yaml:"gcEtcdRegistry"`
	SigStorageRegistry       string `yaml:"sigStorageRegistry"`
	PrivateRegistry          string `yaml:"privateRegistry"`
	DockerLibraryRegistry    string `yaml:"dockerLibraryRegistry"`
	CloudProviderGcpRegistry string `yaml:"cloudProviderGcpRegistry"`
	GCAuthenticatedRegistry  string `yaml:"gcAuthenticatedRegistry"`
	GCRReleaseRegistry       string `yaml:"gcrReleaseRegistry"`
	SampleRegistry           string `yaml:"sampleRegistry"`
}

func (*ImageOverrides) kind() string { return "ImageOverrides" }

func (o *ImageOverrides) check(l *loader) {
	upstream := keys(o)[2:]
	for _, k := range upstream {
		if (l.written(field.NewPath("registries")) || l.written(field.NewPath("images"))) && l.written(field.NewPath(k)) {
			l.add(field.NewPath(k), 0, "is a "+"KUBE_TEST_REPO_LIST file's key, in a file of registries and images",
				"keep one form: registries and images, or upstream's keys alone")
		}
	}
	l.addAll(o.Validate())
}

// Validate returns the problems of the registries and the references.
func (o *ImageOverrides) Validate() field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(o.Images)) {
		p := field.NewPath("images").Key(k)
		if _, err := name.ParseReference(o.Images[k]); o.Images[k] == "" {
			errs = append(errs, Invalid(p, "is empty", "write a reference such as mirror.example.com/winconform/probe:v0.1"))
		} else if err != nil {
			errs = append(errs, Invalid(p, fmt.Sprintf("%s is not an image reference: %v", Quote(o.Images[k]), err), "write a reference such as mirror.example.com/winconform/probe:v0.1"))
		}
	}
	v := reflect.ValueOf(o).Elem()
	for i, k := range keys(o)[2:] {
		if up := v.Field(i + 2).String(); up != "" {
			if msg := checkPrefix(up); msg != "" {
				errs = append(errs, Invalid(field.NewPath(k), msg, "write a registry such as mirror.example.com/k8s"))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Registries)) {
		p := field.NewPath("registries").Key(k)
		if msg := checkPrefix(k); msg != "" {
			errs = append(errs, Invalid(p, "the key "+msg, "write a registry or registry/repository prefix, such as mcr.microsoft.com"))
		} else if msg := checkPrefix(o.Registries[k]); msg != "" {
			errs = append(errs, Invalid(p, msg, "write a registry such as mirror.example.com or mirror.example.com/mcr"))
		}
	}
	return errs
}

// checkPrefix says what is wrong with a registry or registry/repository
// prefix, "" when nothing.
func checkPrefix(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.Contains(p, "://"):
		return Quote(p) + " has a scheme: write it without one, as mirror.example.com/mcr"
	case strings.HasSuffix(p, "/"):
		return Quote(p) + " ends with '/': write it without"
	}
	if _, err := name.NewRepository(p+"/image", name.StrictValidation); err != nil {
		return fmt.Sprintf("%s is not a registry or registry/repository prefix: %v", Quote(p), err)
	}
	return ""
}
