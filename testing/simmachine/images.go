package simmachine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/winrelease"
)

// The images' Windows variants, as the registries serve them: an image is
// a manifest list whose Windows entries each carry an os.version, the full
// version of the Windows the variant was built on, with its update revision
// (UBR): kubernetes/kubernetes build/pause annotates each Windows variant of
// registry.k8s.io/pause with its base's full os.version, and images.ProbeIndex
// does the same for the probe. The harness reads them from the registry
// before the node pulls anything (WindowsVariants); the node's containerd
// pulls by them (variant).
//
// Which variant the node's containerd runs on a Windows host:
// nodeconfig.PulledVariant (the platform matching of the containerd the
// machine runs, stable ABI included). Which one Windows then runs with process isolation (the only isolation
// Kubernetes uses): one of a later revision than the host fails to start,
// hcs::System::Start failing with 0xc0370106, "The virtual machine or
// container exited unexpectedly" (microsoft/Windows-Containers#591: a host
// behind on its updates runs the newest ltsc2019 and ltsc2025 images only
// once updated; docker/for-win#14287 shows the error).
//
// The table starts with the variants of imageBuilds (pods.go), each at the
// revision of its release in internal/winrelease (an update the release
// has shipped, which the simulated host runs by default): the real images'
// revisions are the registry's to say, and this machine does not reach it.

// defaultVariants is the table a new machine starts with.
func defaultVariants() map[string][]string {
	out := map[string][]string{}
	for image, builds := range imageBuilds {
		for _, b := range builds {
			v, err := winrelease.Parse(b)
			if err != nil {
				panic(err) // imageBuilds is a literal
			}
			r, _ := v.Build.Release()
			out[image] = append(out[image], fmt.Sprintf("%s.%d", b, r.Revision))
		}
	}
	return out
}

// SetImageVariants makes the registries serve image with Windows variants
// of these os.versions (such as 10.0.20348.2340); none removes the image.
func (m *Machine) SetImageVariants(image string, osVersions ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(osVersions) == 0 {
		delete(m.variants, image)
		return
	}
	m.variants[image] = slices.Clone(osVersions)
}

// WindowsVariants is what a registry says of image: the os.versions of its
// Windows variants. An image the registries do not serve is an error, as a
// registry's MANIFEST_UNKNOWN is.
func (m *Machine) WindowsVariants(_ context.Context, image string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.variants[image]
	if !ok {
		return nil, fmt.Errorf("GET %s: MANIFEST_UNKNOWN: manifest unknown", image)
	}
	return slices.Clone(v), nil
}

// Images lists the images the registries serve, sorted.
func (m *Machine) Images() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.variants))
}

// variant is the os.version of the variant of image the machine's
// containerd runs (nodeconfig.PulledVariant, held to containerd's own
// platform matcher), "" for an image the table does not know (which the
// machine knows nothing against); an error when it runs no variant of the
// image on the machine's build. m.mu must be held.
func (m *Machine) variant(image string) (string, error) {
	versions, known := m.variants[image]
	if !known {
		return "", nil
	}
	host, err := winrelease.Parse(m.cfg.Build)
	if err != nil {
		return "", err
	}
	containerd := strings.TrimPrefix(m.fact(`file:`+nodeconfig.ContainerdDir+`\containerd.exe`), "v")
	if containerd == "" {
		containerd = kubelines.DefaultContainerd // a machine staged without one
	}
	v, ok, err := nodeconfig.PulledVariant(containerd, host.Build, versions)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("failed to pull and unpack image %q: no match for platform in manifest: not found (its Windows variants are for %s; this node is %s)",
			image, strings.Join(versions, ", "), host.Build)
	}
	return v.String(), nil
}

// runs reports whether Windows starts a container of the variant osVersion
// with process isolation on this machine. m.mu must be held.
func (m *Machine) runs(osVersion string) error {
	if osVersion == "" {
		return nil
	}
	v, verr := winrelease.Parse(osVersion)
	host, herr := winrelease.Parse(m.cfg.Build)
	// An earlier build's container runs through the stable ABI; of the
	// host's own build, no later update than the host's.
	if verr != nil || herr != nil || v.Build != host.Build || v.Revision <= host.Revision {
		return nil
	}
	return fmt.Errorf("failed to create containerd task: failed to create shim task: hcs::System::Start: The virtual machine or container exited unexpectedly. (0xc0370106): unknown (the image is %s, the host %s)", osVersion, m.cfg.Build)
}

// What containerd holds: the images in its k8s.io namespace (the CRI's),
// facts image:REF. The kubelet's pulls (IfNotPresent, the default for a
// tagged image) and containerd's pull of the sandbox image skip an image
// already there; any other comes from its registry, which a machine that
// reaches none (Config.NoRegistry: an air-gapped lab) cannot.

// pulled makes sure image is in containerd's images, pulling it when the
// machine reaches registries. m.mu must be held.
func (m *Machine) pulled(image string) error {
	key := "image:" + image
	if m.fact(key) != "" {
		return nil
	}
	if m.cfg.NoRegistry {
		host := registryHost(image)
		return fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: failed to do request: Head \"https://%s/v2/\": dial tcp: lookup %s: no such host", image, image, host, host)
	}
	m.facts[key] = "present"
	return nil
}

// registryHost is the registry an image reference names (docker.io when
// its first part is no host).
func registryHost(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if !ok || !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "registry-1.docker.io"
	}
	return first
}
