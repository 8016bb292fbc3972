package assemble

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// rawsd is the security descriptor every entry of a Windows layer carries
// (BUILTIN\Users as owner and group), written out here so that a change to
// the constant shows.
const rawsd = "AQAAgBQAAAAkAAAAAAAAAAAAAAABAgAAAAAABSAAAAAhAgAAAQIAAAAAAAUgAAAAIQIAAA=="

// winHeader is what a test checks of one entry of a Windows layer.
type winHeader struct {
	Name    string
	Type    byte
	Mode    int64
	Content string
}

// readWindowsTar reads a Windows layer, checking that every entry is in the
// PAX format with the security descriptor.
func readWindowsTar(t *testing.T, r io.Reader) []winHeader {
	t.Helper()
	tr := tar.NewReader(r)
	var out []winHeader
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		if h.Format != tar.FormatPAX {
			t.Errorf("%s: format %v, want PAX", h.Name, h.Format)
		}
		if got := h.PAXRecords["MSWINDOWS.rawsd"]; got != rawsd {
			t.Errorf("%s: MSWINDOWS.rawsd = %q, want %q", h.Name, got, rawsd)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, winHeader{h.Name, h.Typeflag, h.Mode, string(data)})
	}
}

func TestWindowsLayout(t *testing.T) {
	src := hostFile(t, "MZ fake exe", 0o600)
	var b bytes.Buffer
	err := WriteTar(&b, []Entry{
		{Path: `C:\probe\probe.exe`, Source: src},
		{Path: "/probe/README.txt", Data: []byte("hi")},
		{Path: `c:/tools/bin/x.cmd`, Data: []byte("@echo x"), Mode: 0o644},
		{Path: `\data`, Dir: true},
	}, WindowsLayout())
	if err != nil {
		t.Fatal(err)
	}
	got := readWindowsTar(t, &b)
	want := []winHeader{
		{"Files", tar.TypeDir, 0o555, ""},
		{"Files/data", tar.TypeDir, 0o755, ""},
		{"Files/probe", tar.TypeDir, 0o755, ""},
		{"Files/probe/README.txt", tar.TypeReg, 0o644, "hi"},
		{"Files/probe/probe.exe", tar.TypeReg, 0o755, "MZ fake exe"},
		{"Files/tools", tar.TypeDir, 0o755, ""},
		{"Files/tools/bin", tar.TypeDir, 0o755, ""},
		{"Files/tools/bin/x.cmd", tar.TypeReg, 0o644, "@echo x"},
		{"Hives", tar.TypeDir, 0o555, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Windows layer entries:\n got %+v\nwant %+v", got, want)
	}
}

func TestWindowsLayoutEmptyLayerHasFilesAndHives(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTar(&b, nil, WindowsLayout()); err != nil {
		t.Fatal(err)
	}
	got := readWindowsTar(t, &b)
	want := []winHeader{{"Files", tar.TypeDir, 0o555, ""}, {"Hives", tar.TypeDir, 0o555, ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries %+v, want %+v", got, want)
	}
}

func TestWindowsLayoutErrors(t *testing.T) {
	cases := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"other drive", []Entry{{Path: `D:\x.exe`, Data: []byte("x")}}, `D:\x.exe: a Windows container layer holds drive C: only`},
		{"drive root", []Entry{{Path: `C:\`, Data: []byte("x")}}, "empty path"},
		{"same file, two spellings", []Entry{{Path: `C:\a\b`, Data: []byte("1")}, {Path: "/a/b", Data: []byte("2")}}, "appears twice"},
		{"under a file", []Entry{{Path: `C:\a`, Data: []byte("1")}, {Path: `C:\a\b`, Data: []byte("2")}}, "/Files/a is not a directory"},
	}
	for _, c := range cases {
		err := WriteTar(io.Discard, c.entries, WindowsLayout())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// Without WindowsLayout nothing Windows-specific appears: the Linux layers
// the harness already makes stay byte for byte the same.
func TestLinuxLayoutHasNoWindowsRecords(t *testing.T) {
	tr := tar.NewReader(bytes.NewReader(tarOf(t, []Entry{{Path: `/a/b`, Data: []byte("x")}})))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(h.PAXRecords) != 0 || strings.HasPrefix(h.Name, "Files") {
			t.Errorf("%s: PAX records %v in a Linux layer", h.Name, h.PAXRecords)
		}
	}
}

func TestWindowsLayer(t *testing.T) {
	dir := t.TempDir()
	l, err := WindowsLayer(dir, []Entry{{Path: `C:\probe\probe.exe`, Data: []byte("exe")}})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := readWindowsTar(t, rc)
	if len(got) != 4 || got[2].Name != "Files/probe/probe.exe" || got[2].Content != "exe" || got[3].Name != "Hives" {
		t.Errorf("layer entries %+v", got)
	}
}

func TestStreamLayerMatchesLayer(t *testing.T) {
	src := hostFile(t, strings.Repeat("binary ", 10000), 0o755)
	for _, opts := range [][]TarOption{nil, {WindowsLayout()}} {
		entries := []Entry{{Path: "/bin/tool", Source: src}, {Path: "/etc/x", Data: []byte("x")}}
		spooled, err := Layer(t.TempDir(), entries, opts...)
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := StreamLayer(entries, opts...)
		if err != nil {
			t.Fatal(err)
		}
		entries[0].Path = "/changed" // the layer keeps its own copy of the list
		for _, get := range []func(v1.Layer) (v1.Hash, error){v1.Layer.Digest, v1.Layer.DiffID} {
			a, err := get(spooled)
			if err != nil {
				t.Fatal(err)
			}
			b, err := get(streamed)
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("windows=%v: spooled layer %s, streamed %s", len(opts) > 0, a, b)
			}
		}
		// Reading it again gives the same bytes.
		for range 2 {
			rc, err := streamed.Compressed()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if h, _, _ := v1.SHA256(bytes.NewReader(data)); h != mustDigest(t, spooled) {
				t.Errorf("re-reading the streamed layer gave digest %s", h)
			}
		}
	}
}

func mustDigest(t *testing.T, l v1.Layer) v1.Hash {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStreamLayerErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.exe")
	_, err := StreamLayer([]Entry{{Path: `C:\probe\probe.exe`, Source: missing}}, WindowsLayout())
	if err == nil || !strings.Contains(err.Error(), `C:\probe\probe.exe`) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing source: err = %v, want one naming the entry and wrapping fs.ErrNotExist", err)
	}
	if _, err := StreamLayer([]Entry{{Path: "/a"}, {Path: "/a"}}); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("duplicate: err = %v", err)
	}
}

func TestImageOnOCIBaseDescribesLayerAsOCI(t *testing.T) {
	ociBase := image(t, mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer(t, sample), Config{})
	for _, c := range []struct {
		base v1.Image
		want types.MediaType
	}{
		{nil, types.DockerLayer},
		{ociBase, types.OCILayer},
	} {
		img := image(t, c.base, layer(t, []Entry{{Path: "/x", Data: []byte("x")}}), Config{})
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Layers[len(m.Layers)-1].MediaType; got != c.want {
			t.Errorf("top layer media type %s, want %s", got, c.want)
		}
	}
}

func TestImageKeepsForeignBaseLayers(t *testing.T) {
	foreign := layer(t, []Entry{{Path: "/windows/system32/x.dll", Data: []byte("dll")}})
	urls := []string{"https://mcr.microsoft.com/v2/windows/nanoserver/blobs/sha256:0"}
	base, err := mutate.Append(empty.Image, mutate.Addendum{Layer: foreign, MediaType: types.DockerForeignLayer, URLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	img := image(t, base, layer(t, []Entry{{Path: "/x", Data: []byte("x")}}), Config{OS: "windows"})
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 2 || m.Layers[0].MediaType != types.DockerForeignLayer || !reflect.DeepEqual(m.Layers[0].URLs, urls) {
		t.Errorf("layers %+v, want the foreign base layer, as it was, then ours", m.Layers)
	}
}
