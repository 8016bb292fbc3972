package simmachine

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/steptest"
)

// What each containerd reads from its config.toml on Windows, as its
// sources say (containerd/containerd v1.7.28, and v2.0.0 to v2.4.2, the
// v2.3.7 and v2.4.2 modules of the Go module cache; the migration and the
// refusal of both CNI keys were also run here with a containerd v2.3.7
// built from that module, on Linux: the code is the same on Windows, only
// the defaults differ):
//
//   - containerd 1.7 reads config versions 1 and 2 and refuses a newer one:
//     services/server/config/config.go, ValidateV2, "unsupported config
//     version `3`", which LoadConfig returns, and containerd does not start
//     (cmd/containerd/command/main.go loads the file before it even
//     registers the service). Its CRI plugin, io.containerd.grpc.v1.cri,
//     reads sandbox_image and its cni table's bin_dir and conf_dir
//     (pkg/cri/config/config.go); keys it does not know it ignores (go-toml
//     v1's Tree.Unmarshal). Its Windows defaults: pause:3.8 and
//     %ProgramFiles%\containerd\cni\bin and \conf (config_windows.go).
//   - containerd 2 reads versions up to version.ConfigVersion (3 from 2.0,
//     4 from 2.3) and refuses a newer one ("expected containerd config
//     version equal to or less than `3`, got `4`", cmd/containerd/server/
//     config ValidateVersion). An older file it migrates as it loads it,
//     each plugin's ConfigMigration run once per version below its own
//     (LoadConfigWithPlugins), with the warning "Configuration migrated
//     from version 2, use `containerd config migrate` to avoid migration":
//     the CRI image service (plugins/cri/images) takes the old CRI
//     plugin's sandbox_image as pinned_images.sandbox, the CRI runtime
//     (plugins/cri/runtime) its cni table, bin_dir becoming bin_dirs from
//     2.1 on. Keys it does not know it ignores, with "Ignoring unknown key
//     in TOML for plugin" (config.Decode): a 1.7 key in a file of its own
//     version does nothing.
//   - The CNI's binaries: containerd 2.0 has bin_dir only; 2.1 to 2.3 add
//     bin_dirs and keep bin_dir, deprecated, and refuse both set at once
//     (internal/cri/config ValidateRuntimeConfig, "`cni.bin_dir` and
//     `cni.bin_dirs` cannot be set at the same time"; a bin_dir beside the
//     default bin_dirs wins): the CRI runtime plugin then fails to load, and
//     with it the CRI (io.containerd.grpc.v1.cri), while containerd runs on;
//     2.4 dropped bin_dir (an unknown key).
//   - containerd 2's image verifier (plugins/imageverifier, bindir) has a
//     bin_dir of its own, %ProgramData%\containerd\root\opt\image-verifier\bin,
//     whose programs it runs on every image pull.
//
// The defaults of `containerd config default` the Pester fakes answer with
// (StepTest.ps1, Get-FakeContainerdConfig) are the same.

// containerdVersion is a containerd release, major.minor.patch.
type containerdVersion struct{ major, minor, patch int }

