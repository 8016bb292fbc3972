package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/winconform/winconform/infra/gotool"
	"github.com/winconform/winconform/infra/nodeimage"
)

// containerdBuildTags leave out the snapshotters a judge never loads, as
// the node image's build of containerd does.
const containerdBuildTags = "no_aufs no_zfs no_btrfs no_devmapper urfave_cli_no_docs"

var containerdBuilds sync.Mutex

// Containerd is the path of containerd (MAJOR.MINOR.PATCH) built for this
// host from its module as the Go module proxy serves it: the same source as
// its Windows release, whose configuration loader is the same code (the
// plugins registered, and so their defaults, differ). It is built once into
// the harness's cache (nodeimage.DefaultCacheDir, upstream/containerd-V).
func Containerd(ctx context.Context, version string) (string, error) {
	version = strings.TrimPrefix(version, "v")
	module := "github.com/containerd/containerd/v2"
	if strings.HasPrefix(version, "1.") {
		module = "github.com/containerd/containerd"
	}
	cache := nodeimage.DefaultCacheDir()
	dir := filepath.Join(cache, "upstream", "containerd-"+version)
	bin := filepath.Join(dir, "containerd")
	containerdBuilds.Lock()
	defer containerdBuilds.Unlock()
	// Test binaries of several packages build at once: one at a time.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", err
	}
	var log bytes.Buffer
	err = gotool.Once(dir, func(tmp string) error {
		src, _, err := gotool.Download(ctx, &log, cache, module+"@v"+version)
		if err != nil {
			return err
		}
		return gotool.Go(ctx, &log, src, []string{"CGO_ENABLED=0"},
			"build", "-mod=readonly", "-trimpath", "-tags", containerdBuildTags, "-o", filepath.Join(tmp, "containerd"), "./cmd/containerd")
	})
	if err != nil {
		return "", fmt.Errorf("upstream: building containerd %s: %w", version, err)
	}
	return bin, nil
}

// ContainerdResult is what containerd made of a configuration file.
type ContainerdResult struct {
	// Dump is `containerd config dump`: the configuration containerd runs
	// with, its defaults and the file merged; nil when it refused the file.
	Dump map[string]any
	// Warnings are the warnings containerd logged as it loaded the file.
	Warnings []string
	// Refused is containerd's error when it does not start with the file
	// ("" when it does).
	Refused string
	// NoCRI is the error of a containerd that started but serves no CRI
	// runtime service, the kubelet's ("" when it does).
	NoCRI string
	// CNIBinDirs and CNIConfDir are where the running containerd's CRI
	// looks for the CNI's plugins and configuration, as its runtime
	// service's status says (the CNI library's view).
	CNIBinDirs []string
	CNIConfDir string

	// fileVersion is the file's version = (0 when it has none).
	fileVersion int64
}

// Migrated says that containerd migrated the file from an older version:
// it runs with a configuration of a newer version than the file's (2.3
// also warns "Configuration migrated from version"; 2.2's config dump does
// not).
func (r ContainerdResult) Migrated() bool {
	v, _ := r.Dump["version"].(int64)
	return r.fileVersion > 0 && v > r.fileVersion
}

// SandboxImage is the sandbox image in the config dump, where the CRI of
// containerd of version takes it from: containerd 1.7's CRI plugin's
// sandbox_image (pkg/cri/sbserver, c.config.SandboxImage, v1.7.28),
// containerd 2's CRI image service's pinned image "sandbox"
// (internal/cri/server/images, PinnedImage("sandbox"), v2.1.9 to v2.4.2).
// The running CRI does not say it (its status holds the runtime's
// configuration only), so this key is the sources' word.
func (r ContainerdResult) SandboxImage(version string) string {
	if strings.HasPrefix(strings.TrimPrefix(version, "v"), "1.") {
		return dumpString(r.Dump, "plugins", "io.containerd.grpc.v1.cri", "sandbox_image")
	}
	return dumpString(r.Dump, "plugins", "io.containerd.cri.v1.images", "pinned_images", "sandbox")
}

// VerifierDir is containerd 2's image verifier's directory in the dump
// ("" for containerd 1.7, which has none).
func (r ContainerdResult) VerifierDir() string {
	return dumpString(r.Dump, "plugins", "io.containerd.image-verifier.v1.bindir", "bin_dir")
}

