package assemble

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type header struct {
	Name     string
	Type     byte
	Mode     int64
	Linkname string
	Content  string
}

func readTar(t *testing.T, r io.Reader) []header {
	t.Helper()
	tr := tar.NewReader(r)
	var out []header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		if !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mtime %v, want the Unix epoch", h.Name, h.ModTime)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d:%d %q:%q, want root with no names", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, header{h.Name, h.Typeflag, h.Mode, h.Linkname, string(data)})
	}
}

func tarOf(t *testing.T, entries []Entry) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTar(&b, entries); err != nil {
		t.Fatalf("WriteTar: %v", err)
	}
	return b.Bytes()
}

func hostFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteTar(t *testing.T) {
	src := hostFile(t, "#!/bin/sh\necho hi\n", 0o600)
	entries := []Entry{
		{Path: "/usr/local/bin/tool", Source: src},
		{Path: "/usr/local/lib/libx.so", Data: []byte("lib"), Mode: 0o600},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0::/:/bin/sh\n")},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/usr/bin/sh", Link: "/usr/local/bin/tool"},
		{Path: "/var/empty", Dir: true},
	}
	got := readTar(t, bytes.NewReader(tarOf(t, entries)))
	want := []header{
		{"etc/", tar.TypeDir, 0o755, "", ""},
		{"etc/passwd", tar.TypeReg, 0o644, "", "root:x:0:0::/:/bin/sh\n"},
		{"tmp/", tar.TypeDir, 0o1777, "", ""},
		{"usr/", tar.TypeDir, 0o755, "", ""},
		{"usr/bin/", tar.TypeDir, 0o755, "", ""},
		{"usr/bin/sh", tar.TypeSymlink, 0o777, "/usr/local/bin/tool", ""},
		{"usr/local/", tar.TypeDir, 0o755, "", ""},
		{"usr/local/bin/", tar.TypeDir, 0o755, "", ""},
		{"usr/local/bin/tool", tar.TypeReg, 0o755, "", "#!/bin/sh\necho hi\n"}, // 0755 by default, not the host's 0600
		{"usr/local/lib/", tar.TypeDir, 0o755, "", ""},
		{"usr/local/lib/libx.so", tar.TypeReg, 0o600, "", "lib"},
		{"var/", tar.TypeDir, 0o755, "", ""},
		{"var/empty/", tar.TypeDir, 0o755, "", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tar entries:\n got %+v\nwant %+v", got, want)
	}
}

func TestWriteTarStableOrder(t *testing.T) {
	a := []Entry{
		{Path: "/b/2", Data: []byte("2")},
		{Path: "/a/1", Data: []byte("1")},
		{Path: "/b/1", Data: []byte("1")},
		{Path: "/c", Link: "/a/1"},
	}
	b := []Entry{a[3], a[2], a[1], a[0]}
	if !bytes.Equal(tarOf(t, a), tarOf(t, b)) {
		t.Error("the same entries in another order make a different tar")
	}
	if !bytes.Equal(tarOf(t, a), tarOf(t, a)) {
		t.Error("the same entries make different tars")
	}
	if a[0].Path != "/b/2" {
		t.Error("WriteTar reordered the caller's slice")
	}
}

func TestWriteTarExplicitDirIsNotRepeated(t *testing.T) {
	got := readTar(t, bytes.NewReader(tarOf(t, []Entry{
		{Path: "/opt/app/bin/x", Data: []byte("x")},
		{Path: "/opt", Dir: true, Mode: 0o700},
		{Path: "/opt/app/", Dir: true, Mode: 0o750},
	})))
	want := []header{
		{"opt/", tar.TypeDir, 0o700, "", ""},
		{"opt/app/", tar.TypeDir, 0o750, "", ""},
		{"opt/app/bin/", tar.TypeDir, 0o755, "", ""},
		{"opt/app/bin/x", tar.TypeReg, 0o644, "", "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tar entries:\n got %+v\nwant %+v", got, want)
	}
}

func TestWriteTarCleansPaths(t *testing.T) {
	got := readTar(t, bytes.NewReader(tarOf(t, []Entry{{Path: "/a//b/../c", Data: []byte("c")}})))
	if len(got) != 2 || got[0].Name != "a/" || got[1].Name != "a/c" {
		t.Errorf("entries %+v, want a/ and a/c", got)
	}
}

func TestWriteTarErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"duplicate", []Entry{{Path: "/a", Data: []byte("1")}, {Path: "/a", Data: []byte("2")}}, "appears twice"},
		{"duplicate after cleaning", []Entry{{Path: "/a/b", Data: []byte("1")}, {Path: "/a/./b", Data: []byte("2")}}, "appears twice"},
		{"dir twice", []Entry{{Path: "/d", Dir: true}, {Path: "/d/", Dir: true}}, "appears twice"},
		{"empty path", []Entry{{Path: "/", Data: []byte("x")}}, "empty path"},
		{"missing source", []Entry{{Path: "/bin/x", Source: filepath.Join(dir, "missing")}}, "/bin/x"},
		{"source is a directory", []Entry{{Path: "/bin/x", Source: dir}}, "not a regular file"},
	}
	for _, c := range cases {
		err := WriteTar(io.Discard, c.entries)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	err := WriteTar(io.Discard, []Entry{{Path: "/bin/x", Source: filepath.Join(dir, "missing")}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing source: err = %v, want it to wrap fs.ErrNotExist", err)
	}
}

func TestLayerSpoolsIntoDir(t *testing.T) {
	dir := t.TempDir()
	l, err := Layer(dir, []Entry{{Path: "/hello", Data: []byte("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "layer-*.tar"))
	if len(matches) != 1 {
		t.Errorf("layer files in dir: %v, want one", matches)
	}
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := readTar(t, rc)
	if len(got) != 1 || got[0].Name != "hello" || got[0].Content != "hello" {
		t.Errorf("layer contents %+v", got)
	}
}

func TestLayerErrorLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Layer(dir, []Entry{{Path: "/a"}, {Path: "/a"}}); err == nil {
		t.Fatal("Layer with a duplicate entry returned no error")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed Layer left %v behind", left)
	}
	if _, err := Layer(filepath.Join(dir, "missing-dir"), nil); err == nil {
		t.Error("Layer into a missing dir returned no error")
	}
}

func layer(t *testing.T, entries []Entry) v1.Layer {
	t.Helper()
	l, err := Layer(t.TempDir(), entries)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func image(t *testing.T, base v1.Image, l v1.Layer, cfg Config) v1.Image {
	t.Helper()
	img, err := Image(base, l, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func configOf(t *testing.T, img v1.Image) *v1.ConfigFile {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var sample = []Entry{{Path: "/app", Data: []byte("binary")}, {Path: "/etc/app.conf", Data: []byte("x=1"), Mode: 0o600}}

func TestImageDefaults(t *testing.T) {
	img := image(t, nil, layer(t, sample), Config{})
	cf := configOf(t, img)
	if cf.OS != "linux" || cf.Architecture != "amd64" || cf.OSVersion != "" {
		t.Errorf("os/arch/version = %q/%q/%q, want linux/amd64/empty", cf.OS, cf.Architecture, cf.OSVersion)
	}
	if !cf.Created.Time.Equal(time.Unix(0, 0)) {
		t.Errorf("created %v, want the epoch", cf.Created)
	}
	if len(cf.History) != 1 || cf.History[0].CreatedBy != "winconform" || !cf.History[0].Created.Time.Equal(time.Unix(0, 0)) {
		t.Errorf("history = %+v", cf.History)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %v, %v", layers, err)
	}
	if len(cf.RootFS.DiffIDs) != 1 {
		t.Errorf("rootfs diff IDs %v", cf.RootFS.DiffIDs)
	}
}

func TestImageConfig(t *testing.T) {
	cfg := Config{
		Entrypoint: []string{"/app"}, Cmd: []string{"serve", "--port=80"}, Env: []string{"A=1", "PATH=/"},
		WorkingDir: "/work", User: "65534", Labels: map[string]string{"org.example/x": "y"},
		OS: "windows", Arch: "arm64", OSVersion: "10.0.20348.2340",
	}
	cf := configOf(t, image(t, nil, layer(t, sample), cfg))
	c := cf.Config
	if !reflect.DeepEqual(c.Entrypoint, cfg.Entrypoint) || !reflect.DeepEqual(c.Cmd, cfg.Cmd) || !reflect.DeepEqual(c.Env, cfg.Env) ||
		c.WorkingDir != "/work" || c.User != "65534" || !reflect.DeepEqual(c.Labels, cfg.Labels) {
		t.Errorf("config = %+v", c)
	}
	if cf.OS != "windows" || cf.Architecture != "arm64" || cf.OSVersion != "10.0.20348.2340" {
		t.Errorf("os/arch/version = %q/%q/%q", cf.OS, cf.Architecture, cf.OSVersion)
	}
}

func TestImageOnBase(t *testing.T) {
	base := image(t, nil, layer(t, sample), Config{
		Entrypoint: []string{"/app"}, Env: []string{"A=1"}, Labels: map[string]string{"base": "1", "shared": "base"},
		OS: "windows", OSVersion: "10.0.17763.1",
	})
	top := image(t, base, layer(t, []Entry{{Path: "/extra", Data: []byte("e")}}), Config{
		Cmd: []string{"run"}, Labels: map[string]string{"top": "2", "shared": "top"}, OS: "windows",
	})
	cf := configOf(t, top)
	if !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/app"}) || !reflect.DeepEqual(cf.Config.Env, []string{"A=1"}) {
		t.Errorf("unset fields are not inherited from the base: %+v", cf.Config)
	}
	if !reflect.DeepEqual(cf.Config.Cmd, []string{"run"}) {
		t.Errorf("cmd = %v", cf.Config.Cmd)
	}
	if want := map[string]string{"base": "1", "top": "2", "shared": "top"}; !reflect.DeepEqual(cf.Config.Labels, want) {
		t.Errorf("labels = %v, want %v", cf.Config.Labels, want)
	}
	if cf.OSVersion != "10.0.17763.1" {
		t.Errorf("OS version %q, want the base's", cf.OSVersion)
	}
	if layers, _ := top.Layers(); len(layers) != 2 {
		t.Errorf("%d layers, want 2", len(layers))
	}
	if len(cf.History) != 2 {
		t.Errorf("history %+v, want 2 entries", cf.History)
	}
	// The base is not changed by building on it.
	if bcf := configOf(t, base); bcf.Config.Labels["top"] != "" || bcf.Config.Cmd != nil {
		t.Errorf("building on the base changed it: %+v", bcf.Config)
	}
}

func TestImageIsReproducible(t *testing.T) {
	cfg := Config{Entrypoint: []string{"/app"}, Labels: map[string]string{"a": "1", "b": "2"}}
	d1 := digestOf(t, image(t, nil, layer(t, sample), cfg))
	time.Sleep(1100 * time.Millisecond) // a clock leaking into the image would show up now
	d2 := digestOf(t, image(t, nil, layer(t, []Entry{sample[1], sample[0]}), cfg))
	if d1 != d2 {
		t.Errorf("same inputs made digests %s and %s", d1, d2)
	}
	other := []Entry{{Path: "/app", Data: []byte("binarY")}, sample[1]}
	if d3 := digestOf(t, image(t, nil, layer(t, other), cfg)); d3 == d1 {
		t.Error("different file contents made the same digest")
	}
	if d4 := digestOf(t, image(t, nil, layer(t, sample), Config{Entrypoint: []string{"/other"}})); d4 == d1 {
		t.Error("a different config made the same digest")
	}
}

func TestWriteArchiveFileLoadsBack(t *testing.T) {
	dir := t.TempDir()
	a := image(t, nil, layer(t, sample), Config{Entrypoint: []string{"/app"}, Cmd: []string{"serve"}})
	b := image(t, nil, layer(t, []Entry{{Path: "/b", Data: []byte("b")}}), Config{Entrypoint: []string{"/b"}, OS: "windows"})
	path := filepath.Join(dir, "images.tar")
	if err := WriteArchiveFile(path, map[string]v1.Image{"example.local/ay:v1": a, "example.local/bee:v2": b}); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]v1.Image{"example.local/ay:v1": a, "example.local/bee:v2": b} {
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tarball.ImageFromPath(path, &tag)
		if err != nil {
			t.Fatalf("loading %s: %v", ref, err)
		}
		if digestOf(t, got) != digestOf(t, want) {
			t.Errorf("%s: digest %s after loading, want %s", ref, digestOf(t, got), digestOf(t, want))
		}
		if !reflect.DeepEqual(configOf(t, got), configOf(t, want)) {
			t.Errorf("%s: config differs after loading", ref)
		}
		m, err := got.Manifest()
		if err != nil || len(m.Layers) != 1 {
			t.Errorf("%s: manifest %+v, %v", ref, m, err)
		}
	}
	missing, _ := name.NewTag("example.local/sea:v3")
	if _, err := tarball.ImageFromPath(path, &missing); err == nil {
		t.Error("the archive holds an image it was not given")
	}
}

func TestWriteArchiveBadTag(t *testing.T) {
	img := image(t, nil, layer(t, sample), Config{})
	for _, ref := range []string{"Not A Tag", "UPPER/case:v1", "x:bad tag"} {
		var b bytes.Buffer
		err := WriteArchive(&b, map[string]v1.Image{ref: img})
		if err == nil || !strings.Contains(err.Error(), "image name") || !strings.Contains(err.Error(), ref) {
			t.Errorf("WriteArchive(%q): err = %v, want an image name error", ref, err)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.tar")
	if err := WriteArchiveFile(path, map[string]v1.Image{"Not A Tag": img}); err == nil {
		t.Error("WriteArchiveFile with a bad tag returned no error")
	}
	if err := WriteArchiveFile(filepath.Join(t.TempDir(), "no", "such", "dir.tar"), map[string]v1.Image{"ay:b": img}); err == nil {
		t.Error("WriteArchiveFile into a missing directory returned no error")
	}
}

func TestWriteTarRefusesEntriesUnderAFile(t *testing.T) {
	for _, parent := range []Entry{
		{Path: "/a", Data: []byte("file")},
		{Path: "/a", Link: "b"},
	} {
		err := WriteTar(io.Discard, []Entry{parent, {Path: "/a/b", Data: []byte("x")}})
		if err == nil || !strings.Contains(err.Error(), "/a is not a directory") {
			t.Errorf("parent %+v: err = %v, want one naming /a", parent, err)
		}
	}
}
