package nodeimage

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// DebianSuite is the Debian release of the node's root file system.
const DebianSuite = "bookworm"

// debianPackages are what kind's base image installs, taken from Debian;
// containerd and runc are compiled (containerd.go).
var debianPackages = []string{
	"systemd", "systemd-sysv", "dbus", "iptables", "nftables", "conntrack",
	"iproute2", "ethtool", "util-linux", "mount", "kmod", "libseccomp2", "pigz", "ca-certificates",
	"procps", "containernetworking-plugins", "socat", "ebtables", "jq", "e2fsprogs", "libcap2-bin",
}

// DefaultMirror is used when apt's configuration names no Debian mirror.
const DefaultMirror = "http://deb.debian.org/debian"

// AptMirror returns the Debian mirror apt is configured with: the first URI of
// a one-line (sources.list) or deb822 (*.sources) entry that serves a Debian
// suite other than the security one.
func AptMirror(files map[string]string) string {
	for _, name := range sortedKeys(files) {
		content := files[name]
		if strings.HasSuffix(name, ".sources") {
			for _, stanza := range strings.Split(content, "\n\n") {
				fields := map[string]string{}
				for _, line := range strings.Split(stanza, "\n") {
					if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, " ") {
						fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
					}
				}
				if !slices.Contains(strings.Fields(fields["types"]), "deb") || strings.EqualFold(fields["enabled"], "no") {
					continue
				}
				if u := strings.Fields(fields["uris"]); len(u) > 0 && debianMain(u[0], fields["suites"]) {
					return u[0]
				}
			}
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(content))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 3 || f[0] != "deb" {
				continue
			}
			f = f[1:]
			if strings.HasPrefix(f[0], "[") { // [arch=amd64 signed-by=...]
				for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
					f = f[1:]
				}
				if len(f) > 0 {
					f = f[1:]
				}
			}
			if len(f) >= 2 && debianMain(f[0], f[1]) {
				return f[0]
			}
		}
	}
	return DefaultMirror
}

func debianMain(uri, suites string) bool {
	return strings.HasSuffix(strings.TrimSuffix(uri, "/"), "/debian") && !strings.Contains(suites, "security")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // sources.list, then sources.list.d/* in order
	return keys
}

func readAptSources() map[string]string {
	files := map[string]string{}
	paths, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	for _, p := range append([]string{"/etc/apt/sources.list"}, paths...) {
		if data, err := os.ReadFile(p); err == nil {
			files[p] = string(data)
		}
	}
	return files
}

// rootfsKey names the prepared root file system by everything in it: the
// Debian packages, kind's base files, containerd and runc. It does not
// depend on the Kubernetes line: every line's node image shares it.
func rootfsKey() string {
	h := sha256.Sum256([]byte(strings.Join([]string{recipe, DebianSuite, strings.Join(debianPackages, ","),
		KindVersion(), ContainerdVersion, RuncVersion}, ";")))
	return DebianSuite + "-" + hex.EncodeToString(h[:])[:12]
}

// ensureRootfs makes the prepared root file system once per rootfsKey:
// debootstrap, then what kind's base Dockerfile does.
func (b *build) ensureRootfs(ctx context.Context) error {
	b.rootfs = filepath.Join(b.spec.CacheDir, "rootfs", rootfsKey())
	if _, err := os.Stat(b.rootfs + ".done"); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return errors.New("building the node's root file system needs root (debootstrap, chroot): run as root, or set a node image that can be pulled")
	}
	debootstrap, err := exec.LookPath("debootstrap")
	if err != nil {
		return errors.New("debootstrap not found: install it (apt-get install -y debootstrap), or set a node image that can be pulled")
	}
	mirror := b.spec.Mirror
	if mirror == "" {
		mirror = AptMirror(readAptSources())
	}
	os.RemoveAll(b.rootfs)
	if err := os.MkdirAll(filepath.Dir(b.rootfs), 0o755); err != nil {
		return err
	}
	if err := b.command(ctx, "", nil, debootstrap, "--variant=minbase", "--include="+strings.Join(debianPackages, ","),
		DebianSuite, b.rootfs, mirror); err != nil {
		return fmt.Errorf("debootstrap from %s: %w", mirror, err)
	}
	return nil
}

