package nodeimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/winconform/winconform/infra/gotool"
	"github.com/winconform/winconform/internal/kubelines"
)

// The Kubernetes binaries of a line are compiled from a build module of
// their own: the k8s.io/kubernetes module as the Go module proxy serves it
// has no staging directory (its go.mod replaces every k8s.io staging module,
// k8s.io/api and the rest, with ./staging/src/k8s.io/..., which the module
// leaves out), so it cannot be built as it is. The build module requires
// k8s.io/kubernetes at the line's version and replaces each of those
// staging modules with the published one of the matching v0.MINOR.PATCH
// (what `go get k8s.io/kubernetes` users are told to do), keeping every
// other directive of upstream's go.mod that changes the build (its go and
// godebug lines, its other replaces and its excludes).

// buildModuleRecipe changes whenever the way a build module is written
// changes; it is part of the module's cache key and of the image's inputs.
const buildModuleRecipe = "1"

// kubeModulePath is the generated build module's own path.
const kubeModulePath = "winconform.local/kubernetes-build"

// buildTools are the main packages a build module builds: etcd's server
// at the version the Kubernetes graph requires, and the Kubernetes commands.
func buildTools() []string {
	tools := []string{"go.etcd.io/etcd/server/v3"}
	for _, c := range kubeCommands {
		tools = append(tools, "k8s.io/kubernetes/cmd/"+c)
	}
	return tools
}

// goModFile is the part of `go mod edit -json` the build module reads.
type goModFile struct {
	Go      string
	GoDebug []struct{ Key, Value string }
	Replace []struct {
		Old, New struct{ Path, Version string }
	}
	Exclude []struct{ Path, Version string }
}

// stagingVersion is the version k8s.io's staging modules are published at
// for Kubernetes version: v1.37.2 -> v0.37.2, and a pre-release's with
// its suffix: v1.38.0-beta.0 -> v0.38.0-beta.0 (upstream tags both).
func stagingVersion(version string) (string, error) {
	rest, ok := strings.CutPrefix(version, "v1.")
	release, pre, _ := strings.Cut(rest, "-")
	if !ok || strings.Count(release, ".") != 1 || strings.Contains(version, "+") {
		return "", fmt.Errorf("kubernetes version %q is not v1.MINOR.PATCH or v1.MINOR.PATCH-PRERELEASE", version)
	}
	if pre != "" {
		return "v0." + release + "-" + pre, nil
	}
	return "v0." + release, nil
}

// goToolchain is the Go toolchain Kubernetes version is built with where
// its line names one (kubelines.Line.GoToolchain: go1.27.3 for 1.38, whose
// go.mod declares go 1.27.0), else "": the go on PATH.
func goToolchain(version string) string {
	l, err := kubelines.Find(version)
	if err != nil {
		return ""
	}
	return l.GoToolchain
}

// toolchainEnv is the environment that makes the go command build
// Kubernetes version with its line's toolchain (GOTOOLCHAIN, which the go
// command fetches from the Go module proxy the first time): only the go
// commands that build Kubernetes itself get it, never the harness's own.
func toolchainEnv(version string) []string {
	if tc := goToolchain(version); tc != "" {
		return []string{"GOTOOLCHAIN=" + tc}
	}
	return nil
}

// buildModuleEdits are the `go mod edit` flags that turn an empty module
// into the build module of Kubernetes version, whose own go.mod is upstream.
func buildModuleEdits(version string, upstream goModFile) ([]string, error) {
	staging, err := stagingVersion(version)
	if err != nil {
		return nil, err
	}
	if upstream.Go == "" {
		return nil, fmt.Errorf("k8s.io/kubernetes@%s: its go.mod has no go line", version)
	}
	edits := []string{"-go=" + upstream.Go, "-require=k8s.io/kubernetes@" + version}
	for _, d := range upstream.GoDebug {
		edits = append(edits, "-godebug="+d.Key+"="+d.Value)
	}
	nStaging := 0
	for _, r := range upstream.Replace {
		old := r.Old.Path
		if r.Old.Version != "" {
			old += "@" + r.Old.Version
		}
		switch {
		case r.New.Path == "./staging/src/"+r.Old.Path && strings.HasPrefix(r.Old.Path, "k8s.io/"):
			edits = append(edits, "-replace="+old+"="+r.Old.Path+"@"+staging)
			nStaging++
		case r.New.Version != "":
			edits = append(edits, "-replace="+old+"="+r.New.Path+"@"+r.New.Version)
		default:
			return nil, fmt.Errorf("k8s.io/kubernetes@%s: its go.mod replaces %s with the directory %s, which is no staging module: the build module cannot stand in for it", version, old, r.New.Path)
		}
	}
	if nStaging == 0 {
		return nil, fmt.Errorf("k8s.io/kubernetes@%s: its go.mod replaces no staging module (./staging/src/k8s.io/...): the build module's recipe no longer matches upstream", version)
	}
	for _, x := range upstream.Exclude {
		edits = append(edits, "-exclude="+x.Path+"@"+x.Version)
	}
	for _, t := range buildTools() {
		edits = append(edits, "-tool="+t)
	}
	return edits, nil
}

