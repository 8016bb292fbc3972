package suiteimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fakeELF writes a minimal ELF64 executable for machine, with a PT_INTERP
// program header when dynamic, followed by payload (to tell files apart).
func fakeELF(t *testing.T, name string, machine elf.Machine, dynamic bool, payload string) string {
	t.Helper()
	progs := []elf.Prog64{{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Align: 0x1000}}
	if dynamic {
		progs = append([]elf.Prog64{{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Align: 1}}, progs...)
	}
	hdr := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: uint16(len(progs)), Shentsize: 64,
	}
	copy(hdr.Ident[:], []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, hdr); err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if err := binary.Write(&buf, binary.LittleEndian, p); err != nil {
			t.Fatal(err)
		}
	}
	buf.WriteString(payload)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

func binaries(t *testing.T) Binaries {
	return Binaries{
		Runner: fakeELF(t, "suite-runner", elf.EM_X86_64, false, "runner"),
		Suite:  fakeELF(t, "e2e.test", elf.EM_X86_64, false, "suite"),
		Kwok:   fakeELF(t, "kwok", elf.EM_X86_64, false, "kwok"),
	}
}

type entry struct {
	hdr  *tar.Header
	data []byte
}

// files is the image's file system, by path (without the leading slash).
func files(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(h.Name, "/")] = entry{h, data}
	}
}

func TestSuiteImageLayout(t *testing.T) {
	b := binaries(t)
	img, err := SuiteImage(b)
	if err != nil {
		t.Fatal(err)
	}
	fs := files(t, img)
	for path, src := range map[string]string{RunnerPath: b.Runner, SuitePath: b.Suite, KwokPath: b.Kwok} {
		e, ok := fs[strings.TrimPrefix(path, "/")]
		if !ok {
			t.Errorf("%s is not in the image", path)
			continue
		}
		want, _ := os.ReadFile(src)
		if e.hdr.Typeflag != tar.TypeReg || e.hdr.Mode != 0o755 || !bytes.Equal(e.data, want) {
			t.Errorf("%s: type %c mode %o, same bytes as %s: %v; want a regular file, 0755", path, e.hdr.Typeflag, e.hdr.Mode, src, bytes.Equal(e.data, want))
		}
	}
	if e, ok := fs["tmp"]; !ok || e.hdr.Typeflag != tar.TypeDir || e.hdr.Mode != 0o1777 {
		t.Errorf("/tmp: %+v, want a directory of mode 1777", e.hdr)
	}
	if e := fs["etc/passwd"]; !strings.Contains(string(e.data), "nobody:x:65534:65534:") {
		t.Errorf("/etc/passwd lacks nobody: %q", e.data)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	c := cf.Config
	if !reflect.DeepEqual(c.Entrypoint, []string{RunnerPath}) || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want [%s] and none", c.Entrypoint, c.Cmd, RunnerPath)
	}
	if c.User != "65534:65534" {
		t.Errorf("user %q, want 65534:65534 (nobody)", c.User)
	}
	// The runner finds the suite binary and kwok through the environment:
	// each must name a file of the image.
	for _, key := range []string{"WINCONFORM_SUITE_BINARY", "WINCONFORM_KWOK_BINARY", "HOME"} {
		i := slices.IndexFunc(c.Env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
		if i < 0 {
			t.Errorf("no %s in the image's environment %q", key, c.Env)
			continue
		}
		path := strings.TrimPrefix(c.Env[i], key+"=")
		if _, ok := fs[strings.TrimPrefix(path, "/")]; !ok {
			t.Errorf("%s names %s, which the image lacks", key, path)
		}
	}
}

func TestSuiteImageIsReproducible(t *testing.T) {
	b := binaries(t)
	one, err := SuiteImage(b)
	if err != nil {
		t.Fatal(err)
	}
	two, err := SuiteImage(b)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := one.Digest()
	d2, _ := two.Digest()
	if d1 != d2 {
		t.Errorf("the same binaries made two images: %s and %s", d1, d2)
	}
}

func TestSuiteImageRefusesWhatCannotRunThere(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Binaries)
		want   []string
	}{
		{"dynamic suite binary", func(b *Binaries) { b.Suite = fakeELF(t, "e2e.test", elf.EM_X86_64, true, "") },
			[]string{"suite binary", "dynamically linked", "CGO_ENABLED=0"}},
		{"arm64 kwok", func(b *Binaries) { b.Kwok = fakeELF(t, "kwok", elf.EM_AARCH64, false, "") },
			[]string{"kwok binary", "want an amd64 executable"}},
		{"missing runner", func(b *Binaries) { b.Runner = filepath.Join(t.TempDir(), "nope") },
			[]string{"suite runner", "no such file", "make build"}},
		{"no runner path", func(b *Binaries) { b.Runner = "" }, []string{"suite runner", "no path given"}},
		{"a script", func(b *Binaries) { b.Suite = notELF }, []string{"suite binary", "not a Linux executable"}},
		{"a directory", func(b *Binaries) { b.Kwok = t.TempDir() }, []string{"kwok binary", "not a regular file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := binaries(t)
			tc.change(&b)
			_, err := SuiteImage(b)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestAggregatorImage(t *testing.T) {
	bin := fakeELF(t, "sonobuoy", elf.EM_X86_64, false, "sonobuoy")
	img, err := AggregatorImage(bin)
	if err != nil {
		t.Fatal(err)
	}
	fs := files(t, img)
	want, _ := os.ReadFile(bin)
	if e, ok := fs["sonobuoy"]; !ok || e.hdr.Mode != 0o755 || !bytes.Equal(e.data, want) {
		t.Errorf("/sonobuoy: present %v, want the binary with mode 0755", ok)
	}
	if e, ok := fs["tmp"]; !ok || e.hdr.Mode != 0o1777 {
		t.Errorf("/tmp missing or not 1777")
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/sonobuoy"}) || len(cf.Config.Cmd) == 0 || cf.Config.Cmd[0] != "aggregator" {
		t.Errorf("entrypoint %q cmd %q, want /sonobuoy aggregator ...", cf.Config.Entrypoint, cf.Config.Cmd)
	}

	if _, err := AggregatorImage(fakeELF(t, "sonobuoy", elf.EM_X86_64, true, "")); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("a dynamic sonobuoy binary: %v", err)
	}
}

func TestArchiveHoldsBothImages(t *testing.T) {
	suite, err := SuiteImage(binaries(t))
	if err != nil {
		t.Fatal(err)
	}
	agg, err := AggregatorImage(fakeELF(t, "sonobuoy", elf.EM_X86_64, false, "sonobuoy"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "images.tar")
	if err := Archive(path, suite, agg); err != nil {
		t.Fatal(err)
	}
	for ref, img := range map[string]v1.Image{Suite: suite, Aggregator: agg} {
		tag, err := name.NewTag(ref, name.StrictValidation)
		if err != nil {
			t.Fatalf("%s is not a valid tag: %v", ref, err)
		}
		got, err := tarball.ImageFromPath(path, &tag)
		if err != nil {
			t.Fatalf("the archive lacks %s: %v", ref, err)
		}
		gd, _ := got.Digest()
		wd, _ := img.Digest()
		if gd != wd {
			t.Errorf("%s: digest %s, want %s", ref, gd, wd)
		}
	}
	if Aggregator != "winconform.local/sonobuoy:v0.57.3" {
		t.Errorf("Aggregator = %s; the tag must be the Sonobuoy version built", Aggregator)
	}
}
