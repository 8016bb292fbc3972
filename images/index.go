package images

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/winconform/winconform/images/assemble"
	"github.com/winconform/winconform/internal/winrelease"
)

// ProbeBuild is what the multi-platform probe image is made of.
type ProbeBuild struct {
	LinuxBinary   string // static linux/amd64 probe (_output/bin/probe-linux-amd64)
	WindowsBinary string // windows/amd64 probe (_output/bin/probe-windows-amd64.exe)
	// Bases are the Windows base images by release name (ltsc2019,
	// ltsc2022, ltsc2025; see WindowsReleases): one Windows variant is built
	// on each. WindowsBases gives the defaults.
	Bases map[string]string
	// Insecure lets the base images come from registries over plain HTTP
	// or with TLS certificates that do not verify.
	Insecure bool
}

// ProbeIndex builds the probe image for every node: an index (a docker
// manifest list, or an OCI index when a base is OCI) with the Linux image
// (linux/amd64, the same image ProbeArchive writes) and one windows/amd64
// image per base. A Windows image is its base, layers untouched (foreign ones
// too), with one layer holding the Windows probe at C:\probe\probe.exe, the
// base's os.version, and the entrypoint C:\probe\probe.exe serve; its entry
// in the index carries the os.version, by which containerd on a Windows node
// picks the image of its own build. The bases are read with opts; nothing is
// pushed.
func ProbeIndex(ctx context.Context, b ProbeBuild, opts ...remote.Option) (v1.ImageIndex, error) {
	if len(b.Bases) == 0 {
		return nil, fmt.Errorf("probe index: no Windows base images: give the base of at least one release (images.WindowsBases has the defaults; winconform images push --base RELEASE=REF)")
	}
	for rel := range b.Bases {
		if _, ok := winrelease.Named(rel); !ok {
			return nil, fmt.Errorf("probe index: Windows base for %q: no such release (want %s)", rel, strings.Join(releaseNames(), ", "))
		}
	}
	linux, err := linuxProbeImage(b.LinuxBinary)
	if err != nil {
		return nil, err
	}
	if err := checkBinary("Windows", b.WindowsBinary); err != nil {
		return nil, err
	}
	layer, err := assemble.StreamLayer([]assemble.Entry{{Path: ProbeWindowsPath, Source: b.WindowsBinary}}, assemble.WindowsLayout())
	if err != nil {
		return nil, err
	}
	adds := []mutate.IndexAddendum{{Add: linux, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}}}
	listType := types.DockerManifestList
	ropts := remoteOptions(ctx, b.Insecure, opts)
	for _, rel := range WindowsReleases() {
		ref, ok := b.Bases[rel.Name]
		if !ok {
			continue
		}
		base, cf, err := windowsBase(rel, ref, b.Insecure, ropts)
		if err != nil {
			return nil, err
		}
		img, err := assemble.Image(base, layer, assemble.Config{
			OS: "windows", Arch: "amd64", OSVersion: cf.OSVersion,
			Entrypoint: []string{ProbeWindowsPath}, Cmd: []string{"serve"},
		})
		if err != nil {
			return nil, fmt.Errorf("probe image for %s on %s: %w", rel.Name, ref, err)
		}
		if mt, err := img.MediaType(); err == nil && mt == types.OCIManifestSchema1 {
			listType = types.OCIImageIndex
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{
			OS: "windows", Architecture: "amd64", OSVersion: cf.OSVersion, OSFeatures: slices.Clone(cf.OSFeatures),
		}}})
	}
	return mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), listType), nil
}

// windowsBase reads the base image of release rel at ref, taking the
// windows/amd64 image of rel's build when ref is an index, and checks that it
// is one.
func windowsBase(rel WindowsRelease, ref string, insecure bool, opts []remote.Option) (v1.Image, *v1.ConfigFile, error) {
	fail := func(err error) error {
		return fmt.Errorf("Windows base for %s, %s: %w", rel.Name, ref, err)
	}
	r, err := parseRef(ref, insecure)
	if err != nil {
		return nil, nil, fail(err)
	}
	desc, err := remote.Get(r, opts...)
	if err != nil {
		return nil, nil, fail(fmt.Errorf("%w (check the reference, or give another base: winconform images push --base %s=REF)", err, rel.Name))
	}
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, nil, fail(err)
		}
		if img, err = windowsChild(idx, rel); err != nil {
			return nil, nil, fail(err)
		}
	} else if img, err = desc.Image(); err != nil {
		return nil, nil, fail(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, nil, fail(fmt.Errorf("reading its config: %w", err))
	}
	if cf.OS != "windows" || cf.Architecture != "amd64" {
		return nil, nil, fail(fmt.Errorf("it is a %s/%s image; want windows/amd64", cf.OS, cf.Architecture))
	}
	if got, err := ReleaseForBuild(cf.OSVersion); err != nil || got.Name != rel.Name {
		return nil, nil, fail(fmt.Errorf("its os.version is %q; want %s.x, the build of %s", cf.OSVersion, rel.Build, rel.Name))
	}
	return img, cf, nil
}

// windowsChild picks the windows/amd64 image of rel's build in idx (or the
// only windows/amd64 one, when the index does not say the os.version).
func windowsChild(idx v1.ImageIndex, rel WindowsRelease) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var fallback []v1.Hash
	for _, m := range im.Manifests {
		p := m.Platform
		if p == nil || p.OS != "windows" || p.Architecture != "amd64" || !m.MediaType.IsImage() {
			continue
		}
		if r, err := ReleaseForBuild(p.OSVersion); err == nil && r.Name == rel.Name {
			return idx.Image(m.Digest)
		}
		if p.OSVersion == "" {
			fallback = append(fallback, m.Digest)
		}
	}
	if len(fallback) == 1 {
		return idx.Image(fallback[0])
	}
	return nil, fmt.Errorf("the index has no windows/amd64 image of build %s", rel.Build)
}

// PushProbe pushes the probe index to ref (a tag or a digest), with its
// images and their layers, except foreign (non-distributable) base layers,
// which nodes fetch from where the base's manifest says (add
// remote.WithNondistributable to push those too). Insecure allows a
// registry over plain HTTP or with a certificate that does not verify.
func PushProbe(ctx context.Context, ref string, idx v1.ImageIndex, insecure bool, opts ...remote.Option) error {
	r, err := parseRef(ref, insecure)
	if err != nil {
		return fmt.Errorf("probe index: %w", err)
	}
	if err := remote.WriteIndex(r, idx, remoteOptions(ctx, insecure, opts)...); err != nil {
		return fmt.Errorf("pushing the probe index to %s: %w", ref, err)
	}
	return nil
}

func parseRef(ref string, insecure bool) (name.Reference, error) {
	var nopts []name.Option
	if insecure {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return nil, fmt.Errorf("%q is not an image reference: %w", ref, err)
	}
	return r, nil
}

// remoteOptions are opts after the context and, when insecure, a transport
// that skips TLS verification (opts may set another).
func remoteOptions(ctx context.Context, insecure bool, opts []remote.Option) []remote.Option {
	out := []remote.Option{remote.WithContext(ctx)}
	if insecure {
		t := remote.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
		out = append(out, remote.WithTransport(t))
	}
	return append(out, opts...)
}

func releaseNames() []string {
	var names []string
	for _, r := range winrelease.Releases() {
		names = append(names, r.Name)
	}
	return names
}
