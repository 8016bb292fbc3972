package images

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func fakeBinary(t *testing.T) (string, string) {
	t.Helper()
	content := "\x7fELF fake probe binary\x00\x01\x02"
	p := filepath.Join(t.TempDir(), "probe-linux-amd64")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, content
}

func TestProbeReference(t *testing.T) {
	tag, err := name.NewTag(Probe, name.StrictValidation)
	if err != nil {
		t.Fatalf("Probe %q is not a valid tag: %v", Probe, err)
	}
	if tag.TagStr() != ProbeVersion || tag.RegistryStr() != "winconform.local" || tag.RepositoryStr() != "probe" {
		t.Errorf("Probe = %q: registry %q repository %q tag %q", Probe, tag.RegistryStr(), tag.RepositoryStr(), tag.TagStr())
	}
}

func TestProbeArchive(t *testing.T) {
	bin, content := fakeBinary(t)
	archive := filepath.Join(t.TempDir(), "probe.tar")
	if err := ProbeArchive(bin, archive); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("winconform.local/probe:v0.1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatalf("the archive does not hold winconform.local/probe:v0.1: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/probe"}) || !reflect.DeepEqual(cf.Config.Cmd, []string{"serve"}) {
		t.Errorf("entrypoint %q cmd %q, want [/probe] [serve]", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}

	files := map[string]*tar.Header{}
	data := map[string]string{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = h
		data[h.Name] = string(b)
	}
	// mutate.Extract cleans names: "tmp/" comes out as "tmp".
	p := files["probe"]
	if p == nil {
		t.Fatalf("no /probe in the image; files: %v", keys(files))
	}
	if p.Typeflag != tar.TypeReg || p.Mode&0o111 == 0 || data["probe"] != content {
		t.Errorf("/probe: type %c mode %o content %q; want the executable binary", p.Typeflag, p.Mode, data["probe"])
	}
	if tmp := files["tmp"]; tmp == nil || tmp.Typeflag != tar.TypeDir || tmp.Mode != 0o1777 {
		t.Errorf("/tmp = %+v, want a sticky world-writable dir", tmp)
	}
	if !strings.Contains(data["etc/passwd"], "nobody:x:65534:65534:") || !strings.HasPrefix(data["etc/passwd"], "root:x:0:0:") {
		t.Errorf("/etc/passwd = %q", data["etc/passwd"])
	}
}

func TestProbeArchiveIsReproducible(t *testing.T) {
	bin, _ := fakeBinary(t)
	digest := func() string {
		archive := filepath.Join(t.TempDir(), "probe.tar")
		if err := ProbeArchive(bin, archive); err != nil {
			t.Fatal(err)
		}
		tag, _ := name.NewTag(Probe)
		img, err := tarball.ImageFromPath(archive, &tag)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("the same binary made images %s and %s", a, b)
	}
}

func TestProbeArchiveMissingBinary(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "probe.tar")
	err := ProbeArchive(filepath.Join(dir, "no-such-probe"), archive)
	if err == nil {
		t.Fatal("ProbeArchive with a missing binary returned no error")
	}
	if !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), "no-such-probe") {
		t.Errorf("error %q should name the binary and say to run `make build`", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %q does not wrap os.ErrNotExist", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed ProbeArchive left %v behind", left)
	}
}

// ProbeArchive runs on every `winconform up`, writing into the node image
// cache (…/images/probe.tar); it should leave only the archive there.
func TestProbeArchiveLeavesOnlyTheArchive(t *testing.T) {
	bin, _ := fakeBinary(t)
	dir := t.TempDir()
	if err := ProbeArchive(bin, filepath.Join(dir, "probe.tar")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"probe.tar"}) {
		t.Errorf("ProbeArchive left %v in the directory, want only probe.tar", names)
	}
}

func keys(m map[string]*tar.Header) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
