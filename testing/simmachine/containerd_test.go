package simmachine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/steptest"
	"github.com/winconform/winconform/testing/upstream"
)

// The files below are what the join's containerd step writes: containerd
// 1.7's `containerd config default` (version 2) and containerd 2.3's
// (version 4) with the sandbox image and the CNI directories set, and what
// the step wrote before it knew containerd 2's tables: every line named
// bin_dir, bin_dirs, sandbox or conf_dir rewritten, wherever it was. On
// containerd 2.3.7's default that set the deprecated bin_dir beside
// bin_dirs and the image verifier's bin_dir too. Run here with a
// containerd v2.3.7 built from its module (on Linux; the loading code is
// the same on Windows), that file left the CRI unloaded:
//
//	level=warning msg="failed to load plugin" error="invalid plugin config:
//	`cni.bin_dir` and `cni.bin_dirs` cannot be set at the same time"
//	id=io.containerd.cri.v1.runtime
//	level=warning msg="failed to load plugin" error="unable to load CRI
//	runtime service plugin dependency: ..." id=io.containerd.grpc.v1.cri
//
// and `containerd config migrate` of a version 2 file printed
// "Configuration migrated from version 2" with sandbox_image as
// pinned_images.sandbox and bin_dir as bin_dirs; of a version 4 file with
// a 1.7 sandbox_image, "Ignoring unknown key in TOML for plugin" and the
// default pause:3.10.2. The sources are cited in containerd.go.
const (
	file17 = `version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = 'registry.k8s.io/pause:3.10.1'

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = 'C:\opt\cni\bin'
  conf_dir = 'C:\etc\cni\net.d'
`
	file23 = `version = 4

[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = 'registry.k8s.io/pause:3.10.1'

[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ['C:\opt\cni\bin']
  conf_dir = 'C:\etc\cni\net.d'
`
	// fileOldStep23 is what the step wrote from 2.3's default before.
	fileOldStep23 = `version = 4

[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = 'registry.k8s.io/pause:3.10.1'

[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dir = 'C:\opt\cni\bin'
  bin_dirs = ['C:\opt\cni\bin']
  conf_dir = 'C:\etc\cni\net.d'

[plugins.'io.containerd.image-verifier.v1.bindir']
  bin_dir = 'C:\opt\cni\bin'
`
	file20 = `version = 3

[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = 'registry.k8s.io/pause:3.10.1'

[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dir = 'C:\opt\cni\bin'
  conf_dir = 'C:\etc\cni\net.d'
`
	// file23With17Keys is a 2.x file with 1.7's keys written into it.
	file23With17Keys = `version = 4

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = 'registry.k8s.io/pause:3.10.1'

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = 'C:\opt\cni\bin'
`
)