// goOut runs the go tool outside any module's settings, with env added to
// this process's environment, and returns its standard output; its
// standard error goes to log.
func goOut(ctx context.Context, log io.Writer, dir string, env []string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "GOWORK=off", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = &out, log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// refusedRE is a go command's report of a module version its proxy
// refused: "reading https://HOST/k8s.io/ktesting/@v/v0.38.0-beta.0.zip:
// 403 Forbidden" (404 and 410 are refusals too).
var refusedRE = regexp.MustCompile(`reading https?://[^/\s]+/(\S+)/@v/(\S+)\.(?:zip|mod|info): (?:403|404|410) `)

// refusedModules lists the module versions (path@version, each once,
// sorted) a go command's output says its proxy refused.
func refusedModules(output string) []string {
	var out []string
	for _, m := range refusedRE.FindAllStringSubmatch(output, -1) {
		out = append(out, m[1]+"@"+m[2])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// kubeModule returns the directory of the build module of Kubernetes
// version (v1.37.2) and of the k8s.io/kubernetes module's source, writing
// the build module the first time: its go.mod from upstream's, its go.sum
// by `go mod tidy`, which asks the Go module proxy. The module is cached in
// cacheDir/mod by version and by a digest of upstream's go.mod.
func kubeModule(ctx context.Context, log io.Writer, cacheDir, version string) (mod, src string, err error) {
	env := toolchainEnv(version)
	src, upstreamMod, err := gotool.Download(ctx, log, cacheDir, "k8s.io/kubernetes@"+version, env...)
	if err != nil {
		return "", "", err
	}
	raw, err := os.ReadFile(upstreamMod)
	if err != nil {
		return "", "", err
	}
	h := sha256.Sum256(append([]byte(buildModuleRecipe+"\n"), raw...))
	mod = filepath.Join(cacheDir, "mod", "kubernetes-"+version+"-"+hex.EncodeToString(h[:])[:12])
	err = gotool.Once(mod, func(tmp string) error {
		js, err := goOut(ctx, log, tmp, env, "mod", "edit", "-json", upstreamMod)
		if err != nil {
			return err
		}
		var upstream goModFile
		if err := json.Unmarshal(js, &upstream); err != nil {
			return fmt.Errorf("k8s.io/kubernetes@%s go.mod: %w", version, err)
		}
		edits, err := buildModuleEdits(version, upstream)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module "+kubeModulePath+"\n"), 0o644); err != nil {
			return err
		}
		if _, err := goOut(ctx, log, tmp, env, append([]string{"mod", "edit"}, edits...)...); err != nil {
			return err
		}
		// The go command's output is kept to name what the proxy refused,
		// and shown where the caller asked (log may be nil: nothing shown).
		var out bytes.Buffer
		shown := io.Writer(&out)
		if log != nil {
			shown = io.MultiWriter(log, &out)
		}
		if err := gotool.Go(ctx, shown, tmp, env, "mod", "tidy"); err != nil {
			if refused := refusedModules(out.String()); len(refused) > 0 {
				return fmt.Errorf("the build module of Kubernetes %s: the Go module proxy refuses %s, which its graph needs: this line cannot be built from that proxy (%w)", version, strings.Join(refused, ", "), err)
			}
			return fmt.Errorf("the build module of Kubernetes %s: %w", version, err)
		}
		return nil
	})
	return mod, src, err
}
