package nodeimage

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/winconform/winconform/images/assemble"
)

// flannelMain is the import block of flannel's main.go (v0.28).
const flannelMain = `package main

import (
	"context"

	"github.com/flannel-io/flannel/pkg/backend"
	_ "github.com/flannel-io/flannel/pkg/backend/alloc"
	_ "github.com/flannel-io/flannel/pkg/backend/hostgw"
	_ "github.com/flannel-io/flannel/pkg/backend/tencentvpc"
	_ "github.com/flannel-io/flannel/pkg/backend/udp"
	_ "github.com/flannel-io/flannel/pkg/backend/vxlan"
)

func main() { _ = context.Background; _ = backend.Manager(nil) }
`

func TestDropImports(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(path, []byte(flannelMain), 0o644)
	if err := dropImports(path, "pkg/backend/tencentvpc\"", "pkg/backend/udp\""); err != nil {
		t.Fatalf("dropImports: %v", err)
	}
	data, _ := os.ReadFile(path)
	got := string(data)
	want := strings.NewReplacer(
		"\t_ \"github.com/flannel-io/flannel/pkg/backend/tencentvpc\"\n", "",
		"\t_ \"github.com/flannel-io/flannel/pkg/backend/udp\"\n", "",
	).Replace(flannelMain)
	if got != want {
		t.Errorf("after dropImports:\n%s\nwant\n%s", got, want)
	}
	for _, kept := range []string{"backend/vxlan\"", "backend/hostgw\"", "flannel/pkg/backend\"\n"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s dropped", kept)
		}
	}
}

func TestDropImportsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(path, []byte(flannelMain), 0o644)
	err := dropImports(path, "pkg/backend/udp\"", "pkg/backend/gone\"")
	if err == nil {
		t.Fatal("dropImports succeeded with an import that is not there")
	}
	if !strings.Contains(err.Error(), "no import ending in pkg/backend/gone\"") || !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file and the missing import", err)
	}
	if data, _ := os.ReadFile(path); string(data) != flannelMain {
		t.Error("the file was changed although the recipe does not match it")
	}
	if err := dropImports(filepath.Join(t.TempDir(), "none.go"), "x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestVersionLDFlags(t *testing.T) {
	flags, err := versionLDFlags("v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(flags)
	if len(f) < 2 || f[0] != "-s" || f[1] != "-w" {
		t.Errorf("ldflags do not strip: %q", flags)
	}
	// Every -X is followed by exactly one key=value.
	vars := map[string]string{}
	for i := 2; i < len(f); i += 2 {
		if f[i] != "-X" || i+1 >= len(f) || !strings.Contains(f[i+1], "=") {
			t.Fatalf("malformed ldflags at %d: %q", i, flags)
		}
		k, v, _ := strings.Cut(f[i+1], "=")
		vars[k] = v
	}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		for k, want := range map[string]string{
			"gitVersion": "v1.34.4", "gitMajor": "1", "gitMinor": "34", "gitTreeState": "clean",
			"gitCommit": strings.Repeat("0", 40), "buildDate": "1970-01-01T00:00:00Z",
		} {
			if got := vars[pkg+"."+k]; got != want {
				t.Errorf("%s.%s = %q, want %q", pkg, k, got, want)
			}
		}
	}
	if len(vars) != 12 {
		t.Errorf("%d variables set: %v", len(vars), vars)
	}
	for _, bad := range []string{"", "v1", "latest"} {
		if _, err := versionLDFlags(bad); err == nil {
			t.Errorf("versionLDFlags(%q) accepted", bad)
		}
	}
}

// kubeadmImages is `kubeadm config images list` for Kubernetes v1.34.
var kubeadmImages = []string{
	"registry.k8s.io/kube-apiserver:v1.34.4",
	"registry.k8s.io/kube-controller-manager:v1.34.4",
	"registry.k8s.io/kube-scheduler:v1.34.4",
	"registry.k8s.io/kube-proxy:v1.34.4",
	"registry.k8s.io/coredns/coredns:v1.12.1",
	"registry.k8s.io/pause:3.10.1",
	"registry.k8s.io/etcd:3.6.5-0",
}

func TestImageTag(t *testing.T) {
	for repo, want := range map[string]string{
		"coredns":        "v1.12.1",
		"pause":          "3.10.1",
		"etcd":           "3.6.5-0",
		"kube-proxy":     "v1.34.4",
		"kube-apiserver": "v1.34.4",
	} {
		got, err := imageTag(kubeadmImages, repo)
		if err != nil || got != want {
			t.Errorf("imageTag(%s) = %q, %v; want %q", repo, got, err, want)
		}
	}
	// The whole last path element must match.
	for _, repo := range []string{"proxy", "dns", "flannel"} {
		if got, err := imageTag(kubeadmImages, repo); err == nil {
			t.Errorf("imageTag(%s) = %q, want an error", repo, got)
		} else if !strings.Contains(err.Error(), "kubeadm lists no "+repo+" image") || !strings.Contains(err.Error(), "registry.k8s.io/pause:3.10.1") {
			t.Errorf("error %q does not say what was listed", err)
		}
	}
	if got, err := imageTag([]string{"localhost:5000/pause:3.9"}, "pause"); err != nil || got != "3.9" {
		t.Errorf("registry with a port: %q, %v", got, err)
	}
	if got, err := imageTag([]string{"localhost:5000/pause", "registry.k8s.io/pause@sha256:abc"}, "pause"); err == nil {
		t.Errorf("untagged images gave tag %q", got)
	}
	if _, err := imageTag(nil, "pause"); err == nil {
		t.Error("empty list gave a tag")
	}
}

