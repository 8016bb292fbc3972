package images

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// rawsd is the security descriptor every entry of a Windows layer must carry.
const rawsd = "AQAAgBQAAAAkAAAAAAAAAAAAAAABAgAAAAAABSAAAAAhAgAAAQIAAAAAAAUgAAAAIQIAAA=="

// testRegistry starts an in-process registry and returns its host:port.
func testRegistry(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

func mustRef(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// windowsBaseImage is a synthetic Windows base: a random layer (and, when
// foreign, a foreign layer before it) and a windows/amd64 config of osVersion.
func windowsBaseImage(t *testing.T, osVersion string, foreign bool) v1.Image {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	if foreign {
		l, err := random.Layer(256, types.DockerForeignLayer)
		if err != nil {
			t.Fatal(err)
		}
		base, err := mutate.Append(empty.Image, mutate.Addendum{Layer: l, MediaType: types.DockerForeignLayer,
			URLs: []string{"https://mcr.microsoft.com/v2/windows/nanoserver/blobs/foreign"}})
		if err != nil {
			t.Fatal(err)
		}
		layers, _ := img.Layers()
		if img, err = mutate.AppendLayers(base, layers...); err != nil {
			t.Fatal(err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.OSVersion = "windows", "amd64", osVersion
	cf.Config.User = "ContainerUser"
	cf.Config.Env = []string{`PATH=C:\Windows\system32;C:\Windows`}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// testBases pushes a base per release to reg: ltsc2019's has a foreign
// layer, ltsc2025's is an index that also holds an image of another build.
// It returns the references and the base images.
func testBases(t *testing.T, reg string) (map[string]string, map[string]v1.Image) {
	t.Helper()
	refs, imgs := map[string]string{}, map[string]v1.Image{}
	versions := map[string]string{"ltsc2019": "10.0.17763.5458", "ltsc2022": "10.0.20348.2340", "ltsc2025": "10.0.26100.1742"}
	for rel, version := range versions {
		img := windowsBaseImage(t, version, rel == "ltsc2019")
		ref := reg + "/windows/nanoserver:" + rel
		if rel == "ltsc2025" {
			other := windowsBaseImage(t, "10.0.20348.9999", false)
			idx := mutate.AppendManifests(empty.Index,
				mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.9999"}}},
				mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: version}}})
			if err := remote.WriteIndex(mustRef(t, ref), idx); err != nil {
				t.Fatal(err)
			}
		} else if err := remote.Write(mustRef(t, ref), img); err != nil {
			t.Fatal(err)
		}
		refs[rel], imgs[rel] = ref, img
	}
	return refs, imgs
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const windowsExe = "MZ\x90\x00 fake windows probe"

func TestProbeIndexPushAndPull(t *testing.T) {
	ctx := t.Context()
	reg := testRegistry(t)
	bases, baseImgs := testBases(t, reg)
	linuxBin, _ := fakeBinary(t)
	windowsBin := writeFile(t, "probe-windows-amd64.exe", windowsExe)

	idx, err := ProbeIndex(ctx, ProbeBuild{LinuxBinary: linuxBin, WindowsBinary: windowsBin, Bases: bases})
	if err != nil {
		t.Fatal(err)
	}
	ref := reg + "/winconform/probe:v0.1"
	if err := PushProbe(ctx, ref, idx, false); err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digestOf(t, idx), digestOf(t, pulled); a != b {
		t.Errorf("pushed index %s, pulled %s", a, b)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.DockerManifestList {
		t.Errorf("index media type %s, want a docker manifest list", im.MediaType)
	}
	var platforms []string
	for _, m := range im.Manifests {
		if m.Platform == nil {
			t.Fatalf("manifest %s has no platform", m.Digest)
		}
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture+" "+m.Platform.OSVersion)
	}
	wantPlatforms := []string{"linux/amd64 ", "windows/amd64 10.0.17763.5458", "windows/amd64 10.0.20348.2340", "windows/amd64 10.0.26100.1742"}
	if !reflect.DeepEqual(platforms, wantPlatforms) {
		t.Fatalf("platforms %q, want %q", platforms, wantPlatforms)
	}

	// The Linux variant is the Linux image alone, as ProbeArchive writes it.
	archive := filepath.Join(t.TempDir(), "probe.tar")
	if err := ProbeArchive(linuxBin, archive); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(Probe)
	alone, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if im.Manifests[0].Digest != digestOf(t, alone) {
		t.Errorf("Linux variant %s, Linux image alone %s", im.Manifests[0].Digest, digestOf(t, alone))
	}

	for i, rel := range []string{"ltsc2019", "ltsc2022", "ltsc2025"} {
		t.Run(rel, func(t *testing.T) {
			desc := im.Manifests[i+1]
			img, err := pulled.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			base := baseImgs[rel]
			bm, err := base.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Layers) != len(bm.Layers)+1 {
				t.Fatalf("%d layers, want the base's %d and one more", len(m.Layers), len(bm.Layers))
			}
			if !reflect.DeepEqual(m.Layers[:len(bm.Layers)], bm.Layers) {
				t.Errorf("base layers changed:\n got %+v\nwant %+v", m.Layers[:len(bm.Layers)], bm.Layers)
			}
			if rel == "ltsc2019" && (m.Layers[0].MediaType != types.DockerForeignLayer || len(m.Layers[0].URLs) != 1) {
				t.Errorf("foreign base layer not kept as it was: %+v", m.Layers[0])
			}

			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			bcf, _ := base.ConfigFile()
			if cf.OS != "windows" || cf.Architecture != "amd64" || cf.OSVersion != bcf.OSVersion || desc.Platform.OSVersion != bcf.OSVersion {
				t.Errorf("config %s/%s %s, index says %s; want windows/amd64 %s", cf.OS, cf.Architecture, cf.OSVersion, desc.Platform.OSVersion, bcf.OSVersion)
			}
			if !reflect.DeepEqual(cf.Config.Entrypoint, []string{`C:\probe\probe.exe`}) || !reflect.DeepEqual(cf.Config.Cmd, []string{"serve"}) {
				t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
			}
			if cf.Config.User != "ContainerUser" || !reflect.DeepEqual(cf.Config.Env, bcf.Config.Env) {
				t.Errorf("the base's user and env are lost: %+v", cf.Config)
			}
			if len(cf.RootFS.DiffIDs) != len(m.Layers) {
				t.Errorf("%d diff IDs for %d layers", len(cf.RootFS.DiffIDs), len(m.Layers))
			}

			layers, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			rc, err := layers[len(layers)-1].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got := windowsLayerEntries(t, rc)
			want := map[string]string{"Files": "dir", "Files/probe": "dir", "Files/probe/probe.exe": windowsExe, "Hives": "dir"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Windows layer entries %q, want %q", got, want)
			}
		})
	}
}

// windowsLayerEntries reads a Windows layer, checking that every entry is in
// the PAX format with the MSWINDOWS.rawsd record, and returns the entries:
// "dir" for a directory, the content for a file.
func windowsLayerEntries(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	out := map[string]string{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Format != tar.FormatPAX || h.PAXRecords["MSWINDOWS.rawsd"] != rawsd {
			t.Errorf("%s: format %v, PAX records %v; want PAX with MSWINDOWS.rawsd", h.Name, h.Format, h.PAXRecords)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if h.Name == "Files" || h.Name == "Hives" {
				if h.Mode != 0o555 {
					t.Errorf("%s: mode %o, want 0555", h.Name, h.Mode)
				}
			}
			out[h.Name] = "dir"
		default:
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[h.Name] = string(data)
		}
	}
}

type digester interface{ Digest() (v1.Hash, error) }

func digestOf(t *testing.T, d digester) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestProbeIndexIsReproducibleAndTakesSomeBases(t *testing.T) {
	reg := testRegistry(t)
	bases, _ := testBases(t, reg)
	linuxBin, _ := fakeBinary(t)
	windowsBin := writeFile(t, "probe.exe", windowsExe)
	build := func() v1.ImageIndex {
		idx, err := ProbeIndex(t.Context(), ProbeBuild{LinuxBinary: linuxBin, WindowsBinary: windowsBin, Bases: map[string]string{"ltsc2022": bases["ltsc2022"]}})
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}
	a, b := build(), build()
	if digestOf(t, a) != digestOf(t, b) {
		t.Error("the same inputs made different indexes")
	}
	im, err := a.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Manifests[1].Platform.OSVersion != "10.0.20348.2340" {
		t.Errorf("manifests %+v, want Linux and ltsc2022", im.Manifests)
	}
}

func TestProbeIndexOCIBase(t *testing.T) {
	reg := testRegistry(t)
	base := mutate.MediaType(windowsBaseImage(t, "10.0.20348.1", false), types.OCIManifestSchema1)
	ref := reg + "/oci/nanoserver:ltsc2022"
	if err := remote.Write(mustRef(t, ref), base); err != nil {
		t.Fatal(err)
	}
	linuxBin, _ := fakeBinary(t)
	idx, err := ProbeIndex(t.Context(), ProbeBuild{LinuxBinary: linuxBin, WindowsBinary: writeFile(t, "p.exe", windowsExe), Bases: map[string]string{"ltsc2022": ref}})
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := idx.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s, want an OCI index for an OCI base", mt)
	}
}

func TestProbeIndexErrors(t *testing.T) {
	reg := testRegistry(t)
	bases, _ := testBases(t, reg)
	linuxImg, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	lcf, err := linuxImg.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	lcf = lcf.DeepCopy()
	lcf.OS, lcf.Architecture = "linux", "amd64"
	if linuxImg, err = mutate.ConfigFile(linuxImg, lcf); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(mustRef(t, reg+"/linux/busybox:1"), linuxImg); err != nil {
		t.Fatal(err)
	}
	linuxBin, _ := fakeBinary(t)
	windowsBin := writeFile(t, "probe.exe", windowsExe)
	missing := reg + "/windows/nanoserver:ltsc2030"
	cases := []struct {
		name string
		b    ProbeBuild
		want []string
	}{
		{"base cannot be fetched", ProbeBuild{Bases: map[string]string{"ltsc2022": missing}}, []string{"ltsc2022", missing}},
		{"base is not a reference", ProbeBuild{Bases: map[string]string{"ltsc2019": "Not A Ref"}}, []string{"ltsc2019", "Not A Ref", "not an image reference"}},
		{"base is a Linux image", ProbeBuild{Bases: map[string]string{"ltsc2022": reg + "/linux/busybox:1"}}, []string{"ltsc2022", "linux/amd64", "want windows/amd64"}},
		{"base of another build", ProbeBuild{Bases: map[string]string{"ltsc2019": bases["ltsc2022"]}}, []string{"ltsc2019", bases["ltsc2022"], "10.0.20348.2340", "want 10.0.17763.x"}},
		{"index without the build", ProbeBuild{Bases: map[string]string{"ltsc2019": bases["ltsc2025"]}}, []string{"ltsc2019", "no windows/amd64 image of build 10.0.17763"}},
		{"unknown release", ProbeBuild{Bases: map[string]string{"1809": bases["ltsc2019"]}}, []string{`"1809"`, "ltsc2019, ltsc2022, ltsc2025"}},
		{"no bases", ProbeBuild{}, []string{"no Windows base images"}},
		{"no Windows binary", ProbeBuild{WindowsBinary: filepath.Join(t.TempDir(), "nope.exe"), Bases: bases}, []string{"Windows probe binary", "nope.exe", "make build"}},
		{"no Linux binary", ProbeBuild{LinuxBinary: filepath.Join(t.TempDir(), "nope"), Bases: bases}, []string{"Linux probe binary", "make build"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.b.LinuxBinary == "" {
				c.b.LinuxBinary = linuxBin
			}
			if c.b.WindowsBinary == "" {
				c.b.WindowsBinary = windowsBin
			}
			_, err := ProbeIndex(t.Context(), c.b)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestProbeIndexCancelled(t *testing.T) {
	reg := testRegistry(t)
	bases, _ := testBases(t, reg)
	linuxBin, _ := fakeBinary(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ProbeIndex(ctx, ProbeBuild{LinuxBinary: linuxBin, WindowsBinary: writeFile(t, "p.exe", windowsExe), Bases: bases})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestPushProbeErrors(t *testing.T) {
	idx := mutate.AppendManifests(empty.Index)
	if err := PushProbe(t.Context(), "Not A Ref", idx, false); err == nil || !strings.Contains(err.Error(), "Not A Ref") {
		t.Errorf("bad reference: err = %v", err)
	}
	reg := testRegistry(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := PushProbe(ctx, reg+"/x/probe:v1", idx, false); err == nil || !strings.Contains(err.Error(), reg+"/x/probe:v1") {
		t.Errorf("cancelled push: err = %v, want one naming the reference", err)
	}
}
