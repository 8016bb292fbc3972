// Package libvirtguest builds the libvirt provider's stand-in golden image: a
// small Linux guest, made from Debian's packages, that answers as a Windows
// machine's WinRM service does, so that the provider and the lifecycle run
// for real (a libvirt domain under QEMU, its network, its overlay) on a
// machine that has no Windows.
//
// The guest is a kernel from Debian's linux-image package (its vmlinuz, with
// the virtio drivers it builds as modules carried in the initramfs), a
// busybox initramfs whose init (init.sh) brings eth0 up, and a disk: a
// qcow2 whose content is a tar archive of the WS-Management stand-in
// (tools/wsmanstandin, built static), which the init
// unpacks from /dev/vda and runs on 5985. The disk is the golden image the
// provider makes each machine's overlay of; the kernel and initramfs boot it
// directly (libvirt's <kernel> and <initrd>). Real golden images (Windows)
// boot from their disk instead.
//
// The image is built once per set of inputs (the packages' versions, the
// stand-in binary, the init) into the cache (nodeimage.DefaultCacheDir:
// $WINCONFORM_CACHE, else ~/.cache/winconform), under libvirt-standin/<key>.
//
// It is a simulated machine: a VM made from it supports, and never counts
// as evidence of, a claim about Windows machines.
package libvirtguest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/winconform/winconform/infra/gotool"
)

// recipe changes whenever the way the image is put together changes.
const recipe = "1"

// The Debian packages the guest is made of: the kernel (through its
// metapackage, which names the current ABI's package) and a static busybox.
const (
	kernelMetaPackage = "linux-image-amd64"
	busyboxPackage    = "busybox-static"
)

// Package is the stand-in command's package, built static for the guest.
const Package = "./tools/wsmanstandin"

// modules are the drivers the guest needs and Debian builds as modules:
// the virtio PCI transport, its network card and its disk. Their
// dependencies (the depends= of each module's .modinfo) come along.
var modules = []string{"virtio_pci", "virtio_net", "virtio_blk"}

// Cmdline is the kernel command line every stand-in guest boots with; the
// provider adds the machine's name and, on a Docker bridge, its address.
const Cmdline = "console=ttyS0 quiet panic=-1"

//go:embed init.sh
var initScript []byte

//go:embed udhcpc.sh
var udhcpcScript []byte

// Spec says where to build the image and from what.
type Spec struct {
	// CacheDir is the harness's cache (nodeimage.DefaultCacheDir).
	CacheDir string
	// ModuleDir is the winconform module's source, whose stand-in command
	// is built; found from the working directory (go env GOMOD) when empty.
	ModuleDir string
	// Log receives the build's commands and output; nil discards them.
	Log io.Writer
}

// Image is a built stand-in image.
type Image struct {
	// Dir holds the files; Key is the digest of the inputs that named it.
	Dir, Key string
	// Kernel and Initrd are the guest's kernel and initramfs, Disk its
	// golden disk (qcow2).
	Kernel, Initrd, Disk string
	// Packages are the Debian packages it was made from, name=version.
	Packages []string
}

