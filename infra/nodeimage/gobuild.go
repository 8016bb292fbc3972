package nodeimage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/winconform/winconform"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/gotool"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/internal/kubelines"
)

// Modules of what the node image carries beside Kubernetes itself. CoreDNS,
// etcd and pause follow Kubernetes (their tags come from kubeadm); flannel
// and the CNI plugins follow infra/cni.
const (
	flannelModule = "github.com/flannel-io/flannel"
	corednsModule = "github.com/coredns/coredns"
)

// binaries are the paths of everything compiled for the image.
type binaries struct {
	kube        map[string]string // kube-apiserver, ..., kubectl, etcd
	coredns     string
	flanneld    string
	installConf string
	cniPlugins  map[string]string // flannel, bridge
	pause       string
	wrapper     string
	metallb     map[string]string // controller, speaker
	containerd  map[string]string // containerd, ctr, containerd-shim-runc-v2
	runc        string
	images      []string // kubeadm config images list
}

func (b *build) buildBinaries(ctx context.Context) error {
	b.bins.kube = map[string]string{}
	steps := []struct {
		name string
		f    func() error
	}{
		{"kubernetes build module", func() error { return b.prepareModule(ctx) }},
		{"kubernetes binaries", func() error { return b.buildKubernetes(ctx) }},
		{"kubeadm image list", func() error { return b.listImages(ctx) }},
		{"containerd", func() error { return b.buildContainerd(ctx) }},
		{"runc", func() error { return b.buildRunc(ctx) }},
		{"coredns", func() error { return b.buildCoreDNS(ctx) }},
		{"flannel", func() error { return b.buildFlannel(ctx) }},
		{"cni plugins", func() error { return b.buildCNIPlugins(ctx) }},
		{"metallb", func() error { return b.buildMetalLB(ctx) }},
		{"pause", func() error { return b.buildPause(ctx) }},
		{"iptables wrapper", func() error { return b.buildWrapper(ctx) }},
	}
	for _, s := range steps {
		if err := b.step(s.name, s.f); err != nil {
			return err
		}
	}
	return nil
}

func (b *build) goCmd(ctx context.Context, dir string, env []string, args ...string) error {
	return gotool.Go(ctx, b.out, dir, env, args...)
}

func (b *build) command(ctx context.Context, dir string, env []string, name string, args ...string) error {
	return gotool.Run(ctx, b.out, dir, env, name, args...)
}

func (b *build) binDir(name string) string { return filepath.Join(b.spec.CacheDir, "bin", name) }

// prepareModule writes (or finds) the line's build module and downloads
// the kind module whose base image files the node image carries.
func (b *build) prepareModule(ctx context.Context) error {
	var err error
	b.mod, b.k8sDir, err = kubeModule(ctx, b.out, b.spec.CacheDir, b.spec.KubernetesVersion)
	if err != nil {
		return err
	}
	b.kindDir, _, err = gotool.Download(ctx, b.out, b.spec.CacheDir, "sigs.k8s.io/kind@"+KindVersion())
	return err
}