func dumpString(dump map[string]any, path ...string) string {
	var v any = dump
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

var containerdWarning = regexp.MustCompile(`level=(warning|error)\b.*`)

// LoadContainerdConfig runs containerd of version with config (a
// config.toml): `containerd --config F config dump`, then containerd
// itself, in a root, state and socket of its own, asked for its CRI
// runtime service's status. What containerd refuses is in the result; the
// error is the harness's failure to ask.
func LoadContainerdConfig(ctx context.Context, version string, config []byte) (ContainerdResult, error) {
	var res ContainerdResult
	bin, err := Containerd(ctx, version)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "containerd-config-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, config, 0o600); err != nil {
		return res, err
	}
	var head struct{ Version int64 }
	if _, err := toml.Decode(string(config), &head); err == nil {
		res.fileVersion = head.Version
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "--config", file, "config", "dump")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := containerdWarning.FindString(line); m != "" {
			res.Warnings = append(res.Warnings, m)
		}
	}
	if runErr != nil {
		res.Refused = strings.TrimSpace(stderr.String())
		if res.Refused == "" {
			res.Refused = runErr.Error()
		}
		return res, nil
	}
	if _, err := toml.Decode(stdout.String(), &res.Dump); err != nil {
		return res, fmt.Errorf("containerd %s's config dump: %v", version, err)
	}
	return res, runContainerd(ctx, bin, version, dir, file, &res)
}

// CheckContainerdConfig judges config (a config.toml) with containerd of
// version itself (LoadContainerdConfig): containerd must start with it and
// serve its CRI, and every key config sets (but version) must be in the
// dump, at the same place, with the same value: a key containerd ignores,
// or reads from elsewhere, fails. Its warnings are returned, for the caller
// to hold to the list it expects.
func CheckContainerdConfig(ctx context.Context, version string, config []byte) (ContainerdResult, error) {
	res, err := LoadContainerdConfig(ctx, version, config)
	switch {
	case err != nil:
		return res, err
	case res.Refused != "":
		return res, fmt.Errorf("containerd %s refuses the configuration: %s", version, res.Refused)
	case res.NoCRI != "":
		return res, fmt.Errorf("containerd %s runs without its CRI, the kubelet's runtime service: %s", version, res.NoCRI)
	}
	var set map[string]any
	if _, err := toml.Decode(string(config), &set); err != nil {
		return res, fmt.Errorf("the configuration is no TOML: %v", err)
	}
	dumped := leaves(res.Dump, "")
	var missing []string
	for key, want := range leaves(set, "") {
		if key == "version" {
			continue
		}
		got, ok := dumped[key]
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (containerd %s has no such key there)", key, version))
		} else if !reflect.DeepEqual(got, want) {
			missing = append(missing, fmt.Sprintf("%s = %v (containerd %s runs with %v)", key, want, version, got))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return res, fmt.Errorf("containerd %s does not run with what the configuration sets: %s; its warnings: %s", version, strings.Join(missing, "; "), strings.Join(res.Warnings, "; "))
	}
	return res, nil
}

// runContainerd starts containerd with the file, in a root, state and
// socket of its own, and asks its CRI runtime service for its status: a
// configuration with which containerd runs but loads no CRI (the kubelet's
// runtime) fails here, as it would on the node.
func runContainerd(ctx context.Context, bin, version, dir, file string, res *ContainerdResult) error {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sock := filepath.Join(dir, "containerd.sock")
	cmd := exec.CommandContext(cctx, bin, "--config", file, "--root", filepath.Join(dir, "root"), "--state", filepath.Join(dir, "state"), "--address", sock, "--log-level", "warn")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	var status *cri.StatusResponse
	for {
		sctx, scancel := context.WithTimeout(cctx, 2*time.Second)
		status, err = cri.NewRuntimeServiceClient(conn).Status(sctx, &cri.StatusRequest{Verbose: true})
		scancel()
		if err == nil {
			break
		}
		if st, ok := grpcstatus.FromError(err); ok && st.Code() == codes.Unimplemented {
			res.NoCRI = fmt.Sprintf("%v: %s", err, strings.TrimSpace(log.String()))
			return nil
		}
		select {
		case werr := <-exited:
			exited <- werr
			res.Refused = fmt.Sprintf("%v: %s", werr, strings.TrimSpace(log.String()))
			return nil
		case <-cctx.Done():
			return fmt.Errorf("containerd %s did not answer within a minute (%v): %s", version, err, strings.TrimSpace(log.String()))
		case <-time.After(200 * time.Millisecond):
		}
	}
	var cni struct {
		PluginDirs    []string
		PluginConfDir string
	}
	if err := json.Unmarshal([]byte(status.Info["cniconfig"]), &cni); err != nil {
		return fmt.Errorf("containerd %s's CRI status has no CNI configuration: %v", version, err)
	}
	res.CNIBinDirs, res.CNIConfDir = cni.PluginDirs, cni.PluginConfDir
	return nil
}

// leaves flattens a TOML document into its keys, dotted with their tables
// (a table's name quoted when it holds a dot), and their values.
func leaves(m map[string]any, prefix string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if strings.Contains(k, ".") {
			k = "'" + k + "'"
		}
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			for kk, vv := range leaves(sub, key) {
				out[kk] = vv
			}
			continue
		}
		out[key] = v
	}
	return out
}