// Ensure returns the image for spec's inputs, building it when the cache
// has none. It needs apt (with its package lists), dpkg-deb, qemu-img and
// the go tool.
func Ensure(ctx context.Context, spec Spec) (Image, error) {
	log := spec.Log
	if log == nil {
		log = io.Discard
	}
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-deb", "qemu-img"} {
		if _, err := exec.LookPath(tool); err != nil {
			return Image{}, fmt.Errorf("the stand-in image needs %s, which is not on PATH: install Debian's apt, dpkg and qemu-utils", tool)
		}
	}
	modDir, err := moduleDir(ctx, spec.ModuleDir)
	if err != nil {
		return Image{}, err
	}
	kernelPkg, kernelVer, err := resolveKernel(ctx)
	if err != nil {
		return Image{}, err
	}
	busyboxVer, err := candidate(ctx, busyboxPackage)
	if err != nil {
		return Image{}, err
	}
	work, err := os.MkdirTemp("", "winconform-standin-")
	if err != nil {
		return Image{}, err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "standin")
	if err := gotool.Go(ctx, log, modDir, []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64"},
		"build", "-trimpath", "-ldflags", "-s -w -buildid=", "-o", bin, Package); err != nil {
		return Image{}, fmt.Errorf("building the WS-Management stand-in for the guest: %w", err)
	}
	binData, err := os.ReadFile(bin)
	if err != nil {
		return Image{}, err
	}
	pkgs := []string{kernelPkg + "=" + kernelVer, busyboxPackage + "=" + busyboxVer}
	h := sha256.New()
	for _, part := range append([]string{recipe, Cmdline, string(initScript), string(udhcpcScript), strings.Join(modules, ","),
		hex.EncodeToString(sum(binData))}, pkgs...) {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	key := hex.EncodeToString(h.Sum(nil))[:12]
	img := Image{Dir: filepath.Join(spec.CacheDir, "libvirt-standin", key), Key: key, Packages: pkgs}
	img.Kernel, img.Initrd, img.Disk = filepath.Join(img.Dir, "vmlinuz"), filepath.Join(img.Dir, "initrd.img"), filepath.Join(img.Dir, "disk.qcow2")
	if err := os.MkdirAll(filepath.Dir(img.Dir), 0o755); err != nil {
		return Image{}, fmt.Errorf("the stand-in image's cache: %w", err)
	}
	start := time.Now()
	err = fillOnce(img.Dir, func(tmp string) error {
		fmt.Fprintf(log, "=== building the stand-in guest image %s from %s\n", key, strings.Join(pkgs, ", "))
		return build(ctx, log, tmp, work, pkgs, binData)
	})
	if err != nil {
		return Image{}, fmt.Errorf("building the stand-in guest image: %w", err)
	}
	fmt.Fprintf(log, "=== stand-in guest image %s ready in %s\n", img.Dir, time.Since(start).Round(100*time.Millisecond))
	return img, nil
}

func sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// moduleDir is dir, else the module of the working directory, which must
// be winconform's.
func moduleDir(ctx context.Context, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the winconform module (go env GOMOD): %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	data, err := os.ReadFile(gomod)
	if gomod == "" || gomod == os.DevNull || err != nil || !bytes.Contains(data, []byte("module github.com/winconform/winconform\n")) {
		return "", errors.New("the stand-in image is built from winconform's source: run from the winconform repository")
	}
	return filepath.Dir(gomod), nil
}

// aptShow returns the fields of the candidate version of pkg.
func aptShow(ctx context.Context, pkg string) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "show", "--no-all-versions", pkg).Output()
	fields := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
			if _, seen := fields[k]; !seen {
				fields[k] = strings.TrimSpace(v)
			}
		}
	}
	if err != nil || fields["Version"] == "" {
		return nil, fmt.Errorf("apt knows no package %s (apt-cache show: %v): run apt-get update", pkg, err)
	}
	return fields, nil
}

func candidate(ctx context.Context, pkg string) (string, error) {
	f, err := aptShow(ctx, pkg)
	if err != nil {
		return "", err
	}
	return f["Version"], nil
}

// resolveKernel finds the kernel package the metapackage depends on now
// (linux-image-6.1.0-56-amd64) and its version.
func resolveKernel(ctx context.Context) (string, string, error) {
	f, err := aptShow(ctx, kernelMetaPackage)
	if err != nil {
		return "", "", err
	}
	var pkg string
	for _, dep := range strings.Split(f["Depends"], ",") {
		name := strings.Fields(strings.TrimSpace(dep))
		if len(name) > 0 && strings.HasPrefix(name[0], "linux-image-") {
			pkg = name[0]
			break
		}
	}
	if pkg == "" {
		return "", "", fmt.Errorf("%s depends on no linux-image package (Depends: %s)", kernelMetaPackage, f["Depends"])
	}
	ver, err := candidate(ctx, pkg)
	return pkg, ver, err
}