// prepareBase applies kind's base image recipe to the root file system: its
// entrypoint, scripts, containerd and kubelet configuration and units, the
// compiled containerd and runc where kind's Dockerfile puts its own, and
// Debian's binaries for the rest (crictl and fuse-overlayfs left out).
func (b *build) prepareBase(ctx context.Context) error {
	if _, err := os.Stat(b.rootfs + ".done"); err == nil {
		return nil
	}
	r := b.rootfs
	k := filepath.Join(b.kindDir, "images", "base", "files")
	copies := []struct {
		src, dst string
		mode     os.FileMode
	}{
		{"usr/local/bin/*", "usr/local/bin", 0o755},
		{"kind/bin/*", "kind/bin", 0o755},
		{"kind/README.txt", "kind", 0o644},
		{"etc/crictl.yaml", "etc", 0o644},
		{"etc/containerd/*", "etc/containerd", 0o644},
		{"etc/default/*", "etc/default", 0o644},
		{"etc/sysctl.d/*", "etc/sysctl.d", 0o644},
		{"etc/systemd/system/*.service", "etc/systemd/system", 0o644},
		{"etc/systemd/system/*.slice", "etc/systemd/system", 0o644},
		{"etc/systemd/system/kubelet.service.d/*", "etc/systemd/system/kubelet.service.d", 0o644},
	}
	for _, c := range copies {
		matches, _ := filepath.Glob(filepath.Join(k, c.src))
		if len(matches) == 0 {
			return fmt.Errorf("kind base files: nothing matches %s in %s", c.src, k)
		}
		for _, m := range matches {
			if err := installFile(m, filepath.Join(r, c.dst, filepath.Base(m)), c.mode); err != nil {
				return err
			}
		}
	}
	// Where kind's Dockerfile installs them: its containerd unit runs
	// /usr/local/bin/containerd, which finds the shim and runc on PATH.
	for _, c := range containerdCommands {
		if err := installFile(b.bins.containerd[c], filepath.Join(r, "usr/local/bin", c), 0o755); err != nil {
			return err
		}
	}
	if err := installFile(b.bins.runc, filepath.Join(r, "usr/local/sbin/runc"), 0o755); err != nil {
		return err
	}
	if err := editFile(filepath.Join(r, "etc/containerd/config.toml"), dropFuseOverlayfs); err != nil {
		return err
	}
	// CNI plugins come from Debian's containernetworking-plugins.
	os.RemoveAll(filepath.Join(r, "opt/cni/bin"))
	if err := relink(filepath.Join(r, "opt/cni/bin"), "/usr/lib/cni"); err != nil {
		return err
	}
	if err := b.criBaseSpec(ctx); err != nil {
		return err
	}
	for _, glob := range []string{
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*", "lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*", "lib/systemd/system/basic.target.wants/*",
		"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*",
	} {
		matches, _ := filepath.Glob(filepath.Join(r, glob))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
	if err := editFile(filepath.Join(r, "etc/systemd/journald.conf"), func(s string) (string, error) {
		return strings.TrimRight(s, "\n") + "\nReadKMsg=no\n", nil
	}); err != nil {
		return err
	}
	if err := relink(filepath.Join(r, "sbin/init"), "/usr/lib/systemd/systemd"); err != nil {
		return err
	}
	if err := b.command(ctx, "", nil, "chroot", r, "systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service"); err != nil {
		return err
	}
	if err := b.command(ctx, "", nil, "chroot", r, "systemctl", "mask", "systemd-binfmt.service"); err != nil {
		return err
	}
	for _, d := range []string{"etc/kubernetes/manifests", "kind/manifests", "etc/cni/net.d"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(r, "kind"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(b.rootfs+".done", nil, 0o644)
}

// dropFuseOverlayfs removes kind's fuse-overlayfs snapshotter (for rootless
// hosts; Debian has no such proxy plugin) from containerd's configuration.
func dropFuseOverlayfs(s string) (string, error) {
	var out []string
	skipping := false
	found := false
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[proxy_plugins") {
			skipping, found = true, true
			continue
		}
		if skipping {
			if strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "[proxy_plugins") {
				skipping = false
			} else {
				continue
			}
		}
		out = append(out, line)
	}
	if !found {
		return s, nil
	}
	return strings.Join(out, "\n"), nil
}

// criBaseSpec writes containerd's base OCI spec as kind's Dockerfile does:
// `ctr oci spec` with kind's product-files hook added and rlimits removed.
func (b *build) criBaseSpec(ctx context.Context) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "chroot", b.rootfs, "/usr/local/bin/ctr", "oci", "spec")
	cmd.Stdout, cmd.Stderr = &out, b.out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("chroot ctr oci spec: %w", err)
	}
	spec, err := adjustOCISpec(out.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.rootfs, "etc/containerd/cri-base.json"), spec, 0o644)
}

func adjustOCISpec(raw []byte) ([]byte, error) {
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("ctr oci spec: %w", err)
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		spec["hooks"] = hooks
	}
	create, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(create, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	if p, ok := spec["process"].(map[string]any); ok {
		delete(p, "rlimits")
	}
	return json.MarshalIndent(spec, "", "  ")
}

func installFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	os.Remove(dst)
	return os.WriteFile(dst, data, mode)
}

func relink(path, target string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	os.Remove(path)
	return os.Symlink(target, path)
}

func editFile(path string, f func(string) (string, error)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s, err := f(string(data))
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// baseImage imports the prepared root file system as kind's base image.
func (b *build) baseImage(ctx context.Context) (string, error) {
	if err := b.prepareBase(ctx); err != nil {
		return "", err
	}
	tag := LocalImagePrefix + "kind-base:" + filepath.Base(b.rootfs)
	if b.docker.ImageExists(ctx, tag) {
		return tag, nil
	}
	tarCmd := exec.CommandContext(ctx, "tar", "-C", b.rootfs, "--numeric-owner", "-c", ".")
	tarCmd.Stderr = b.out
	pipe, err := tarCmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := tarCmd.Start(); err != nil {
		return "", err
	}
	_, importErr := b.docker.Output(ctx, pipe, "import",
		"--change", "ENV container=docker",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"-", tag)
	io.Copy(io.Discard, pipe)
	tarErr := tarCmd.Wait()
	if importErr != nil {
		return "", importErr
	}
	if tarErr != nil {
		return "", fmt.Errorf("tar of %s: %w", b.rootfs, tarErr)
	}
	return tag, nil
}
