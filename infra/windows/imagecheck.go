package windows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/winrelease"
)

// ErrImageNotRunnable: an image the node will run has no variant the
// machine's Windows can run with process isolation.
var ErrImageNotRunnable = errors.New("image not runnable on the machine's Windows")

// ImageRegistry reads what an image's registry says of it: the os.versions
// of its Windows variants (major.minor.build.UBR). Join asks it before the
// node pulls anything.
type ImageRegistry interface {
	WindowsVariants(ctx context.Context, image string) ([]string, error)
}

// RemoteRegistry reads images' indexes from their registries (over HTTPS;
// HTTP for localhost and private addresses, as go-containerregistry
// decides), with the credentials of the Docker configuration, as winconform
// images push does.
type RemoteRegistry struct {
	// Transport carries the requests; nil for remote.DefaultTransport.
	Transport http.RoundTripper
}

// defaultRegistry is the ImageRegistry of a Join whose options give none.
var defaultRegistry ImageRegistry = RemoteRegistry{}

// WindowsVariants reads image's manifest list and returns the os.version of
// each windows/amd64 entry; for an image that is no list, its config's.
func (r RemoteRegistry) WindowsVariants(ctx context.Context, image string) ([]string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	if r.Transport != nil {
		opts = append(opts, remote.WithTransport(r.Transport))
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, err
	}
	if !desc.MediaType.IsIndex() {
		img, err := desc.Image()
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if cf.OS != "windows" {
			return nil, nil
		}
		return []string{cf.OSVersion}, nil
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range im.Manifests {
		if p := m.Platform; p != nil && p.OS == "windows" && p.Architecture == "amd64" {
			out = append(out, p.OSVersion)
		}
	}
	return out, nil
}

// nodeImage is an image the node runs with process isolation.
type nodeImage struct{ what, ref string }

// processIsolatedImages are the images the harness runs on the node in
// containers of their own: the sandbox (pause) image of every pod, and the
// probe of the network matrix. The HostProcess image of the DaemonSets has
// no os.version (images.go): a HostProcess container runs on the host's own
// Windows, so no variant of it is at stake.
func (j *joinRun) processIsolatedImages() []nodeImage {
	return []nodeImage{{"the sandbox image", j.sandboxImage()}, {"the probe image", images.Ref("probe")}}
}

// ImageCheck is what CheckImage found of one image on one machine.
type ImageCheck struct {
	// Variant is the os.version of the variant containerd runs ("" when
	// the image has none, or was not checked).
	Variant string
	// Unchecked says why the image was not checked (its index could not
	// be read, or it has no os.version), "" when it was.
	Unchecked string
}

// CheckImage reads the index of image ref (what names it in messages)
// from its registry and says which variant containerd of version runs of it
// on a host of full build host (major.minor.build.UBR), with process
// isolation: an error when it runs none (nodeconfig.PulledVariant:
// containerd's platform matching, stable ABI included), or one of the
// host's own build but of a later update than the host's, which Windows
// does not start (0xc0370106); the fix is in the error. An index it cannot
// read, or one without an os.version, is reported as unchecked.
func CheckImage(ctx context.Context, reg ImageRegistry, containerd string, host winrelease.Version, what, ref string) (ImageCheck, error) {
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	versions, err := reg.WindowsVariants(ictx, ref)
	cancel()
	if err != nil {
		return ImageCheck{Unchecked: fmt.Sprintf("cannot read the index of %s, %s (%v): which of its variants the machine would run is not checked before it pulls it", what, ref, err)}, nil
	}
	known := false
	for _, v := range versions {
		known = known || v != ""
	}
	if !known {
		return ImageCheck{Unchecked: "no os.version: nothing for process isolation to refuse"}, nil
	}
	v, ok, err := nodeconfig.PulledVariant(containerd, host.Build, versions)
	if err != nil {
		return ImageCheck{}, fmt.Errorf("%w: cannot tell which variant of %s containerd %s runs: %v", ErrImageNotRunnable, ref, containerd, err)
	}
	if !ok {
		return ImageCheck{}, fmt.Errorf("%w: %s, %s, has no variant that containerd %s runs on Windows build %s (its Windows variants: %s): containerd would fail to pull it (no match for platform in manifest); point the image at one built for %s (image overrides)",
			ErrImageNotRunnable, what, ref, containerd, host.Build, strings.Join(versions, ", "), host.Build)
	}
	if v.Build == host.Build && v.Revision > host.Revision {
		return ImageCheck{Variant: v.String()}, fmt.Errorf("%w: %s, %s, is %s for this machine's build, a later update than the machine's %s: with process isolation, the only isolation Kubernetes uses, Windows fails to start a container of a later update than the host (hcs::System::Start: 0xc0370106, microsoft/Windows-Containers#591); install the machine's cumulative updates (Windows Update, sconfig) up to at least %d, or point the image (image overrides) at a variant of update %d or older",
			ErrImageNotRunnable, what, ref, v, host, v.Revision, host.Revision)
	}
	return ImageCheck{Variant: v.String()}, nil
}

// checkImages checks, before the node pulls them, each image the node will
// run with process isolation (CheckImage).
func (j *joinRun) checkImages(ctx context.Context, sr *StepReport) error {
	checked := map[string]any{}
	host := winrelease.Version{Build: j.build.Build, Revision: j.build.UBR, HasRevision: true}
	for _, img := range j.processIsolatedImages() {
		c, err := CheckImage(ctx, j.registry, j.versions.Containerd, host, img.what, img.ref)
		if err != nil {
			return &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: ErrImageNotRunnable, Detail: strings.TrimPrefix(err.Error(), ErrImageNotRunnable.Error()+": ")}
		}
		if c.Unchecked != "" {
			if c.Variant == "" && strings.HasPrefix(c.Unchecked, "cannot read") {
				j.logf("%s: %s", StepPreflight, c.Unchecked)
			}
			continue
		}
		checked[img.ref] = c.Variant
	}
	if len(checked) > 0 {
		if sr.Status == nil {
			sr.Status = map[string]any{}
		}
		sr.Status["imageVariants"] = checked
	}
	return nil
}
