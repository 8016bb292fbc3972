package cni

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo puts a go command on PATH that records its arguments and GOBIN and
// "installs" a binary named after the package into GOBIN.
func fakeGo(t *testing.T) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "go.log")
	script := `#!/bin/sh
echo "$* GOBIN=$GOBIN CGO_ENABLED=$CGO_ENABLED" >> '` + log + `'
for a in "$@"; do pkg=$a; done
pkg=${pkg%@*}
echo binary > "$GOBIN/${pkg##*/}"
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func TestBuildPluginsInstallsOncePerVersion(t *testing.T) {
	log := fakeGo(t)
	bin := filepath.Join(t.TempDir(), "bin")
	paths, err := BuildPlugins(context.Background(), nil, bin)
	if err != nil {
		t.Fatalf("BuildPlugins: %v", err)
	}
	for _, name := range []string{"flannel", "bridge"} {
		want := filepath.Join(bin, "cni-"+name+"-"+PluginsVersion, name)
		if paths[name] != want {
			t.Errorf("%s at %q, want %q", name, paths[name], want)
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("%s not installed: %v", name, err)
		}
		if _, err := os.Stat(filepath.Dir(want) + ".tmp"); !os.IsNotExist(err) {
			t.Errorf("temporary directory of %s left behind", name)
		}
	}
	if len(paths) != 2 {
		t.Errorf("paths = %v", paths)
	}
	data, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(calls) != 2 {
		t.Fatalf("go ran %d times: %q", len(calls), calls)
	}
	for _, want := range []string{
		"install -ldflags -s -w github.com/containernetworking/plugins/plugins/meta/flannel@" + PluginsVersion,
		"install -ldflags -s -w github.com/containernetworking/plugins/plugins/main/bridge@" + PluginsVersion,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("go was not asked to %q: %q", want, calls)
		}
	}
	if !strings.Contains(calls[0], "CGO_ENABLED=0") {
		t.Errorf("plugins not built static: %q", calls[0])
	}

	// A second build with the plugins present runs nothing.
	if _, err := BuildPlugins(context.Background(), nil, bin); err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(log)
	if string(data2) != string(data) {
		t.Errorf("plugins rebuilt although present:\n%s", data2)
	}
}

func TestBuildPluginsFailure(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'go: module lookup disabled by GOPROXY=off' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	bin := filepath.Join(t.TempDir(), "bin")
	paths, err := BuildPlugins(context.Background(), nil, bin)
	if err == nil {
		t.Fatalf("BuildPlugins = %v with a failing go", paths)
	}
	if !strings.Contains(err.Error(), "module lookup disabled") {
		t.Errorf("error %q does not carry go's output", err)
	}
	entries, _ := os.ReadDir(bin)
	if len(entries) != 0 {
		t.Errorf("a failed build left %v", entries)
	}
}
