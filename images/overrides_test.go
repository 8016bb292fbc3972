package images

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// useOverrides puts the override file content in force for the test.
func useOverrides(t *testing.T, content string) {
	t.Helper()
	t.Cleanup(func() { SetOverrides(nil) })
	if err := LoadOverrides(writeOverrides(t, content)); err != nil {
		t.Fatal(err)
	}
}

func writeOverrides(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "overrides.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	want := map[string]string{
		"probe":               "winconform.local/probe:v0.1",
		"pause":               "registry.k8s.io/pause:3.10.1",
		"pause-ltsc2019":      "registry.k8s.io/pause:3.10.1",
		"pause-ltsc2022":      "registry.k8s.io/pause:3.10.1",
		"pause-ltsc2025":      "registry.k8s.io/pause:3.10.2",
		"servercore":          "mcr.microsoft.com/windows/servercore:ltsc2022",
		"servercore-ltsc2019": "mcr.microsoft.com/windows/servercore:ltsc2019",
		"servercore-ltsc2022": "mcr.microsoft.com/windows/servercore:ltsc2022",
		"servercore-ltsc2025": "mcr.microsoft.com/windows/servercore:ltsc2025",
		"nanoserver":          "mcr.microsoft.com/windows/nanoserver:ltsc2022",
		"nanoserver-ltsc2019": "mcr.microsoft.com/windows/nanoserver:1809",
		"nanoserver-ltsc2022": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
		"nanoserver-ltsc2025": "mcr.microsoft.com/windows/nanoserver:ltsc2025",
		"windows-hostprocess": "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
	}
	got := map[string]string{}
	for _, n := range Names() {
		got[n] = Ref(n)
		if Default(n) != Ref(n) {
			t.Errorf("%s: Ref %q differs from Default %q with no overrides", n, Ref(n), Default(n))
		}
		if _, err := name.ParseReference(Ref(n), name.StrictValidation); err != nil {
			t.Errorf("%s: %q is not a full reference: %v", n, Ref(n), err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n got %v\nwant %v", got, want)
	}
	if Ref("probe") != Probe {
		t.Errorf("Ref(probe) = %q, Probe = %q", Ref("probe"), Probe)
	}
	if names := Names(); !slices.IsSorted(names) {
		t.Errorf("Names() = %v, want them sorted", names)
	}
}

func TestRefPanicsOnUnknownName(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), `"busybox"`) || !strings.Contains(r.(string), "probe") {
			t.Errorf("recovered %v, want a panic naming busybox and the known names", r)
		}
	}()
	Ref("busybox")
}

func TestReleaseForBuild(t *testing.T) {
	for build, want := range map[string]string{
		"10.0.17763":      "ltsc2019",
		"10.0.17763.5458": "ltsc2019",
		"10.0.20348.2340": "ltsc2022",
		"10.0.26100.1742": "ltsc2025",
	} {
		r, err := ReleaseForBuild(build)
		if err != nil || r.Name != want {
			t.Errorf("ReleaseForBuild(%q) = %q, %v; want %s", build, r.Name, err, want)
		}
	}
	for _, build := range []string{"", "10.0.1776", "10.0.177630.1", "10.0.19041.1", "6.1.7601"} {
		_, err := ReleaseForBuild(build)
		if err == nil || !strings.Contains(err.Error(), "10.0.20348 (ltsc2022)") {
			t.Errorf("ReleaseForBuild(%q): err = %v, want one listing the known builds", build, err)
		}
	}
}