var kindRequire = regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/kind\s+(v\d+\.\d+\.\d+)`)

// KindVersion is the version of kind the harness creates clusters with (the
// sigs.k8s.io/kind library its go.mod requires): the node image carries
// that kind's base image files, so that the node and the library that
// configures it agree.
func KindVersion() string {
	m := kindRequire.FindSubmatch(winconform.GoMod)
	if m == nil {
		panic("go.mod requires no sigs.k8s.io/kind version") // the module cannot build without one
	}
	return string(m[1])
}

// HostTools compiles the kind CLI (the version the harness uses as a
// library) and kubectl of Kubernetes kubernetesVersion (from its line's
// build module), for benchmarks and for people who want them, and returns
// their paths.
func HostTools(ctx context.Context, cacheDir, kubernetesVersion string, log io.Writer) (kindBin, kubectl string, err error) {
	_, release, err := kubelines.Resolve(kubernetesVersion)
	if err != nil {
		return "", "", err
	}
	mod, _, err := kubeModule(ctx, log, cacheDir, release)
	if err != nil {
		return "", "", err
	}
	ldflags, err := versionLDFlags(release)
	if err != nil {
		return "", "", err
	}
	kubectlDir := filepath.Join(cacheDir, "bin", "kubectl-"+filepath.Base(mod))
	err = gotool.Once(kubectlDir, func(tmp string) error {
		env := append([]string{"CGO_ENABLED=0"}, toolchainEnv(release)...)
		return gotool.Go(ctx, log, mod, env, "build", "-ldflags", ldflags, "-o", tmp+"/", "k8s.io/kubernetes/cmd/kubectl")
	})
	if err != nil {
		return "", "", err
	}
	kindDir := filepath.Join(cacheDir, "bin", "kind-"+KindVersion())
	if err := gotool.Install(ctx, log, kindDir, "sigs.k8s.io/kind@"+KindVersion()); err != nil {
		return "", "", err
	}
	return filepath.Join(kindDir, "kind"), filepath.Join(kubectlDir, "kubectl"), nil
}

// kubeCommands are compiled from k8s.io/kubernetes at the line's version.
var kubeCommands = []string{
	"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
	"kubelet", "kubeadm", "kubectl",
}

// versionLDFlags stamps a version into Kubernetes binaries; without it they
// report v0.0.0 and kubeadm refuses them.
func versionLDFlags(version string) (string, error) {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return "", fmt.Errorf("kubernetes version %q is not vMAJOR.MINOR.PATCH", version)
	}
	flags := []string{"-s", "-w"}
	for _, p := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X", p+".gitVersion="+version, "-X", p+".gitMajor="+parts[0], "-X", p+".gitMinor="+parts[1],
			"-X", p+".gitCommit=0000000000000000000000000000000000000000", "-X", p+".gitTreeState=clean",
			"-X", p+".buildDate=1970-01-01T00:00:00Z")
	}
	return strings.Join(flags, " "), nil
}

func (b *build) buildKubernetes(ctx context.Context) error {
	ldflags, err := versionLDFlags(b.spec.KubernetesVersion)
	if err != nil {
		return err
	}
	// Named by the build module (the version and upstream's go.mod): the
	// binaries do not change with the rest of the image's inputs.
	dir := b.binDir(filepath.Base(b.mod))
	err = gotool.Once(dir, func(tmp string) error {
		pkgs := []string{"go.etcd.io/etcd/server/v3"}
		for _, c := range kubeCommands {
			pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
		}
		// One go build for all of them shares the compilation of what they
		// have in common (most of Kubernetes).
		args := append([]string{"build", "-ldflags", ldflags, "-o", tmp + "/"}, pkgs...)
		env := append([]string{"CGO_ENABLED=0"}, toolchainEnv(b.spec.KubernetesVersion)...)
		if err := b.goCmd(ctx, b.mod, env, args...); err != nil {
			return err
		}
		return os.Rename(filepath.Join(tmp, "server"), filepath.Join(tmp, "etcd"))
	})
	if err != nil {
		return err
	}
	for _, c := range append(kubeCommands, "etcd") {
		b.bins.kube[c] = filepath.Join(dir, c)
	}
	return nil
}

func (b *build) listImages(ctx context.Context) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, b.bins.kube["kubeadm"], "config", "images", "list", "--kubernetes-version", b.spec.KubernetesVersion)
	cmd.Stdout, cmd.Stderr = &out, b.out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubeadm config images list: %w", err)
	}
	b.bins.images = strings.Fields(out.String())
	_, err := imageTag(b.bins.images, "coredns")
	return err
}

// imageTag returns the tag of the image whose repository ends in /repo.
func imageTag(images []string, repo string) (string, error) {
	for _, img := range images {
		i := strings.LastIndex(img, ":")
		if i > 0 && strings.HasSuffix(img[:i], "/"+repo) {
			return img[i+1:], nil
		}
	}
	return "", fmt.Errorf("kubeadm lists no %s image (it listed %v)", repo, images)
}

func (b *build) buildCoreDNS(ctx context.Context) error {
	tag, err := imageTag(b.bins.images, "coredns")
	if err != nil {
		return err
	}
	dir := b.binDir("coredns-" + tag)
	b.bins.coredns = filepath.Join(dir, "coredns")
	return gotool.Install(ctx, b.out, dir, corednsModule+"@"+tag)
}

func (b *build) buildCNIPlugins(ctx context.Context) (err error) {
	b.bins.cniPlugins, err = cni.BuildPlugins(ctx, b.out, filepath.Join(b.spec.CacheDir, "bin"))
	return err
}

// buildMetalLB compiles MetalLB's controller and speaker from its own module.
func (b *build) buildMetalLB(ctx context.Context) error {
	controller, speaker, err := metallb.Build(ctx, b.out, filepath.Join(b.spec.CacheDir, "bin"))
	b.bins.metallb = map[string]string{"controller": controller, "speaker": speaker}
	return err
}

// buildFlannel compiles flanneld from a copy of its module with two back ends
// left out: tencentvpc, whose SDK the Go module proxy does not serve, and udp,
// which needs cgo. vxlan and host-gw, the ones Windows nodes use, stay.
func (b *build) buildFlannel(ctx context.Context) error {
	dir := b.binDir("flannel-" + cni.FlannelVersion)
	b.bins.flanneld = filepath.Join(dir, "flanneld")
	b.bins.installConf = filepath.Join(dir, "install-conf")
	return gotool.Once(dir, func(tmp string) error {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", flannelModule+"@"+cni.FlannelVersion)
		cmd.Dir, cmd.Stdout, cmd.Stderr = b.spec.CacheDir, &out, b.out
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go mod download %s@%s: %w", flannelModule, cni.FlannelVersion, err)
		}
		var info struct{ Dir string }
		if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Dir == "" {
			return fmt.Errorf("go mod download %s: no directory (%v)", flannelModule, err)
		}
		src := filepath.Join(b.spec.CacheDir, "src", "flannel-"+cni.FlannelVersion)
		os.RemoveAll(src)
		if err := copyTree(info.Dir, src); err != nil {
			return err
		}
		if err := dropImports(filepath.Join(src, "main.go"), "pkg/backend/tencentvpc\"", "pkg/backend/udp\""); err != nil {
			return err
		}
		env := []string{"CGO_ENABLED=0"}
		ld := "-s -w -X " + flannelModule + "/pkg/version.Version=" + cni.FlannelVersion
		if err := b.goCmd(ctx, src, env, "build", "-ldflags", ld, "-o", filepath.Join(tmp, "flanneld"), "."); err != nil {
			return err
		}
		return b.goCmd(ctx, src, env, "build", "-ldflags", "-s -w", "-o", filepath.Join(tmp, "install-conf"), "./cmd/install_conf")
	})
}

// dropImports removes the import lines of path that end in each suffix, and
// fails when one is missing (the recipe no longer matches the source).
func dropImports(path string, suffixes ...string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	kept := lines[:0]
	found := map[string]bool{}
	for _, l := range lines {
		drop := false
		for _, s := range suffixes {
			if strings.HasSuffix(strings.TrimSpace(l), s) {
				drop, found[s] = true, true
			}
		}
		if !drop {
			kept = append(kept, l)
		}
	}
	for _, s := range suffixes {
		if !found[s] {
			return fmt.Errorf("%s: no import ending in %s to drop", path, s)
		}
	}
	return os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644)
}

// copyTree copies a directory of regular files (a module from the read-only
// module cache) into a writable one.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// buildPause compiles Kubernetes' own pause.c, shipped in its module.
func (b *build) buildPause(ctx context.Context) error {
	tag, err := imageTag(b.bins.images, "pause")
	if err != nil {
		return err
	}
	dir := b.binDir("pause-" + tag)
	b.bins.pause = filepath.Join(dir, "pause")
	return gotool.Once(dir, func(tmp string) error {
		gcc, err := exec.LookPath("gcc")
		if err != nil {
			return errors.New("gcc not found: it compiles the pause container from Kubernetes' pause.c; install it (apt-get install -y gcc libc6-dev)")
		}
		return b.command(ctx, tmp, nil, gcc, "-static", "-O2", "-DVERSION="+tag, "-o", filepath.Join(tmp, "pause"),
			filepath.Join(b.k8sDir, "build", "pause", "linux", "pause.c"))
	})
}

func (b *build) buildWrapper(ctx context.Context) error {
	sum := b.spec.inputs()[:12]
	dir := b.binDir("iptables-wrapper-" + sum)
	b.bins.wrapper = filepath.Join(dir, "iptables-wrapper")
	return gotool.Once(dir, func(tmp string) error {
		src := filepath.Join(tmp, "src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "main.go"), iptablesWrapperSource, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module iptableswrapper\n\ngo 1.22\n"), 0o644); err != nil {
			return err
		}
		if err := b.goCmd(ctx, src, []string{"CGO_ENABLED=0"}, "build", "-ldflags", "-s -w", "-o", filepath.Join(tmp, "iptables-wrapper"), "."); err != nil {
			return err
		}
		return os.RemoveAll(src)
	})
}