var containerdVersionText = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)$`)

func parseContainerdVersion(s string) (containerdVersion, error) {
	m := containerdVersionText.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return containerdVersion{}, fmt.Errorf("%q is no containerd version", s)
	}
	var v containerdVersion
	v.major, _ = strconv.Atoi(m[1])
	v.minor, _ = strconv.Atoi(m[2])
	v.patch, _ = strconv.Atoi(m[3])
	return v, nil
}

func (v containerdVersion) atLeast(major, minor int) bool {
	return v.major > major || v.major == major && v.minor >= minor
}

// configVersion is the newest config version v reads (and writes).
func (v containerdVersion) configVersion() int {
	switch {
	case v.major < 2:
		return 2
	case v.atLeast(2, 3):
		return 4
	}
	return 3
}

// The Windows defaults of the keys the join sets.
const (
	defaultCNIBinDir   = `C:\Program Files\containerd\cni\bin`
	defaultCNIConfDir  = `C:\Program Files\containerd\cni\conf`
	defaultVerifierDir = `C:\ProgramData\containerd\root\opt\image-verifier\bin`
)

func (v containerdVersion) defaultSandbox() string {
	switch {
	case v.major < 2:
		return "registry.k8s.io/pause:3.8"
	case v.atLeast(2, 3):
		return "registry.k8s.io/pause:3.10.2"
	case v.atLeast(2, 2):
		return "registry.k8s.io/pause:3.10.1"
	}
	return "registry.k8s.io/pause:3.10"
}

// containerdView is what a running containerd took from its configuration.
type containerdView struct {
	// Sandbox is the sandbox (pause) image of every pod.
	Sandbox string
	// CNIBinDirs and CNIConfDir are where the CRI looks for the CNI's
	// plugins and its configuration.
	CNIBinDirs []string
	CNIConfDir string
	// VerifierDir is the image verifier's directory ("" for none: 1.7).
	VerifierDir string
	// Migrated says that containerd migrated an older file as it loaded it.
	Migrated bool
}

// errNoStart is a configuration containerd does not start with; errNoCRI
// one it starts with, without its CRI (the kubelet's runtime service).
type (
	errNoStart struct{ msg string }
	errNoCRI   struct{ msg string }
)

func (e *errNoStart) Error() string { return e.msg }
func (e *errNoCRI) Error() string   { return e.msg }

// containerdReads is what containerd of version reads from the config file
// at path: a *errNoStart when it does not start, a *errNoCRI when it runs
// without the CRI.
func containerdReads(version, path string, cfg steptest.ContainerdConfig) (containerdView, error) {
	v, err := parseContainerdVersion(version)
	if err != nil {
		return containerdView{}, &errNoStart{msg: fmt.Sprintf("%s: %v", path, err)}
	}
	max := v.configVersion()
	if cfg.Version > max {
		msg := fmt.Sprintf("failed to load TOML from %s: expected containerd config version equal to or less than `%d`, got `%d`", path, max, cfg.Version)
		if v.major < 2 {
			msg = fmt.Sprintf("failed to load TOML from %s: unsupported config version `%d`", path, cfg.Version)
		}
		return containerdView{}, &errNoStart{msg: "containerd: " + msg}
	}
	if cfg.Version < 2 {
		// Version 1 named plugins by their short IDs; the join never
		// writes it, and the model does not read it.
		return containerdView{}, &errNoStart{msg: fmt.Sprintf("%s: config version %d is not modelled", path, cfg.Version)}
	}
	str := func(key, def string) string {
		if s, ok := cfg.Str(key); ok {
			return s
		}
		return def
	}
	if v.major < 2 {
		return containerdView{
			Sandbox:    str("grpc.v1.cri.sandbox_image", v.defaultSandbox()),
			CNIBinDirs: []string{str("grpc.v1.cri.cni.bin_dir", defaultCNIBinDir)},
			CNIConfDir: str("grpc.v1.cri.cni.conf_dir", defaultCNIConfDir),
		}, nil
	}
	keys := cfg.Keys
	view := containerdView{VerifierDir: defaultVerifierDir, Migrated: cfg.Version < max}
	if view.Migrated {
		keys = migrate(v, cfg.Keys)
	}
	read := steptest.ContainerdConfig{Version: max, Keys: keys}
	get := func(key, def string) string {
		if s, ok := read.Str(key); ok {
			return s
		}
		return def
	}
	view.Sandbox = get("cri.v1.images.pinned_images.sandbox", v.defaultSandbox())
	view.CNIConfDir = get("cri.v1.runtime.cni.conf_dir", defaultCNIConfDir)
	view.VerifierDir = get("image-verifier.v1.bindir.bin_dir", defaultVerifierDir)
	binDir := get("cri.v1.runtime.cni.bin_dir", "")
	if !v.atLeast(2, 1) {
		view.CNIBinDirs = []string{get("cri.v1.runtime.cni.bin_dir", defaultCNIBinDir)}
		return view, nil
	}
	binDirs, ok := read.List("cri.v1.runtime.cni.bin_dirs")
	if !ok {
		binDirs = []string{defaultCNIBinDir}
	}
	if v.atLeast(2, 4) {
		binDir = "" // no such key any more
	}
	if binDir != "" {
		if slices.Equal(binDirs, []string{defaultCNIBinDir}) {
			binDirs = nil
		}
		if len(binDirs) == 0 {
			binDirs, binDir = []string{binDir}, ""
		}
	}
	if len(binDirs) > 0 && binDir != "" {
		return view, &errNoCRI{msg: "failed to load plugin io.containerd.cri.v1.runtime: invalid plugin config: `cni.bin_dir` and `cni.bin_dirs` cannot be set at the same time"}
	}
	view.CNIBinDirs = binDirs
	return view, nil
}

// migrate is containerd 2's migration of a file older than its own
// version: the 1.7 CRI plugin's keys move to the CRI image service and
// runtime, unless the file sets them there already.
func migrate(v containerdVersion, keys map[string]any) map[string]any {
	out := map[string]any{}
	for k, val := range keys {
		if !strings.HasPrefix(k, "grpc.v1.cri.") {
			out[k] = val
		}
	}
	if s, ok := keys["grpc.v1.cri.sandbox_image"]; ok {
		out["cri.v1.images.pinned_images.sandbox"] = s
	}
	if d, ok := keys["grpc.v1.cri.cni.bin_dir"].(string); ok {
		if v.atLeast(2, 1) {
			out["cri.v1.runtime.cni.bin_dirs"] = []string{d}
		} else if _, set := out["cri.v1.runtime.cni.bin_dir"]; !set {
			out["cri.v1.runtime.cni.bin_dir"] = d
		}
	}
	if d, ok := keys["grpc.v1.cri.cni.conf_dir"]; ok {
		if _, set := out["cri.v1.runtime.cni.conf_dir"]; !set {
			out["cri.v1.runtime.cni.conf_dir"] = d
		}
	}
	return out
}

// containerdOf is the configuration the machine's containerd reads and the
// version it runs: its config.toml, and containerd.exe beside it. ok is
// false when the machine has none. m.mu must be held.
func (m *Machine) containerdOf() (path, version string, cfg steptest.ContainerdConfig, ok bool, err error) {
	path = nodeconfig.ContainerdConfigPath
	text := m.fact("file:" + path)
	if text == "" {
		return "", "", steptest.ContainerdConfig{}, false, nil
	}
	cfg, err = steptest.ParseContainerdConfig(text)
	return path, m.fact(`file:` + nodeconfig.ContainerdDir + `\containerd.exe`), cfg, true, err
}

// containerdRunning is what the running containerd took from its
// configuration (its sandbox image "" when the machine has no
// configuration, as a test may stage it); m.mu must be held.
func (m *Machine) containerdRunning() (containerdView, error) {
	if m.fact("service:containerd") != "Automatic/Running" {
		return containerdView{}, &errNoStart{msg: "containerd is not running"}
	}
	path, version, cfg, ok, err := m.containerdOf()
	switch {
	case err != nil:
		return containerdView{}, &errNoStart{msg: err.Error()}
	case !ok:
		// A machine staged without one: containerd runs on its defaults,
		// whatever they are (the sandbox image unknown).
		return containerdView{}, nil
	}
	return containerdReads(version, path, cfg)
}

// criForKubeadm is what kubeadm's CRI check gets from containerd's pipe:
// "" when the CRI answers. m.mu must be held.
func (m *Machine) criForKubeadm() string {
	_, err := m.containerdRunning()
	var noCRI *errNoCRI
	switch {
	case errors.As(err, &noCRI):
		return "rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"
	case err != nil:
		return `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: open \\.\pipe\containerd-containerd: The system cannot find the file specified."`
	}
	return ""
}