func TestRefForBuild(t *testing.T) {
	cases := map[[2]string]string{
		{"servercore", "10.0.17763.5458"}: "mcr.microsoft.com/windows/servercore:ltsc2019",
		{"servercore", "10.0.20348"}:      "mcr.microsoft.com/windows/servercore:ltsc2022",
		{"servercore", "10.0.26100.1"}:    "mcr.microsoft.com/windows/servercore:ltsc2025",
		{"nanoserver", "10.0.17763.1"}:    "mcr.microsoft.com/windows/nanoserver:1809",
		// registry.k8s.io/pause has a Windows Server 2025 variant from 3.10.2 on.
		{"pause", "10.0.20348.2340"}: "registry.k8s.io/pause:3.10.1",
		{"pause", "10.0.26100.3194"}: "registry.k8s.io/pause:3.10.2",
	}
	for in, want := range cases {
		if got, err := RefForBuild(in[0], in[1]); err != nil || got != want {
			t.Errorf("RefForBuild(%q, %q) = %q, %v; want %q", in[0], in[1], got, err, want)
		}
	}
	if _, err := RefForBuild("probe", "10.0.17763"); err == nil || !strings.Contains(err.Error(), `"probe" has no variant`) {
		t.Errorf("probe: err = %v", err)
	}
	if _, err := RefForBuild("servercore", "10.0.19041"); err == nil || !strings.Contains(err.Error(), "10.0.19041") {
		t.Errorf("unknown build: err = %v", err)
	}
	// Overrides apply to the variant picked.
	useOverrides(t, "images:\n  servercore-ltsc2019: mirror.example.com/sc:2019\n")
	if got, _ := RefForBuild("servercore", "10.0.17763.1"); got != "mirror.example.com/sc:2019" {
		t.Errorf("overridden: %q", got)
	}
}

func TestWindowsBases(t *testing.T) {
	want := map[string]string{
		"ltsc2019": "mcr.microsoft.com/windows/nanoserver:1809",
		"ltsc2022": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
		"ltsc2025": "mcr.microsoft.com/windows/nanoserver:ltsc2025",
	}
	if got := WindowsBases(); !reflect.DeepEqual(got, want) {
		t.Errorf("WindowsBases() = %v, want %v", got, want)
	}
	useOverrides(t, "registries:\n  mcr.microsoft.com: mirror.example.com/mcr\n")
	if got := WindowsBases()["ltsc2019"]; got != "mirror.example.com/mcr/windows/nanoserver:1809" {
		t.Errorf("with a registry override: %q", got)
	}
}

func TestOverridesFile(t *testing.T) {
	useOverrides(t, `
registries:              # prefix rewrites, longest prefix wins
  mcr.microsoft.com: mirror.example.com/mcr
  mcr.microsoft.com/windows/nanoserver: nano.example.com/nano
  winconform.local: mirror.example.com/winconform
  registry.k8s.io: mirror.example.com:5000/k8s
images:                  # whole references, by name (win over registries)
  servercore-ltsc2025: other.example.com/servercore@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
`)
	want := map[string]string{
		"probe":               "mirror.example.com/winconform/probe:v0.1",
		"pause":               "mirror.example.com:5000/k8s/pause:3.10.1",
		"servercore":          "mirror.example.com/mcr/windows/servercore:ltsc2022",
		"servercore-ltsc2019": "mirror.example.com/mcr/windows/servercore:ltsc2019",
		"servercore-ltsc2025": "other.example.com/servercore@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"nanoserver-ltsc2019": "nano.example.com/nano:1809", // the longer prefix wins
	}
	for n, w := range want {
		if got := Ref(n); got != w {
			t.Errorf("Ref(%q) = %q, want %q", n, got, w)
		}
	}
	if Default("probe") != Probe {
		t.Errorf("Default(probe) = %q changed by overrides", Default("probe"))
	}
	SetOverrides(nil)
	if Ref("probe") != Probe {
		t.Errorf("after SetOverrides(nil), Ref(probe) = %q", Ref("probe"))
	}
}

func TestOverridesImagesWinOverRegistries(t *testing.T) {
	useOverrides(t, "images:\n  probe: mirror.example.com/winconform/probe:v0.1\nregistries:\n  winconform.local: elsewhere.example.com\n")
	if got := Ref("probe"); got != "mirror.example.com/winconform/probe:v0.1" {
		t.Errorf("Ref(probe) = %q", got)
	}
}

