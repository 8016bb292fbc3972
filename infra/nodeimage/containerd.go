package nodeimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/winconform/winconform/infra/gotool"
)

// The node's container runtime: containerd 2 and runc, compiled from their
// modules as the Go module proxy serves them, in place of Debian's
// containerd 1.6 (Kubernetes 1.36 and later need containerd 2: containerd's
// RELEASES.md, "Kubernetes Support"). kind's own base image builds the same
// three containerd commands and runc from source (kind v0.33.0,
// images/base/Dockerfile: containerd v2.3.4, runc v1.4.3).
const (
	// ContainerdVersion is the newest patch of containerd's long-term
	// release line, 2.3. It keeps cgroup v1 support (deprecated).
	ContainerdVersion = "v2.3.7"
	containerdModule  = "github.com/containerd/containerd/v2"
	// RuncVersion is the runc kind v0.33.0's base image pairs with
	// containerd 2.3. Debian bookworm's runc is 1.1.5, older than
	// containerd 2's user namespaces and recursive read-only mounts need
	// (runc 1.2: containerd's docs/containerd-2.0.md).
	RuncVersion = "v1.4.3"
	runcModule  = "github.com/opencontainers/runc"
)

// containerdCommands are what kind's base image installs of containerd.
var containerdCommands = []string{"containerd", "ctr", "containerd-shim-runc-v2"}

// containerdBuildTags leave out the snapshotters a kind node never selects,
// as kind's base image does; urfave_cli_no_docs as containerd's Makefile.
const containerdBuildTags = "no_aufs no_zfs no_btrfs no_devmapper urfave_cli_no_docs"

// buildContainerd compiles containerd, ctr and the runc shim as static
// binaries (without cgo: with the btrfs snapshotter left out nothing of
// theirs needs it; containerd's Makefile builds the shim so too), stamped
// with their version as containerd's Makefile does.
func (b *build) buildContainerd(ctx context.Context) error {
	dir := b.binDir("containerd-" + ContainerdVersion)
	b.bins.containerd = map[string]string{}
	for _, c := range containerdCommands {
		b.bins.containerd[c] = filepath.Join(dir, c)
	}
	return gotool.Once(dir, func(tmp string) error {
		src, _, err := gotool.Download(ctx, b.out, b.spec.CacheDir, containerdModule+"@"+ContainerdVersion)
		if err != nil {
			return err
		}
		ld := "-s -w -X " + containerdModule + "/version.Version=" + ContainerdVersion +
			" -X " + containerdModule + "/version.Package=github.com/containerd/containerd"
		args := []string{"build", "-mod=readonly", "-trimpath", "-tags", containerdBuildTags, "-ldflags", ld, "-o", tmp + "/"}
		for _, c := range containerdCommands {
			args = append(args, "./cmd/"+c)
		}
		return b.goCmd(ctx, src, []string{"CGO_ENABLED=0"}, args...)
	})
}

// buildRunc compiles runc as runc's Makefile's static target does: with cgo
// (its nsenter is C) and seccomp (libseccomp, linked in statically), as a
// static PIE, so that it runs on the node whatever this host's libc.
func (b *build) buildRunc(ctx context.Context) error {
	dir := b.binDir("runc-" + RuncVersion)
	b.bins.runc = filepath.Join(dir, "runc")
	return gotool.Once(dir, func(tmp string) error {
		if err := runcPrerequisites(ctx); err != nil {
			return err
		}
		src, _, err := gotool.Download(ctx, b.out, b.spec.CacheDir, runcModule+"@"+RuncVersion)
		if err != nil {
			return err
		}
		return b.goCmd(ctx, src, []string{"CGO_ENABLED=1"}, "build", "-mod=readonly", "-trimpath", "-buildmode=pie",
			"-tags", "seccomp urfave_cli_no_docs netgo osusergo",
			"-ldflags", "-s -w -linkmode external -extldflags -static-pie",
			"-o", filepath.Join(tmp, "runc"), ".")
	})
}

// runcPrerequisites checks what runc's cgo build needs of this host, naming
// the package that provides what is missing.
func runcPrerequisites(ctx context.Context) error {
	const fix = "install it (Debian: apt-get install -y gcc libc6-dev pkg-config libseccomp-dev; .ci/run does)"
	if _, err := exec.LookPath("gcc"); err != nil {
		return errors.New("gcc not found: runc's nsenter is C, compiled with cgo: " + fix)
	}
	pkgConfig, err := exec.LookPath("pkg-config")
	if err != nil {
		return errors.New("pkg-config not found: runc's seccomp support finds libseccomp with it: " + fix)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, pkgConfig, "--variable=libdir", "libseccomp")
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return errors.New("libseccomp's development files not found (pkg-config libseccomp): runc is built with seccomp: " + fix)
	}
	static := filepath.Join(strings.TrimSpace(out.String()), "libseccomp.a")
	if _, err := os.Stat(static); err != nil {
		return fmt.Errorf("%s not found: runc is linked statically: %s", static, fix)
	}
	return nil
}