func TestCopyTree(t *testing.T) {
	src := filepath.Join(t.TempDir(), "flannel@v0.28.10")
	os.MkdirAll(filepath.Join(src, "pkg", "backend"), 0o555)
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o444)
	os.WriteFile(filepath.Join(src, "pkg", "backend", "b.go"), []byte("package backend\n"), 0o444)
	os.Symlink("main.go", filepath.Join(src, "link.go"))
	dst := filepath.Join(t.TempDir(), "src", "flannel")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"main.go": "package main\n", "pkg/backend/b.go": "package backend\n"} {
		p := filepath.Join(dst, rel)
		data, err := os.ReadFile(p)
		if err != nil || string(data) != want {
			t.Errorf("%s = %q, %v", rel, data, err)
		}
		// The copy is writable (dropImports edits it), unlike the module cache.
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o200 == 0 {
			t.Errorf("%s is not writable: %v", rel, fi.Mode())
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "link.go")); !os.IsNotExist(err) {
		t.Error("a symlink was copied")
	}
	if err := copyTree(filepath.Join(t.TempDir(), "none"), dst); err == nil {
		t.Error("copying a missing tree succeeded")
	}
}

func TestSandboxImage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(kindContainerdConfig), 0o644)
	got, err := sandboxImage(path)
	if err != nil || got != "registry.k8s.io/pause:3.10" {
		t.Errorf("sandboxImage = %q, %v", got, err)
	}

	commented := "[plugins.\"cri\"]\n  # sandbox_image = \"old:1\"\n  sandbox_image=\"registry.example/pause:9\"\n"
	os.WriteFile(path, []byte(commented), 0o644)
	if got, err := sandboxImage(path); err != nil || got != "registry.example/pause:9" {
		t.Errorf("commented line: sandboxImage = %q, %v", got, err)
	}

	// containerd 2.3's own format (`containerd config default`, version 4):
	// the sandbox image is pinned_images' sandbox, single-quoted.
	v4 := "version = 4\n\n[plugins]\n  [plugins.'io.containerd.cri.v1.images'.pinned_images]\n      sandbox = 'registry.k8s.io/pause:3.10.2'\n" +
		"  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n          sandboxer = 'podsandbox'\n"
	os.WriteFile(path, []byte(v4), 0o644)
	if got, err := sandboxImage(path); err != nil || got != "registry.k8s.io/pause:3.10.2" {
		t.Errorf("version 4: sandboxImage = %q, %v", got, err)
	}

	os.WriteFile(path, []byte("version = 2\n# sandbox_image = \"x:1\"\n"), 0o644)
	if _, err := sandboxImage(path); err == nil || !strings.Contains(err.Error(), "names no sandbox image") {
		t.Errorf("no sandbox image: %v", err)
	}
	if _, err := sandboxImage(filepath.Join(dir, "missing.toml")); err == nil {
		t.Error("missing file gave a sandbox image")
	}
}

func TestComponentImage(t *testing.T) {
	work := t.TempDir()
	bin := filepath.Join(work, "coredns-bin")
	os.WriteFile(bin, []byte("ELF"), 0o755)
	img, err := componentImage(work, []assemble.Entry{{Path: "/coredns", Source: bin}}, assemble.Config{Entrypoint: []string{"/coredns"}})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/coredns"}) {
		t.Errorf("entrypoint = %q", cf.Config.Entrypoint)
	}
	if !slices.Equal(cf.Config.Env, []string{imagePath}) {
		t.Errorf("env = %q, want the default PATH", cf.Config.Env)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	files := layerFiles(t, img.Layers)
	if h, ok := files["coredns"]; !ok || h.Typeflag != tar.TypeReg {
		t.Errorf("no /coredns in the layer: %v", keys(files))
	}
	if h, ok := files["tmp"]; !ok || h.Typeflag != tar.TypeDir || h.Mode&0o7777 != 0o1777 {
		t.Errorf("/tmp = %+v, want a sticky world-writable directory", h)
	}
	if _, ok := files["etc/passwd"]; !ok {
		t.Errorf("no /etc/passwd (nobody user) in the layer: %v", keys(files))
	}

	// A given Env is kept.
	img, err = componentImage(work, nil, assemble.Config{Env: []string{"PATH=/opt/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if cf, _ := img.ConfigFile(); !slices.Equal(cf.Config.Env, []string{"PATH=/opt/bin"}) {
		t.Errorf("env = %q", cf.Config.Env)
	}
}

func TestPasswdHasRootAndNobody(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(string(passwd.Data)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "root:x:0:0:") || !strings.HasPrefix(lines[1], "nobody:x:65534:65534:") {
		t.Errorf("passwd = %q", passwd.Data)
	}
	if tmpDir.Mode != 0o1777 || !tmpDir.Dir {
		t.Errorf("tmp entry = %+v", tmpDir)
	}
}

func layerFiles(t *testing.T, layers func() ([]v1.Layer, error)) map[string]*tar.Header {
	t.Helper()
	ls, err := layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*tar.Header{}
	for _, l := range ls {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out[strings.TrimSuffix(strings.TrimPrefix(h.Name, "/"), "/")] = h
		}
		rc.Close()
	}
	return out
}

func keys(m map[string]*tar.Header) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}