// build makes the image's files in dir.
func build(ctx context.Context, log io.Writer, dir, work string, pkgs []string, standin []byte) error {
	debs := filepath.Join(work, "debs")
	root := filepath.Join(work, "root")
	for _, d := range []string{debs, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := gotool.Run(ctx, log, debs, nil, "apt-get", append([]string{"download", "-q"}, pkgs...)...); err != nil {
		return fmt.Errorf("downloading %s: %w", strings.Join(pkgs, " "), err)
	}
	files, err := filepath.Glob(filepath.Join(debs, "*.deb"))
	if err != nil || len(files) != len(pkgs) {
		return fmt.Errorf("apt-get download left %d packages, want %d", len(files), len(pkgs))
	}
	for _, f := range files {
		if err := gotool.Run(ctx, log, debs, nil, "dpkg-deb", "-x", f, root); err != nil {
			return err
		}
	}
	kernels, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(kernels) != 1 {
		return fmt.Errorf("the kernel package holds %d vmlinuz, want 1", len(kernels))
	}
	if err := copyFile(kernels[0], filepath.Join(dir, "vmlinuz")); err != nil {
		return err
	}
	order, err := moduleOrder(root, modules)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "modules, in load order: %s\n", strings.Join(names(order), " "))
	if err := writeInitramfs(filepath.Join(dir, "initrd.img"), root, order); err != nil {
		return fmt.Errorf("the initramfs: %w", err)
	}
	raw := filepath.Join(work, "disk.tar")
	if err := writeDisk(raw, standin); err != nil {
		return fmt.Errorf("the disk: %w", err)
	}
	return gotool.Run(ctx, log, work, nil, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, filepath.Join(dir, "disk.qcow2"))
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// module is a kernel module file and what it depends on.
type module struct {
	name, path string
	depends    []string
}

func names(ms []module) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.name
	}
	return out
}

// moduleOrder finds the modules wanted, and what they depend on, under
// root's lib/modules, in an order in which each comes after its
// dependencies. A package unpacked has no modules.dep (depmod makes it on
// install), so the dependencies come from each module's .modinfo.
func moduleOrder(root string, want []string) ([]module, error) {
	byName := map[string]string{}
	err := filepath.WalkDir(filepath.Join(root, "lib", "modules"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".ko") {
			byName[strings.ReplaceAll(strings.TrimSuffix(d.Name(), ".ko"), "-", "_")] = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the kernel package's modules: %w", err)
	}
	var order []module
	state := map[string]int{} // 1: visiting, 2: done
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("module %s depends on itself", name)
		case 2:
			return nil
		}
		state[name] = 1
		p, ok := byName[name]
		if !ok {
			return fmt.Errorf("the kernel package has no module %s (is it built in? then drop it from the list)", name)
		}
		deps, err := moduleDepends(p)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, module{name: name, path: p, depends: deps})
		return nil
	}
	for _, w := range want {
		if err := visit(w); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleDepends reads depends= from a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("module %s has no .modinfo", path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			var deps []string
			for _, d := range strings.Split(string(v), ",") {
				if d != "" {
					deps = append(deps, strings.ReplaceAll(d, "-", "_"))
				}
			}
			return deps, nil
		}
	}
	return nil, nil
}

// writeInitramfs writes the gzip'd cpio: busybox, the init, the modules
// and their load order, and /dev/console.
func writeInitramfs(path, root string, order []module) error {
	busybox, err := os.ReadFile(filepath.Join(root, "bin", "busybox"))
	if err != nil {
		return fmt.Errorf("the busybox package: %w", err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	c := &cpioWriter{w: zw}
	for _, d := range []string{"bin", "dev", "etc", "lib", "lib/modules", "opt", "proc", "sys", "tmp", "run"} {
		c.dir(d)
	}
	c.charDev("dev/console", 5, 1)
	c.file("bin/busybox", 0o755, busybox)
	c.symlink("bin/sh", "busybox")
	c.file("init", 0o755, initScript)
	c.file("etc/udhcpc.script", 0o755, udhcpcScript)
	var load []string
	for _, m := range order {
		data, err := os.ReadFile(m.path)
		if err != nil {
			return err
		}
		c.file("lib/modules/"+m.name+".ko", 0o644, data)
		load = append(load, m.name)
	}
	c.file("etc/modules.load", 0o644, []byte(strings.Join(load, "\n")+"\n"))
	if err := c.close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// diskAlign is what the raw disk is padded to: a whole number of MiB.
const diskAlign = 1 << 20

// writeDisk writes the disk's content: a tar archive of the stand-in,
// padded with zeros (the archive's end) to a whole MiB.
func writeDisk(path string, standin []byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "standin", Mode: 0o755, Size: int64(len(standin)), Typeflag: tar.TypeReg,
		ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := tw.Write(standin); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if r := buf.Len() % diskAlign; r != 0 {
		buf.Write(make([]byte, diskAlign-r))
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// fillOnce fills dir unless it exists: f fills a directory of this call's
// own beside it, renamed into place when f succeeds. Two processes may
// build the same image at once (make test runs packages in parallel): the
// first rename wins, and the other's build is thrown away.
func fillOnce(dir string, f func(tmp string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := f(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return nil // another build finished first
		}
		return err
	}
	return nil
}
