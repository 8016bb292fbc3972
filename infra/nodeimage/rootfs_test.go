package nodeimage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAptMirrorOneLine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sources string
		want    string
	}{
		{"plain", "deb http://mirror.example/debian bookworm main\n", "http://mirror.example/debian"},
		{"security first", `# security updates
deb http://security.debian.org/debian-security bookworm-security main
deb http://deb.debian.org/debian bookworm-security main
deb https://ftp.de.debian.org/debian/ bookworm main contrib
`, "https://ftp.de.debian.org/debian/"},
		{"options", "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://m.example/debian bookworm main\n", "http://m.example/debian"},
		{"one option", "deb [trusted=yes] http://m.example/debian bookworm main\n", "http://m.example/debian"},
		{"spaced brackets", "deb [ arch=amd64 ] http://m.example/debian bookworm main\n", "http://m.example/debian"},
		{"comments and deb-src", "# deb http://commented.example/debian bookworm main\n#deb http://c2.example/debian bookworm main\ndeb-src http://src.example/debian bookworm main\ndeb http://real.example/debian bookworm main\n", "http://real.example/debian"},
		{"ubuntu", "deb http://archive.ubuntu.com/ubuntu jammy main\n", DefaultMirror},
		{"debian-ports", "deb http://deb.debian.org/debian-ports sid main\n", DefaultMirror},
		{"too short", "deb http://m.example/debian\n", DefaultMirror},
		{"empty", "", DefaultMirror},
	} {
		if got := AptMirror(map[string]string{"/etc/apt/sources.list": tc.sources}); got != tc.want {
			t.Errorf("%s: AptMirror = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestAptMirrorDeb822(t *testing.T) {
	debianSources := `Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian http://second.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`
	files := map[string]string{"/etc/apt/sources.list.d/debian.sources": debianSources}
	if got := AptMirror(files); got != "http://mirror.example/debian" {
		t.Errorf("AptMirror = %q, want the first URI of the first non-security stanza", got)
	}

	// A Debian URI whose suites are security ones is not the mirror.
	securityOnly := "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-security\n"
	if got := AptMirror(map[string]string{"/etc/apt/sources.list.d/s.sources": securityOnly}); got != DefaultMirror {
		t.Errorf("security-only stanza: %q", got)
	}
	// Only *.sources files are read as deb822.
	if got := AptMirror(map[string]string{"/etc/apt/sources.list.d/debian.list": debianSources}); got != DefaultMirror {
		t.Errorf("deb822 content in a .list file: %q", got)
	}
}

func TestAptMirrorFileOrder(t *testing.T) {
	files := map[string]string{
		"/etc/apt/sources.list.d/b.list":    "deb http://b.example/debian bookworm main\n",
		"/etc/apt/sources.list.d/a.sources": "Types: deb\nURIs: http://a.example/debian\nSuites: bookworm\n",
		"/etc/apt/sources.list":             "deb http://main.example/debian bookworm main\n",
	}
	for i := 0; i < 20; i++ { // map order must not matter
		if got := AptMirror(files); got != "http://main.example/debian" {
			t.Fatalf("AptMirror = %q, want sources.list first", got)
		}
	}
	files["/etc/apt/sources.list"] = "deb http://archive.ubuntu.com/ubuntu jammy main\n"
	if got := AptMirror(files); got != "http://a.example/debian" {
		t.Errorf("AptMirror = %q, want the first Debian entry in sources.list.d order", got)
	}
}

func TestAptMirrorDeb822SkipsSourceOnlyAndDisabled(t *testing.T) {
	for name, stanza := range map[string]string{
		"deb-src":  "Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://bin.example/debian\nSuites: bookworm\n",
		"disabled": "Enabled: no\nTypes: deb\nURIs: http://off.example/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://bin.example/debian\nSuites: bookworm\n",
	} {
		if got := AptMirror(map[string]string{"/etc/apt/sources.list.d/x.sources": stanza}); got != "http://bin.example/debian" {
			t.Errorf("%s: AptMirror = %q, want http://bin.example/debian", name, got)
		}
	}
}

func TestDebianMain(t *testing.T) {
	for _, tc := range []struct {
		uri, suites string
		want        bool
	}{
		{"http://deb.debian.org/debian", "bookworm", true},
		{"http://deb.debian.org/debian/", "bookworm bookworm-updates", true},
		{"http://deb.debian.org/debian", "bookworm-security", false},
		{"http://security.debian.org/debian-security", "bookworm", false},
		{"http://archive.ubuntu.com/ubuntu", "jammy", false},
		{"http://example.com/notdebian", "bookworm", false},
	} {
		if got := debianMain(tc.uri, tc.suites); got != tc.want {
			t.Errorf("debianMain(%q, %q) = %v", tc.uri, tc.suites, got)
		}
	}
}

// kindContainerdConfig is the head of kind's images/base/files/etc/containerd/config.toml.
const kindContainerdConfig = `# explicitly use v2 config format
version = 2

[proxy_plugins]
# fuse-overlayfs is used for rootless
[proxy_plugins."fuse-overlayfs"]
  type = "snapshot"
  address = "/run/containerd-fuse-overlayfs.sock"

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
`

func TestDropFuseOverlayfs(t *testing.T) {
	got, err := dropFuseOverlayfs(kindContainerdConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := `# explicitly use v2 config format
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
`
	if got != want {
		t.Errorf("dropFuseOverlayfs =\n%s\nwant\n%s", got, want)
	}
	// The docker shim's pre-entrypoint edits this line: it must survive.
	if !strings.Contains(got, "restrict_oom_score_adj = false") {
		t.Error("restrict_oom_score_adj line lost")
	}
}

func TestDropFuseOverlayfsEdges(t *testing.T) {
	noProxy := "version = 2\n\n[plugins.\"x\"]\n  a = 1\n"
	if got, err := dropFuseOverlayfs(noProxy); err != nil || got != noProxy {
		t.Errorf("config without proxy plugins changed: %q, %v", got, err)
	}
	atEnd := "version = 2\n[plugins.\"x\"]\n  a = 1\n  [proxy_plugins.\"fuse-overlayfs\"]\n    type = \"snapshot\"\n"
	got, err := dropFuseOverlayfs(atEnd)
	if err != nil {
		t.Fatal(err)
	}
	if got != "version = 2\n[plugins.\"x\"]\n  a = 1" {
		t.Errorf("proxy plugin at the end: %q", got)
	}
	twice := "[proxy_plugins.\"a\"]\n  x = 1\n[plugins.\"keep\"]\n  y = 2\n[proxy_plugins.\"b\"]\n  z = 3\n[plugins.\"also\"]\n"
	got, _ = dropFuseOverlayfs(twice)
	if strings.Contains(got, "proxy_plugins") || strings.Contains(got, "x = 1") || strings.Contains(got, "z = 3") ||
		!strings.Contains(got, "y = 2") || !strings.Contains(got, `[plugins."also"]`) {
		t.Errorf("two proxy plugins: %q", got)
	}
}

func TestAdjustOCISpec(t *testing.T) {
	raw := `{
  "ociVersion": "1.1.0",
  "process": {"args": ["sh"], "cwd": "/", "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]},
  "hooks": {"createContainer": [{"path": "/existing"}], "poststop": [{"path": "/stop"}]},
  "linux": {"namespaces": [{"type": "pid"}]}
}`
	out, err := adjustOCISpec([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		OCIVersion string                             `json:"ociVersion"`
		Process    map[string]any                     `json:"process"`
		Hooks      map[string][]struct{ Path string } `json:"hooks"`
		Linux      map[string]any                     `json:"linux"`
	}
	if err := json.Unmarshal(out, &spec); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if _, ok := spec.Process["rlimits"]; ok {
		t.Error("rlimits kept")
	}
	if spec.Process["cwd"] != "/" || spec.OCIVersion != "1.1.0" || spec.Linux["namespaces"] == nil {
		t.Errorf("other fields lost: %s", out)
	}
	cc := spec.Hooks["createContainer"]
	if len(cc) != 2 || cc[0].Path != "/existing" || cc[1].Path != "/kind/bin/mount-product-files.sh" {
		t.Errorf("createContainer hooks = %+v", cc)
	}
	if len(spec.Hooks["poststop"]) != 1 {
		t.Errorf("other hooks lost: %+v", spec.Hooks)
	}

	// No hooks at all: the hook is added.
	out, err = adjustOCISpec([]byte(`{"process": {"args": ["sh"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var bare struct {
		Hooks map[string][]struct{ Path string } `json:"hooks"`
	}
	if err := json.Unmarshal(out, &bare); err != nil {
		t.Fatal(err)
	}
	if cc := bare.Hooks["createContainer"]; len(cc) != 1 || cc[0].Path != "/kind/bin/mount-product-files.sh" {
		t.Errorf("hook not added to a spec without hooks: %s", out)
	}

	if _, err := adjustOCISpec([]byte("ctr: not found")); err == nil || !strings.Contains(err.Error(), "ctr oci spec") {
		t.Errorf("bad input: %v", err)
	}
}

func TestFileHelpers(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("content"), 0o600)
	dst := filepath.Join(dir, "a", "b", "dst")
	if err := installFile(src, dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("installFile: %v %v", fi, err)
	}
	// Over a symlink, installFile replaces the link, not its target.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := installFile(src, link, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Error("installFile wrote through a symlink")
	}

	l := filepath.Join(dir, "x", "sbin", "init")
	if err := relink(l, "/usr/lib/systemd/systemd"); err != nil {
		t.Fatal(err)
	}
	if err := relink(l, "/lib/systemd/systemd"); err != nil {
		t.Fatalf("relink over an existing link: %v", err)
	}
	if got, _ := os.Readlink(l); got != "/lib/systemd/systemd" {
		t.Errorf("link -> %q", got)
	}

	conf := filepath.Join(dir, "journald.conf")
	os.WriteFile(conf, []byte("[Journal]\n\n"), 0o644)
	if err := editFile(conf, func(s string) (string, error) { return strings.TrimRight(s, "\n") + "\nReadKMsg=no\n", nil }); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(conf); string(data) != "[Journal]\nReadKMsg=no\n" {
		t.Errorf("editFile: %q", data)
	}
	if err := editFile(filepath.Join(dir, "missing"), func(s string) (string, error) { return s, nil }); err == nil {
		t.Error("editFile of a missing file succeeded")
	}
}
