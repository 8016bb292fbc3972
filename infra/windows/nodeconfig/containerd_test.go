package nodeconfig_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/upstream"
)

const pause = "registry.k8s.io/pause:3.10.1"

// judgedContainerd are the containerd releases whose own binary judges the
// configuration the join writes: the newest patch of every line a
// Kubernetes line the harness supports pairs with, and the releases the
// harness names itself (the default, and 1.7's).
func judgedContainerd() []string {
	var out []string
	for _, v := range append(kubelines.NewestContainerd(), kubelines.DefaultContainerd, kubelines.Containerd17) {
		if kubelines.SupportedByALine(v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// needContainerd skips where containerd's judges cannot run: they build
// containerd for Linux from its module (through the Go module proxy, once)
// and start it, which takes root. Under CI=true on Linux they must run.
func needContainerd(t *testing.T) {
	t.Helper()
	switch {
	case runtime.GOOS != "linux":
		t.Skip("containerd's judges run its Linux build (the loader is the same code): on Linux only")
	case os.Getenv("CI") != "":
	case testing.Short():
		t.Skip("builds containerd from its module: not in a short run")
	case os.Geteuid() != 0:
		t.Skip("starts containerd, which takes root")
	}
}

// Each containerd the join may install runs with what the join sets: its
// own binary's config dump has every key the file sets, at the same place,
// and it warns of nothing (a key it ignores would be a warning).
func TestContainerdRunsWithTheJoinsConfiguration(t *testing.T) {
	needContainerd(t)
	versions := judgedContainerd()
	if len(versions) < 4 {
		t.Fatalf("only %v to judge with", versions)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cfg, err := nodeconfig.Containerd{Version: v, SandboxImage: pause}.ConfigTOML()
			if err != nil {
				t.Fatal(err)
			}
			res, err := upstream.CheckContainerdConfig(context.Background(), v, cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, cfg)
			}
			if len(res.Warnings) > 0 {
				t.Errorf("containerd %s warned: %s", v, strings.Join(res.Warnings, "; "))
			}
			if !slices.Equal(res.CNIBinDirs, []string{nodeconfig.CNIBinDir}) || res.CNIConfDir != nodeconfig.CNIConfDir {
				t.Errorf("containerd %s's CRI looks for the CNI in %v and %q, want [%s] and %q", v, res.CNIBinDirs, res.CNIConfDir, nodeconfig.CNIBinDir, nodeconfig.CNIConfDir)
			}
			if got := res.SandboxImage(v); got != pause {
				t.Errorf("containerd %s's CRI runs pods with the sandbox image %q, want %q", v, got, pause)
			}
		})
	}
}

// The judge refuses what containerd would not run with: a key in a table
// this version does not read it from, a key it does not know, and a
// configuration version newer than its own.
func TestContainerdRefusesBrokenConfiguration(t *testing.T) {
	needContainerd(t)
	v4, err := nodeconfig.Containerd{Version: kubelines.DefaultContainerd, SandboxImage: pause}.ConfigTOML()
	if err != nil {
		t.Fatal(err)
	}
	v2, err := nodeconfig.Containerd{Version: kubelines.Containerd17, SandboxImage: pause}.ConfigTOML()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, version, config, want string
	}{
		{"a key containerd does not know", kubelines.DefaultContainerd,
			strings.Replace(string(v4), "  conf_dir = ", "  conf_dirs = ", 1), "conf_dirs"},
		{"bin_dir beside bin_dirs", kubelines.DefaultContainerd,
			strings.Replace(string(v4), "  conf_dir = ", "  bin_dir = 'C:\\opt\\cni\\bin'\n  conf_dir = ", 1), "without its CRI"},
		{"containerd 2's file for containerd 1.7", kubelines.Containerd17, string(v4), "refuses"},
		{"containerd 2's tables in a version 2 file", kubelines.Containerd17,
			strings.Replace(string(v4), "version = 4", "version = 2", 1), "io.containerd.cri.v1"},
		{"containerd 1.7's file, key renamed", kubelines.Containerd17,
			strings.Replace(string(v2), "sandbox_image", "sandbox", 1), "sandbox"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := upstream.CheckContainerdConfig(context.Background(), c.version, []byte(c.config))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("containerd's judgement: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// A sandbox image under a key containerd 2 keeps but does not read (1.7's
// name in 2's pinned images, which is a map) passes containerd's load and
// its CRI; the sandbox image it runs pods with is then its default, which
// the check above sees.
func TestSandboxImageUnderAnotherKeyIsSeen(t *testing.T) {
	needContainerd(t)
	v4, err := nodeconfig.Containerd{Version: kubelines.DefaultContainerd, SandboxImage: pause}.ConfigTOML()
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(string(v4), "  sandbox = ", "  sandbox_image = ", 1)
	res, err := upstream.CheckContainerdConfig(context.Background(), kubelines.DefaultContainerd, []byte(wrong))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.SandboxImage(kubelines.DefaultContainerd); got == pause || got == "" {
		t.Errorf("the sandbox image under sandbox_image: containerd runs pods with %q", got)
	}
}

// The join writes no configuration for a containerd it would not install.
func TestContainerdConfigRefusesWhatTheJoinDoesNotInstall(t *testing.T) {
	for _, v := range []string{"2.0.14", "1.6.36", "3.0.0", "2.3", "latest", ""} {
		if _, err := (nodeconfig.Containerd{Version: v, SandboxImage: pause}).ConfigTOML(); err == nil {
			t.Errorf("containerd %q: a configuration was written", v)
		}
	}
	if _, err := (nodeconfig.Containerd{Version: "2.3.7", SandboxImage: "it's"}).ConfigTOML(); err == nil {
		t.Error("a sandbox image with a quote went into a TOML literal string")
	}
}