func TestOverridesPrefixStopsAtABoundary(t *testing.T) {
	useOverrides(t, "registries:\n  mcr.microsoft.co: wrong.example.com\n  mcr.microsoft.com/windows/server: wrong.example.com\n  registry.k8s.io/pause: mirror.example.com/pause\n")
	if got := Ref("servercore"); got != Default("servercore") {
		t.Errorf("a prefix that ends inside a name rewrote servercore to %q", got)
	}
	if got := Ref("pause"); got != "mirror.example.com/pause:3.10.1" {
		t.Errorf("a prefix up to the tag: pause is %q", got)
	}
}

func TestEmptyOverridesFile(t *testing.T) {
	for _, content := range []string{"", "# nothing\n", "registries:\nimages: ~\n"} {
		useOverrides(t, content)
		if Ref("probe") != Probe {
			t.Errorf("%q: Ref(probe) = %q", content, Ref("probe"))
		}
	}
}

func TestOverridesErrors(t *testing.T) {
	cases := []struct {
		name, content string
		want          []string
	}{
		{"unknown image", "images:\n  probe: a.example.com/probe:1\n  busybox: a.example.com/busybox:1\n", []string{`:3: images[busybox]: "busybox" is not an image's name`, "the names are nanoserver"}},
		{"bad reference", "images:\n  probe: 'Mirror Example/probe'\n", []string{":2: images[probe]", `"Mirror Example/probe" is not an image reference`}},
		{"malformed YAML", "images:\n  probe: [unclosed\n", []string{"yaml: the file is not valid YAML"}},
		{"tab indent", "images:\n\tprobe: x\n", []string{"not valid YAML"}},
		{"unknown section", "image:\n  probe: a.example.com/probe:1\n", []string{`:1: image: is not a field of ImageOverrides; did you mean "images"?`}},
		{"not a mapping", "- probe\n", []string{":1: is a list, not a mapping"}},
		{"section is a list", "images:\n  - probe\n", []string{":2: images: is a list, not a mapping"}},
		{"value is a mapping", "images:\n  probe:\n    ref: x\n", []string{":3: images[probe]: is a mapping"}},
		{"value is empty", "images:\n  probe:\n", []string{":2: images[probe]: is empty"}},
		{"duplicate image", "images:\n  probe: a.example.com/probe:1\n  probe: a.example.com/probe:2\n", []string{":3: images.probe: is written twice (first at line 2)"}},
		{"duplicate section", "images: {}\nimages: {}\n", []string{":2: images: is written twice (first at line 1)"}},
		{"registry with scheme", "registries:\n  https://mcr.microsoft.com: mirror.example.com\n", []string{":2: registries[https://mcr.microsoft.com]", "has a scheme"}},
		{"registry value with slash", "registries:\n  mcr.microsoft.com: mirror.example.com/\n", []string{":2: registries[mcr.microsoft.com]", `"mirror.example.com/" ends with '/'`}},
		{"registry value bad", "registries:\n  mcr.microsoft.com: Mirror Example\n", []string{"registries[mcr.microsoft.com]", `"Mirror Example" is not a registry`}},
		{"both forms", "registries:\n  mcr.microsoft.com: mirror.example.com\ngcRegistry: mirror.example.com/k8s\n", []string{":3: gcRegistry:", "keep one form"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeOverrides(t, c.content)
			err := LoadOverrides(path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append([]string{path}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if Ref("probe") != Probe {
				t.Errorf("a rejected file changed Ref(probe) to %q", Ref("probe"))
			}
		})
	}
	if err := LoadOverrides(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestSetOverridesValidates(t *testing.T) {
	t.Cleanup(func() { SetOverrides(nil) })
	err := SetOverrides(&Overrides{Images: map[string]string{"nope": "a.example.com/x:1"}})
	if err == nil || !strings.HasPrefix(err.Error(), "image overrides: ") || !strings.Contains(err.Error(), `images[nope]: "nope" is not an image's name`) {
		t.Errorf("err = %v", err)
	}
	o := &Overrides{Images: map[string]string{"probe": "a.example.com/probe:1"}}
	if err := SetOverrides(o); err != nil {
		t.Fatal(err)
	}
	o.Images["probe"] = "changed.example.com/probe:1"
	if Ref("probe") != "a.example.com/probe:1" {
		t.Errorf("changing the Overrides after SetOverrides changed Ref: %q", Ref("probe"))
	}
}

func TestFromEnv(t *testing.T) {
	t.Cleanup(func() { SetOverrides(nil) })
	t.Setenv(OverridesEnv, "")
	t.Setenv(RepoListEnv, "")
	if loaded, err := FromEnv(); loaded || err != nil {
		t.Errorf("unset: %v, %v", loaded, err)
	}
	t.Setenv(OverridesEnv, writeOverrides(t, "images:\n  pause: mirror.example.com/pause:3.10.1\n"))
	if loaded, err := FromEnv(); !loaded || err != nil {
		t.Fatalf("set: %v, %v", loaded, err)
	}
	if Ref("pause") != "mirror.example.com/pause:3.10.1" {
		t.Errorf("Ref(pause) = %q", Ref("pause"))
	}
	bad := writeOverrides(t, "images:\n  bogus: x\n")
	t.Setenv(OverridesEnv, bad)
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), OverridesEnv) || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad file: err = %v, want one naming the variable and the file", err)
	}
}

func TestProbeArchiveUsesTheOverriddenName(t *testing.T) {
	useOverrides(t, "images:\n  probe: mirror.example.com/winconform/probe:v0.2\n")
	bin, _ := fakeBinary(t)
	archive := filepath.Join(t.TempDir(), "probe.tar")
	if err := ProbeArchive(bin, archive); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("mirror.example.com/winconform/probe:v0.2")
	if _, err := tarball.ImageFromPath(archive, &tag); err != nil {
		t.Errorf("the archive does not hold the overridden name: %v", err)
	}
}

// Upstream e2e's KUBE_TEST_REPO_LIST files (users already have them) point
// the harness's images at a mirror where a key means the same registry:
// microsoftRegistry (mcr.microsoft.com: servercore, nanoserver, the
// HostProcess base) and gcRegistry (registry.k8s.io: pause, which upstream
// also takes from gcRegistry). The other keys are upstream's images only
// (k8s.io/kubernetes v1.37.2 test/utils/image/manifest.go, RegistryList;
// microsoftRegistry from older releases, as in hydrophone's air-gapped
// guide's example file). $KUBE_TEST_REPO_LIST is read when
// $WINCONFORM_IMAGE_OVERRIDES is not set.
func TestRepoList(t *testing.T) {
	t.Cleanup(func() { SetOverrides(nil) })
	file := writeOverrides(t, `gcAuthenticatedRegistry: 127.0.0.1:5001/authenticated-image-pulling
invalidRegistry: invalid.registry.k8s.io/invalid
microsoftRegistry: 127.0.0.1:5001
dockerLibraryRegistry: 127.0.0.1:5001/library
promoterE2eRegistry: 127.0.0.1:5001/e2e-test-images
gcRegistry: 127.0.0.1:5001/k8s
`)
	t.Setenv(OverridesEnv, "")
	t.Setenv("KUBE_TEST_REPO_LIST", file)
	if loaded, err := FromEnv(); !loaded || err != nil {
		t.Fatalf("%v, %v", loaded, err)
	}
	for name, want := range map[string]string{
		"nanoserver-ltsc2022": "127.0.0.1:5001/windows/nanoserver:ltsc2022",
		"windows-hostprocess": "127.0.0.1:5001/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
		"pause":               "127.0.0.1:5001/k8s/pause:",
		"probe":               Probe,
	} {
		if got := Ref(name); !strings.HasPrefix(got, want) {
			t.Errorf("Ref(%s) = %q, want %q", name, got, want)
		}
	}
	_, err := ParseOverrides("repo-list.yaml", []byte("microsoftRegistry: 127.0.0.1:5001\nmicrosoftRegistery: x\ngcRegistry: [a]\n"))
	for _, w := range []string{"repo-list.yaml:2: microsoftRegistery: is not a field", `did you mean "microsoftRegistry"`, "repo-list.yaml:3: gcRegistry: is a list"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%v; want %q", err, w)
		}
	}
	t.Setenv("KUBE_TEST_REPO_LIST", "https://example.com/repo-list.yaml")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "download it") {
		t.Errorf("a URL: %v", err)
	}
}