// containerdRefuses: a containerd step that leaves containerd (re)started
// with a configuration its version does not start with fails, as Windows
// fails Start-Service when the service's process exits at once (containerd
// logs why). m.mu must be held.
func (r *run) containerdRefuses(c steptest.Case) string {
	if r.s.Step != "containerd" {
		return ""
	}
	sets, err := steptest.ExpandMap(c.Sets, r.s.Params, r.m.fact)
	if err != nil {
		return ""
	}
	after := map[string]string{}
	for k, v := range sets {
		after[normKey(k)] = v
	}
	fact := func(k string) string {
		if v, ok := after[normKey(k)]; ok {
			return v
		}
		return r.m.fact(k)
	}
	dir := r.s.Params["InstallDir"]
	path := dir + `\config.toml`
	keys := []string{"file:" + path, `file:` + dir + `\containerd.exe`, "service:containerd"}
	restarts := false
	for _, k := range keys {
		if _, ok := after[normKey(k)]; ok {
			restarts = true
		}
	}
	if !restarts || fact("service:containerd") != "Automatic/Running" {
		return ""
	}
	text := fact(keys[0])
	if text == "" {
		return ""
	}
	cfg, err := steptest.ParseContainerdConfig(text)
	if err == nil {
		_, err = containerdReads(fact(keys[1]), path, cfg)
	}
	var noStart *errNoStart
	if errors.As(err, &noStart) {
		return "Service 'containerd (containerd)' cannot be started due to the following error: Cannot start service containerd on computer '.'. (its log: " + err.Error() + ")"
	}
	return ""
}

// ContainerdStepParams are the parameters the harness gives the containerd
// step for case c of its data: the data's, with Config composed for the
// case's Version as the join composes it (nodeconfig), with the sandbox
// image of the data's example, unless the case gives a Config of its own.
// (The data's example Config is containerd 2.3's; the Pester tests, which
// do not model containerd, run every case with it.)
func ContainerdStepParams(data *steptest.Step, c steptest.Case) (map[string]string, error) {
	p := data.ParamsFor(c)
	if _, own := c.Params["Config"]; own || c.Error != "" {
		return p, nil
	}
	example, err := steptest.ParseContainerdConfig(data.Params["Config"])
	if err != nil {
		return nil, err
	}
	pause, _ := example.Str("cri.v1.images.pinned_images.sandbox")
	cfg, err := nodeconfig.Containerd{Version: p["Version"], SandboxImage: pause}.ConfigTOML()
	if err != nil {
		return nil, err
	}
	p["Config"] = string(cfg)
	return p, nil
}
