package nodeimage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/docker"
)

var tagRe = regexp.MustCompile(`^winconform\.local/kind-node:(v\d+\.\d+\.\d+)-([0-9a-f]{12})$`)

func TestSpecTagFormat(t *testing.T) {
	s := Spec{KubernetesVersion: "v1.34.4"}
	m := tagRe.FindStringSubmatch(s.Tag())
	if m == nil {
		t.Fatalf("Tag = %q, want %s:<version>-<12 hex digits>", s.Tag(), Repository)
	}
	if m[1] != "v1.34.4" {
		t.Errorf("tag version = %q", m[1])
	}
	if m[2] != s.inputs()[:12] {
		t.Errorf("tag digest %q is not the inputs' digest %q", m[2], s.inputs()[:12])
	}
	if len(s.inputs()) != 64 {
		t.Errorf("inputs() = %q, want a sha256 in hex", s.inputs())
	}
}

func TestSpecTagStable(t *testing.T) {
	a := Spec{KubernetesVersion: "v1.34.4", CacheDir: "/a"}
	b := Spec{KubernetesVersion: "v1.34.4", CacheDir: "/somewhere/else", Mirror: "http://m.example/debian", Force: true, Log: &bytes.Buffer{}}
	if a.Tag() != a.Tag() {
		t.Error("Tag is not stable across calls")
	}
	// Where things are kept and how the build runs do not change the image.
	if a.Tag() != b.Tag() {
		t.Errorf("Tag depends on CacheDir/Mirror/Force/Log: %q vs %q", a.Tag(), b.Tag())
	}
}

func TestSpecTagChangesWithInputs(t *testing.T) {
	s := Spec{KubernetesVersion: "v1.34.4"}
	orig := s.Tag()
	digest := func(tag string) string { return tag[strings.LastIndex(tag, "-")+1:] }

	other := Spec{KubernetesVersion: "v1.34.5"}
	if other.Tag() == orig || digest(other.Tag()) == digest(orig) {
		t.Errorf("another Kubernetes version has the same digest: %q, %q", other.Tag(), orig)
	}

	saved := debianPackages
	debianPackages = append(append([]string{}, saved...), "vim")
	changed := s.Tag()
	debianPackages = saved
	if changed == orig {
		t.Error("adding a Debian package does not change the tag")
	}

	// Length prefixes keep moved boundaries from colliding: the same bytes
	// split differently between two packages are other inputs.
	debianPackages = []string{"ab", "c"}
	x := s.Tag()
	debianPackages = []string{"a", "bc"}
	y := s.Tag()
	debianPackages = saved
	if x == y {
		t.Error("different package lists give the same tag")
	}

	savedSrc := iptablesWrapperSource
	iptablesWrapperSource = append(append([]byte{}, savedSrc...), []byte("\n// changed\n")...)
	changed = s.Tag()
	iptablesWrapperSource = savedSrc
	if changed == orig {
		t.Error("changing the iptables wrapper does not change the tag")
	}
	if s.Tag() != orig {
		t.Error("the tag did not come back with the inputs")
	}
}

func TestEmbeddedWrapperSource(t *testing.T) {
	data, err := os.ReadFile("iptableswrapper/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, iptablesWrapperSource) {
		t.Error("iptablesWrapperSource is not iptableswrapper/main.go")
	}
}

func TestFlannelImage(t *testing.T) {
	if got, want := FlannelImage(), "winconform.local/flannel:"+cni.FlannelVersion; got != want {
		t.Errorf("FlannelImage = %q, want %q", got, want)
	}
	if !strings.HasPrefix(FlannelImage(), LocalImagePrefix) || !strings.HasPrefix(Repository, LocalImagePrefix) {
		t.Error("local images are not under LocalImagePrefix")
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("WINCONFORM_CACHE", "/srv/wc-cache")
	if got := DefaultCacheDir(); got != "/srv/wc-cache" {
		t.Errorf("with WINCONFORM_CACHE: %q", got)
	}
	xdg := t.TempDir()
	t.Setenv("WINCONFORM_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", xdg)
	if got := DefaultCacheDir(); got != filepath.Join(xdg, "winconform") {
		t.Errorf("with XDG_CACHE_HOME: %q", got)
	}
}

func TestEnsureReusesExistingImage(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "docker")
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\n[ \"$1 $2\" = \"image inspect\" ]\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cache := filepath.Join(dir, "cache")
	spec := Spec{KubernetesVersion: "v1.34.4", CacheDir: cache, Log: &log}
	tag, err := Ensure(context.Background(), &docker.Client{Bin: bin}, spec)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if tag != spec.Tag() {
		t.Errorf("Ensure = %q, want %q", tag, spec.Tag())
	}
	data, _ := os.ReadFile(calls)
	if got := strings.TrimSpace(string(data)); got != "image inspect --format {{.Id}} "+spec.Tag() {
		t.Errorf("docker calls = %q, want one image lookup", got)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Error("Ensure touched the cache although the image exists")
	}
	if !strings.Contains(log.String(), "nodeimage: node image "+tag+" is up to date") {
		t.Errorf("log = %q", log.String())
	}
}
