package nodeimage

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// upstreamGoMod is k8s.io/kubernetes's go.mod in the shape the Go module
// proxy serves it (k8s.io/kubernetes@v1.37.2/go.mod): the staging modules
// required at v0.0.0 and replaced with ./staging/src directories, which the
// module leaves out; a go line and a godebug default.
func upstreamGoMod(extra string) string {
	return `module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
	go.etcd.io/etcd/server/v3 v3.7.0
	k8s.io/api v0.0.0
)
` + extra + `
replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/sample-cli-plugin => ./staging/src/k8s.io/sample-cli-plugin
)
`
}

func parseGoMod(t *testing.T, content string) goModFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "go.mod")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := goOut(context.Background(), os.Stderr, filepath.Dir(path), nil, "mod", "edit", "-json", path)
	if err != nil {
		t.Fatal(err)
	}
	var m goModFile
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildModuleEdits(t *testing.T) {
	up := parseGoMod(t, upstreamGoMod("exclude github.com/bad/mod v1.2.3\n\nreplace github.com/fork/me => github.com/fork/me v1.0.1\n"))
	got, err := buildModuleEdits("v1.37.2", up)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-go=1.26.0", "-require=k8s.io/kubernetes@v1.37.2", "-godebug=default=go1.26",
		"-replace=github.com/fork/me=github.com/fork/me@v1.0.1",
		"-replace=k8s.io/api=k8s.io/api@v0.37.2",
		"-replace=k8s.io/sample-cli-plugin=k8s.io/sample-cli-plugin@v0.37.2",
		"-exclude=github.com/bad/mod@v1.2.3",
		"-tool=go.etcd.io/etcd/server/v3",
		"-tool=k8s.io/kubernetes/cmd/kube-apiserver", "-tool=k8s.io/kubernetes/cmd/kube-controller-manager",
		"-tool=k8s.io/kubernetes/cmd/kube-scheduler", "-tool=k8s.io/kubernetes/cmd/kube-proxy",
		"-tool=k8s.io/kubernetes/cmd/kubelet", "-tool=k8s.io/kubernetes/cmd/kubeadm", "-tool=k8s.io/kubernetes/cmd/kubectl",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edits =\n %q\nwant\n %q", got, want)
	}

	for _, c := range []struct{ name, gomod, version, want string }{
		{"a directory that is no staging module", upstreamGoMod("replace example.com/x => ../x\n"), "v1.37.2",
			"replaces example.com/x with the directory ../x, which is no staging module"},
		{"no staging module", "module k8s.io/kubernetes\n\ngo 1.26.0\n", "v1.37.2",
			"replaces no staging module (./staging/src/k8s.io/...): the build module's recipe no longer matches upstream"},
		{"no go line", "module k8s.io/kubernetes\n", "v1.37.2", "its go.mod has no go line"},
		{"a version that is no v1.MINOR.PATCH", upstreamGoMod(""), "v2.0", `kubernetes version "v2.0" is not v1.MINOR.PATCH`},
	} {
		if _, err := buildModuleEdits(c.version, parseGoMod(t, c.gomod)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestStagingVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.37.2": "v0.37.2", "v1.35.4": "v0.35.4", "v1.36.10": "v0.36.10",
		"v1.38.0-beta.0": "v0.38.0-beta.0", "v1.38.0-rc.1": "v0.38.0-rc.1"} {
		if got, err := stagingVersion(in); err != nil || got != want {
			t.Errorf("stagingVersion(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"1.37.2", "v1.37", "v2.0.1", "", "v1.38-beta.0", "v1.38.0-beta.0+meta"} {
		if got, err := stagingVersion(in); err == nil {
			t.Errorf("stagingVersion(%q) = %q, want an error", in, got)
		}
	}
}

// Only a line that names a Go toolchain builds with one (1.38's go1.27.3);
// the other lines, and a version of no line, build with the go on PATH, and
// their image's inputs do not change.
func TestToolchainOnlyWhereTheLineNamesOne(t *testing.T) {
	for v, want := range map[string]string{"v1.38.0-beta.0": "go1.27.3", "v1.37.2": "", "v1.35.4": "", "v1.99.0": ""} {
		env := toolchainEnv(v)
		if got := strings.TrimPrefix(strings.Join(env, ""), "GOTOOLCHAIN="); got != want {
			t.Errorf("toolchainEnv(%q) = %v, want GOTOOLCHAIN=%s", v, env, want)
		}
	}
	a, b := Spec{KubernetesVersion: "v1.38.0-beta.0"}, Spec{KubernetesVersion: "v1.37.2"}
	if a.inputs() == b.inputs() {
		t.Error("two versions, one digest")
	}
}

// moduleProxy is a Go module proxy in a directory (GOPROXY=file://...),
// serving each module as the real proxy does: an .info, the .mod and a .zip
// whose files sit under module@version/.
type moduleProxy struct {
	t   *testing.T
	dir string
}

func (p moduleProxy) add(module, version string, files map[string]string) {
	p.t.Helper()
	dir := filepath.Join(p.dir, module, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(module + "@" + version + "/" + name)
		if err != nil {
			p.t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		p.t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-10-13T00:00:00Z"}`),
		version + ".mod":  []byte(files["go.mod"]),
		version + ".zip":  buf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
	list, _ := os.ReadFile(filepath.Join(dir, "list"))
	os.WriteFile(filepath.Join(dir, "list"), append(list, version+"\n"...), 0o644)
}

const mainImportingAPI = "package main\n\nimport _ \"k8s.io/api/core\"\n\nfunc main() {}\n"

// fakeKubernetes serves a k8s.io/kubernetes at version shaped as upstream's
// (staging modules replaced with directories the module does not hold; the
// commands importing one of them), its published staging module, and the
// etcd server its graph requires; and a GOMODCACHE of the test's own.
func fakeKubernetes(t *testing.T, version string) moduleProxy {
	t.Helper()
	p := moduleProxy{t: t, dir: t.TempDir()}
	staging, _ := stagingVersion(version)
	k8s := map[string]string{"go.mod": upstreamGoMod("")}
	for _, c := range kubeCommands {
		k8s["cmd/"+c+"/main.go"] = mainImportingAPI
	}
	p.add("k8s.io/kubernetes", version, k8s)
	p.add("k8s.io/api", staging, map[string]string{
		"go.mod":       "module k8s.io/api\n\ngo 1.24\n",
		"core/core.go": "package core\n",
	})
	p.add("go.etcd.io/etcd/server/v3", "v3.7.0", map[string]string{
		"go.mod":  "module go.etcd.io/etcd/server/v3\n\ngo 1.24\n",
		"main.go": "package main\n\nfunc main() {}\n",
	})
	modcache := t.TempDir()
	t.Cleanup(func() { // the module cache is read-only
		filepath.WalkDir(modcache, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(path, 0o755)
			}
			return nil
		})
	})
	t.Setenv("GOMODCACHE", modcache)
	t.Setenv("GOPROXY", "file://"+p.dir)
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	return p
}

func TestKubeModuleBuildsFromTheModuleProxy(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	fakeKubernetes(t, "v1.37.2")
	cache := t.TempDir()
	var log bytes.Buffer
	mod, src, err := kubeModule(context.Background(), &log, cache, "v1.37.2")
	if err != nil {
		t.Fatalf("kubeModule: %v\n%s", err, log.String())
	}
	if filepath.Base(src) != "kubernetes@v1.37.2" {
		t.Errorf("source = %s", src)
	}
	if !strings.HasPrefix(mod, filepath.Join(cache, "mod", "kubernetes-v1.37.2-")) {
		t.Errorf("module dir = %s", mod)
	}
	gomod, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
	for _, want := range []string{
		"module " + kubeModulePath, "go 1.26.0", "godebug default=go1.26",
		"k8s.io/kubernetes v1.37.2", "k8s.io/api => k8s.io/api v0.37.2", "tool (",
	} {
		if !strings.Contains(string(gomod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}
	if sum, err := os.ReadFile(filepath.Join(mod, "go.sum")); err != nil || !strings.Contains(string(sum), "k8s.io/api v0.37.2 h1:") {
		t.Errorf("go.sum = %q, %v", sum, err)
	}
	// What the node image builds, it builds from there.
	out := t.TempDir()
	args := []string{"build", "-o", out + "/"}
	args = append(args, buildTools()...)
	if err := goRun(mod, args...); err != nil {
		t.Fatalf("go build of the tools in the build module: %v", err)
	}
	for _, c := range append([]string{"server"}, kubeCommands...) {
		if _, err := os.Stat(filepath.Join(out, c)); err != nil {
			t.Error(err)
		}
	}

	// Cached: a second call writes nothing and needs no proxy.
	t.Setenv("GOPROXY", "off")
	again, _, err := kubeModule(context.Background(), &log, cache, "v1.37.2")
	if err != nil || again != mod {
		t.Errorf("second kubeModule = %q, %v; want %q", again, err, mod)
	}

	// A version the proxy does not serve: its words.
	t.Setenv("GOPROXY", "file://"+t.TempDir())
	if _, _, err := kubeModule(context.Background(), &log, cache, "v1.37.9"); err == nil || !strings.Contains(err.Error(), "k8s.io/kubernetes@v1.37.9") {
		t.Errorf("unserved version: %v", err)
	}
}

func TestHostTools(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	p := fakeKubernetes(t, "v1.37.2")
	p.add("sigs.k8s.io/kind", KindVersion(), map[string]string{
		"go.mod":  "module sigs.k8s.io/kind\n\ngo 1.24\n",
		"main.go": "package main\n\nfunc main() {}\n",
	})
	cache := t.TempDir()
	// A line's name stands for its default patch.
	kindBin, kubectl, err := HostTools(context.Background(), cache, "1.37", nil)
	if err != nil {
		t.Fatalf("HostTools: %v", err)
	}
	if filepath.Base(kindBin) != "kind" || filepath.Base(filepath.Dir(kindBin)) != "kind-"+KindVersion() {
		t.Errorf("kind = %s", kindBin)
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(kubectl)), "kubectl-kubernetes-v1.37.2-") {
		t.Errorf("kubectl = %s", kubectl)
	}
	for _, b := range []string{kindBin, kubectl} {
		if fi, err := os.Stat(b); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v", b, err)
		}
	}
	if _, _, err := HostTools(context.Background(), cache, "v1.34.4", nil); err == nil || !strings.Contains(err.Error(), "the supported lines are") {
		t.Errorf("a line the harness does not support: %v", err)
	}
}

func goRun(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// The node image carries the base files of the kind the harness creates
// clusters with: the sigs.k8s.io/kind its go.mod requires.
func TestKindVersion(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	out, err := goOut(context.Background(), os.Stderr, ".", nil, "mod", "edit", "-json", "../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Require {
		if r.Path == "sigs.k8s.io/kind" {
			if KindVersion() != r.Version {
				t.Errorf("KindVersion() = %q, go.mod requires %s", KindVersion(), r.Version)
			}
			return
		}
	}
	t.Errorf("go.mod requires no sigs.k8s.io/kind:\n%s", data)
}

// A build module whose graph names modules the proxy refuses fails naming
// each once: the go command's output of the 1.38 pre-release's tidy here.
func TestRefusedModules(t *testing.T) {
	out := `go: downloading go1.27.3 (linux/amd64)
go: k8s.io/kubernetes/cmd/kube-apiserver imports
	k8s.io/apiextensions-api/pkg/apis/apiextensions: k8s.io/apiextensions-api@v0.38.0-beta.0: reading https://modules.example/k8s.io/apiextensions-api/@v/v0.38.0-beta.0.zip: 403 Forbidden
	server response: This module version is not available.
go: k8s.io/kubernetes/cmd/kubectl imports
	sigs.k8s.io/structured-merge-diff/v7/schema: sigs.k8s.io/structured-merge-diff/v7@v7.0.1: reading https://modules.example/sigs.k8s.io/structured-merge-diff/v7/@v/v7.0.1.zip: 403 Forbidden
go: k8s.io/kubernetes/cmd/kube-controller-manager imports
	k8s.io/apiextensions-api/pkg/client: k8s.io/apiextensions-api@v0.38.0-beta.0: reading https://modules.example/k8s.io/apiextensions-api/@v/v0.38.0-beta.0.zip: 403 Forbidden
go: finding module for package k8s.io/ktesting/initoption: reading https://modules.example/k8s.io/ktesting/@v/v0.38.0-beta.0.mod: 404 Not Found
go: k8s.io/api@v0.38.0-beta.0: reading https://modules.example/k8s.io/api/@v/v0.38.0-beta.0.zip: 500 Internal Server Error
`
	got := refusedModules(out)
	want := []string{"k8s.io/apiextensions-api@v0.38.0-beta.0", "k8s.io/ktesting@v0.38.0-beta.0", "sigs.k8s.io/structured-merge-diff/v7@v7.0.1"}
	if !slices.Equal(got, want) {
		t.Errorf("refusedModules = %v, want %v", got, want)
	}
	if got := refusedModules("go: some other failure\n"); len(got) != 0 {
		t.Errorf("no refusal: %v", got)
	}
}
