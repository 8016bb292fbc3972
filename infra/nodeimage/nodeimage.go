// Package nodeimage builds a kind node image of any supported Kubernetes line
// on a machine that reaches no container registry: a Debian root file system
// from Debian's packages, kind's base files from its Go module, containerd 2
// and runc compiled from theirs, the line's Kubernetes binaries compiled from
// a build module of its own (buildmodule.go), and every image the control
// plane, kube-proxy, CoreDNS and flannel need made locally and pre-loaded
// into the node's containerd.
//
// The result is cached as a Docker image whose tag carries a digest of
// everything that went into it, so a rebuild with nothing changed is a lookup.
package nodeimage

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/metallb"
)

// recipe changes whenever the way the image is put together changes.
const recipe = "5"

// Repository is where locally built node images are tagged.
const Repository = "winconform.local/kind-node"

// KeyLabel is the image label that holds the digest of the build's inputs.
const KeyLabel = "winconform.io/node-image-inputs"

// LocalImagePrefix names images that exist only on this machine (never pulled).
const LocalImagePrefix = "winconform.local/"

// FlannelImage is the locally built flannel image (flanneld, its CNI plugin,
// and iptables), pre-loaded into the node image.
func FlannelImage() string { return LocalImagePrefix + "flannel:" + cni.FlannelVersion }

//go:embed iptableswrapper/main.go
var iptablesWrapperSource []byte

// Spec says which node image to build and where to keep what it needs.
type Spec struct {
	// KubernetesVersion is the version of the binaries (v1.37.2), on a
	// supported line (internal/kubelines).
	KubernetesVersion string
	// CacheDir keeps binaries, the root file system and build logs.
	CacheDir string
	// Mirror is the Debian mirror; empty means the one apt is configured with.
	Mirror string
	// Force rebuilds even when an image with the same inputs exists.
	Force bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Tag is the image tag for spec's inputs: the Kubernetes version and a
// digest of everything else, so that the lines' images sit side by side.
func (s Spec) Tag() string {
	return fmt.Sprintf("%s:%s-%s", Repository, s.KubernetesVersion, s.inputs()[:12])
}

// inputs is a digest of everything that decides the image's content.
func (s Spec) inputs() string {
	h := sha256.New()
	for _, part := range []string{
		recipe, s.KubernetesVersion, buildModuleRecipe, DebianSuite, strings.Join(debianPackages, ","),
		cni.FlannelVersion, cni.PluginsVersion, string(iptablesWrapperSource), defaultStorage,
		metallb.Version, KindVersion(), ContainerdVersion, RuncVersion,
	} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	// A line built with a Go toolchain of its own (1.38's go1.27.3) is
	// built by it; the other lines' digests stay as they were.
	if tc := goToolchain(s.KubernetesVersion); tc != "" {
		fmt.Fprintf(h, "toolchain:%s;", tc)
	}
	// The Kubernetes binaries come from the line's build module, which the
	// version and buildModuleRecipe decide (the module proxy never changes
	// a published version); the others from their own modules' versions.
	return hex.EncodeToString(h.Sum(nil))
}

func (s Spec) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "nodeimage: "+format+"\n", args...)
	}
}

// Ensure returns a node image tag for spec, building the image when no image
// with the same inputs exists.
func Ensure(ctx context.Context, d *docker.Client, spec Spec) (string, error) {
	tag := spec.Tag()
	if !spec.Force && d.ImageExists(ctx, tag) {
		spec.logf("node image %s is up to date", tag)
		return tag, nil
	}
	if err := os.MkdirAll(spec.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("node image cache %s: %w", spec.CacheDir, err)
	}
	logPath := filepath.Join(spec.CacheDir, "logs", "nodeimage-"+spec.inputs()[:12]+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return "", err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer logFile.Close()
	b := &build{spec: spec, docker: d, tag: tag, out: logFile}
	start := time.Now()
	spec.logf("building node image %s (Kubernetes %s; log: %s)", tag, spec.KubernetesVersion, logPath)
	if err := b.run(ctx); err != nil {
		return "", fmt.Errorf("node image build failed: %w (full log: %s)", err, logPath)
	}
	spec.logf("built %s in %s", tag, time.Since(start).Round(time.Second))
	return tag, nil
}

// build is one node image build in progress.
type build struct {
	spec   Spec
	docker *docker.Client
	tag    string
	out    io.Writer // the build log

	mod     string // the line's build module (buildmodule.go)
	k8sDir  string // k8s.io/kubernetes in the module cache
	bins    binaries
	rootfs  string // the prepared Debian root file system
	kindDir string // sigs.k8s.io/kind in the module cache
}

// step runs f, logging its duration; its error names the step.
func (b *build) step(name string, f func() error) error {
	start := time.Now()
	fmt.Fprintf(b.out, "=== %s\n", name)
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	d := time.Since(start).Round(100 * time.Millisecond)
	fmt.Fprintf(b.out, "=== %s done in %s\n", name, d)
	b.spec.logf("%-28s %s", name, d)
	return nil
}

func (b *build) run(ctx context.Context) error {
	// The Debian root file system needs the network and the disk, the Go
	// builds need the CPUs: run them side by side.
	rootfsDone := make(chan error, 1)
	go func() {
		rootfsDone <- b.step("debian root file system", func() error { return b.ensureRootfs(ctx) })
	}()
	goErr := b.buildBinaries(ctx)
	rootErr := <-rootfsDone
	if goErr != nil {
		return goErr
	}
	if rootErr != nil {
		return rootErr
	}
	var base, archive string
	steps := []struct {
		name string
		f    func() error
	}{
		{"kind base image", func() (err error) { base, err = b.baseImage(ctx); return }},
		{"component images", func() (err error) { archive, err = b.componentImages(ctx); return }},
		{"node image", func() error { return b.nodeImage(ctx, base, archive) }},
	}
	for _, s := range steps {
		if err := b.step(s.name, s.f); err != nil {
			return err
		}
	}
	return nil
}

// DefaultCacheDir is $WINCONFORM_CACHE, else the user cache dir's winconform.
func DefaultCacheDir() string {
	if d := os.Getenv("WINCONFORM_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "winconform")
	}
	return filepath.Join(os.TempDir(), "winconform-cache")
}