func TestContainerdReadsItsConfigAsItsVersionDoes(t *testing.T) {
	const path = `C:\Program Files\containerd\config.toml`
	want := func(sandbox string, bin ...string) containerdView {
		return containerdView{Sandbox: sandbox, CNIBinDirs: bin, CNIConfDir: `C:\etc\cni\net.d`}
	}
	for _, tc := range []struct {
		name, version, file string
		want                containerdView
		noStart, noCRI      string // the error's text, when containerd refuses
	}{
		{name: "1.7 reads its own file", version: "1.7.28", file: file17,
			want: want("registry.k8s.io/pause:3.10.1", `C:\opt\cni\bin`)},
		{name: "1.7 does not start with a version 4 file", version: "1.7.28", file: file23,
			noStart: "containerd: failed to load TOML from " + path + ": unsupported config version `4`"},
		{name: "2.3 migrates a 1.7 file as it loads it", version: "2.3.7", file: file17,
			want: containerdView{Sandbox: "registry.k8s.io/pause:3.10.1", CNIBinDirs: []string{`C:\opt\cni\bin`}, CNIConfDir: `C:\etc\cni\net.d`,
				VerifierDir: defaultVerifierDir, Migrated: true}},
		{name: "2.3 reads its own file", version: "2.3.7", file: file23,
			want: containerdView{Sandbox: "registry.k8s.io/pause:3.10.1", CNIBinDirs: []string{`C:\opt\cni\bin`}, CNIConfDir: `C:\etc\cni\net.d`,
				VerifierDir: defaultVerifierDir}},
		{name: "2.3 runs without its CRI when bin_dir and bin_dirs are both set", version: "2.3.7", file: fileOldStep23,
			noCRI: "`cni.bin_dir` and `cni.bin_dirs` cannot be set at the same time"},
		{name: "2.2 does not start with a version 4 file", version: "2.2.9", file: file23,
			noStart: "expected containerd config version equal to or less than `3`, got `4`"},
		{name: "2.0 reads bin_dir", version: "2.0.14", file: file20,
			want: containerdView{Sandbox: "registry.k8s.io/pause:3.10.1", CNIBinDirs: []string{`C:\opt\cni\bin`}, CNIConfDir: `C:\etc\cni\net.d`,
				VerifierDir: defaultVerifierDir}},
		{name: "2.4 ignores bin_dir, which it no longer has", version: "2.4.2", file: fileOldStep23,
			want: containerdView{Sandbox: "registry.k8s.io/pause:3.10.1", CNIBinDirs: []string{`C:\opt\cni\bin`}, CNIConfDir: `C:\etc\cni\net.d`,
				VerifierDir: `C:\opt\cni\bin`}},
		{name: "2.3 ignores 1.7's keys in a file of its own version", version: "2.3.7", file: file23With17Keys,
			want: containerdView{Sandbox: "registry.k8s.io/pause:3.10.2", CNIBinDirs: []string{`C:\Program Files\containerd\cni\bin`},
				CNIConfDir: `C:\Program Files\containerd\cni\conf`, VerifierDir: defaultVerifierDir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := steptest.ParseContainerdConfig(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := containerdReads(tc.version, path, cfg)
			var noStart *errNoStart
			var noCRI *errNoCRI
			switch {
			case tc.noStart != "":
				if !errors.As(err, &noStart) || !strings.Contains(err.Error(), tc.noStart) {
					t.Fatalf("err = %v, want containerd not to start: %s", err, tc.noStart)
				}
			case tc.noCRI != "":
				if !errors.As(err, &noCRI) || !strings.Contains(err.Error(), tc.noCRI) {
					t.Fatalf("err = %v, want containerd without its CRI: %s", err, tc.noCRI)
				}
			case err != nil:
				t.Fatal(err)
			case got.Sandbox != tc.want.Sandbox || !slices.Equal(got.CNIBinDirs, tc.want.CNIBinDirs) || got.CNIConfDir != tc.want.CNIConfDir ||
				got.VerifierDir != tc.want.VerifierDir || got.Migrated != tc.want.Migrated:
				t.Fatalf("containerd %s reads %+v, want %+v", tc.version, got, tc.want)
			}
		})
	}
}

// A node whose containerd 2 runs without its CRI fails kubeadm join's
// preflight, and runs no pod.
func TestSimulatedContainerdWithoutCRI(t *testing.T) {
	m := New(Config{ContainersInstalled: true})
	m.SetFact(`file:C:\Program Files\containerd\containerd.exe`, "2.3.7")
	m.SetFact(`file:C:\Program Files\containerd\config.toml`, fileOldStep23)
	m.SetFact("service:containerd", "Automatic/Running")
	err := m.StartPod()
	var perr *PodError
	if !errors.As(err, &perr) || !strings.Contains(perr.Message, "unknown service runtime.v1.RuntimeService") {
		t.Fatalf("StartPod = %v, want the CRI missing", err)
	}
	m.mu.Lock()
	cri := m.criForKubeadm()
	m.mu.Unlock()
	if !strings.Contains(cri, "unknown service runtime.v1.RuntimeService") {
		t.Errorf("kubeadm's CRI check got %q", cri)
	}
	m.SetFact(`file:C:\Program Files\containerd\config.toml`, file23)
	if err := m.StartPod(); err != nil {
		t.Errorf("with containerd 2.3's own file: %v", err)
	}
}

// Every case of the containerd step's data that leaves containerd running
// leaves a configuration which the containerd it installed reads as the
// join wants: the sandbox image asked for, the CNI's plugins and
// configuration where the join puts them, and the image verifier not
// pointed at the CNI's plugins (it runs every program of its directory on
// each pull). The data is what the script does (its Pester tests run it on
// Windows against the same cases); this is what containerd makes of it,
// with the configuration the harness gives each case's version
// (nodeconfig), unless the case names its own.
func TestContainerdStepDataIsWhatContainerdReads(t *testing.T) {
	data, err := steptest.Load("containerd")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]bool{}
	for _, c := range data.Cases {
		p, err := ContainerdStepParams(data, c)
		if err != nil {
			t.Fatalf("case %q: %v", c.Name, err)
		}
		given, err := steptest.ParseContainerdConfig(p["Config"])
		if err != nil {
			t.Fatalf("case %q: %v", c.Name, err)
		}
		sandbox, _ := given.Str("cri.v1.images.pinned_images.sandbox")
		if s, ok := given.Str("grpc.v1.cri.sandbox_image"); ok {
			sandbox = s
		}
		after := map[string]string{}
		for _, m := range []map[string]string{c.Given, c.Sets} {
			e, err := steptest.ExpandMap(m, p, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range e {
				after[k] = v
			}
		}
		dir := p["InstallDir"]
		cfgFact, version := after["file:"+dir+`\config.toml`], after["file:"+dir+`\containerd.exe`]
		if c.Error != "" || after["service:containerd"] != "Automatic/Running" || cfgFact == "" {
			continue
		}
		versions[version] = true
		cfg, err := steptest.ParseContainerdConfig(cfgFact)
		if err != nil {
			t.Errorf("case %q: %v", c.Name, err)
			continue
		}
		got, err := containerdReads(version, dir+`\config.toml`, cfg)
		switch {
		case err != nil:
			t.Errorf("case %q leaves containerd %s with a configuration it does not run with: %v", c.Name, version, err)
		case got.Sandbox != sandbox || !slices.Equal(got.CNIBinDirs, []string{p["CNIBinDir"]}) || got.CNIConfDir != p["CNIConfDir"]:
			t.Errorf("case %q: containerd %s reads sandbox %q, CNI %v and %q; want %q, [%s] and %q",
				c.Name, version, got.Sandbox, got.CNIBinDirs, got.CNIConfDir, sandbox, p["CNIBinDir"], p["CNIConfDir"])
		case got.VerifierDir == p["CNIBinDir"]:
			t.Errorf("case %q: containerd %s's image verifier runs the CNI's plugins on every pull", c.Name, version)
		}
	}
	for _, v := range []string{"1.7.28", "2.2.9", "2.3.7", "2.4.2"} {
		if !versions[v] {
			t.Errorf("no case leaves containerd %s running: the data does not show its configuration", v)
		}
	}
}

// The model above is held to containerd itself: each file of the table,
// and more, is read by the model and by that containerd's own binary
// (built from its module, started with the file: upstream.LoadContainerdConfig),
// and the two must agree on whether containerd starts, whether it serves
// its CRI, whether it migrated the file, and on every value the file sets.
// A value the file leaves to containerd's defaults differs between the
// Linux build that runs here and the Windows one the model knows (the CNI's
// and the image verifier's directories): there, both must say "default".
func TestTheContainerdModelIsContainerds(t *testing.T) {
	switch {
	case runtime.GOOS != "linux":
		t.Skip("containerd's Linux build judges the model: on Linux only")
	case os.Getenv("CI") != "":
	case testing.Short():
		t.Skip("builds containerd from its module: not in a short run")
	case os.Geteuid() != 0:
		t.Skip("starts containerd, which takes root")
	}
	fileBinDirOnly := strings.Replace(file23, "  bin_dirs = ['C:\\opt\\cni\\bin']\n", "  bin_dir = 'C:\\other\\bin'\n", 1)
	fileVerifier := file23 + "\n[plugins.'io.containerd.image-verifier.v1.bindir']\n  bin_dir = 'C:\\verifiers'\n"
	cases := []struct{ version, file string }{
		{"1.7.28", file17}, {"1.7.28", file23}, {"1.7.28", strings.Replace(file23, "version = 4", "version = 3", 1)},
		{"2.3.7", file17}, {"2.3.7", file23}, {"2.3.7", fileOldStep23}, {"2.3.7", file23With17Keys}, {"2.3.7", fileBinDirOnly}, {"2.3.7", fileVerifier},
		{"2.2.9", file17}, {"2.2.9", file23}, {"2.2.9", strings.Replace(file23, "version = 4", "version = 3", 1)}, {"2.2.9", fileOldStep23},
		{"2.4.2", file23}, {"2.4.2", fileOldStep23}, {"2.4.2", fileBinDirOnly}, {"2.4.2", file17},
	}
	ctx := context.Background()
	baseline := map[string]upstream.ContainerdResult{}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%s", c.version, strings.ReplaceAll(strings.SplitN(c.file, "\n", 2)[0], " ", ""))
		t.Run(name, func(t *testing.T) {
			base, ok := baseline[c.version]
			if !ok {
				var err error
				if base, err = upstream.LoadContainerdConfig(ctx, c.version, nil); err != nil || base.Refused != "" || base.NoCRI != "" {
					t.Fatalf("containerd %s without a file: %v %s %s", c.version, err, base.Refused, base.NoCRI)
				}
				baseline[c.version] = base
			}
			real, err := upstream.LoadContainerdConfig(ctx, c.version, []byte(c.file))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := steptest.ParseContainerdConfig(c.file)
			if err != nil {
				t.Fatal(err)
			}
			v, _ := parseContainerdVersion(c.version)
			model, merr := containerdReads(c.version, `C:\Program Files\containerd\config.toml`, cfg)
			var noStart *errNoStart
			var noCRI *errNoCRI
			if got, want := errors.As(merr, &noStart), real.Refused != ""; got != want {
				t.Fatalf("the model says containerd %s starts: %v (%v); containerd: %v (%s)", c.version, !got, merr, !want, real.Refused)
			}
			if got, want := errors.As(merr, &noCRI), real.NoCRI != ""; got != want {
				t.Fatalf("the model says containerd %s serves its CRI: %v (%v); containerd: %v (%s)", c.version, !got, merr, !want, real.NoCRI)
			}
			if merr != nil {
				return
			}
			if model.Migrated != real.Migrated() {
				t.Errorf("migrated: the model says %v, containerd %v (%v)", model.Migrated, real.Migrated(), real.Warnings)
			}
			same := func(what string, modelValue, modelDefault, realValue, realDefault any) {
				t.Helper()
				md, rd := reflect.DeepEqual(modelValue, modelDefault), reflect.DeepEqual(realValue, realDefault)
				switch {
				case md != rd:
					t.Errorf("%s: the model says %v (default: %v), containerd %v (default: %v)", what, modelValue, md, realValue, rd)
				case !md && !reflect.DeepEqual(modelValue, realValue):
					t.Errorf("%s: the model says %v, containerd %v", what, modelValue, realValue)
				}
			}
			same("the sandbox image", model.Sandbox, v.defaultSandbox(), real.SandboxImage(c.version), base.SandboxImage(c.version))
			same("the CNI's binaries", model.CNIBinDirs, []string{defaultCNIBinDir}, real.CNIBinDirs, base.CNIBinDirs)
			same("the CNI's configuration", model.CNIConfDir, defaultCNIConfDir, real.CNIConfDir, base.CNIConfDir)
			if v.major >= 2 {
				same("the image verifier's directory", model.VerifierDir, defaultVerifierDir, real.VerifierDir(), base.VerifierDir())
			}
		})
	}
}
