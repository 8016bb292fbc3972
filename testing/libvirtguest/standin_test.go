package libvirtguest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/nodeimage"
)

// cpioEntry is one entry read back from a newc archive.
type cpioEntry struct {
	name       string
	mode       uint32
	rmaj, rmin uint32
	data       []byte
}

// readCPIO reads a newc archive as the kernel does
// (Documentation/driver-api/early-userspace/buffer-format.rst): each
// header, name and body aligned to 4 bytes, up to TRAILER!!!.
func readCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	field := func(i int) uint32 {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+6+8*i+8]), 16, 32)
		if err != nil {
			t.Fatalf("header at %d: field %d: %v", off, i, err)
		}
		return uint32(v)
	}
	align := func(n int) int { return (n + 3) &^ 3 }
	for {
		if off%4 != 0 || string(b[off:off+6]) != "070701" {
			t.Fatalf("no newc header at offset %d", off)
		}
		mode, size, rmaj, rmin, namesize := field(1), field(6), field(9), field(10), field(11)
		name := string(b[off+110 : off+110+int(namesize)-1])
		if b[off+110+int(namesize)-1] != 0 {
			t.Fatalf("%s: the name is not NUL-terminated", name)
		}
		body := align(off + 110 + int(namesize))
		if name == "TRAILER!!!" {
			return out
		}
		out = append(out, cpioEntry{name: name, mode: mode, rmaj: rmaj, rmin: rmin, data: b[body : body+int(size)]})
		off = align(body + int(size))
	}
}

func TestCPIOWriter(t *testing.T) {
	var buf bytes.Buffer
	c := &cpioWriter{w: &buf}
	c.dir("dev")
	c.charDev("dev/console", 5, 1)
	c.file("init", 0o755, []byte("#!/bin/sh\n"))
	c.symlink("bin/sh", "busybox")
	c.file("odd", 0o644, []byte("abcde"))
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	got := readCPIO(t, buf.Bytes())
	want := []cpioEntry{
		{name: "dev", mode: 0o40755},
		{name: "dev/console", mode: 0o20600, rmaj: 5, rmin: 1},
		{name: "init", mode: 0o100755, data: []byte("#!/bin/sh\n")},
		{name: "bin/sh", mode: 0o120777, data: []byte("busybox")},
		{name: "odd", mode: 0o100644, data: []byte("abcde")},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.name != w.name || g.mode != w.mode || g.rmaj != w.rmaj || g.rmin != w.rmin || !bytes.Equal(g.data, w.data) {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
}

// TestInitScriptsParse: the init and the DHCP script are valid shell.
func TestInitScriptsParse(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for name, script := range map[string][]byte{"init.sh": initScript, "udhcpc.sh": udhcpcScript} {
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = bytes.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v: %s", name, err, out)
		}
	}
}

// TestEnsure builds the image from Debian's packages (or finds it in the
// cache) and checks what the guest boots from: the initramfs holds the init,
// busybox, /dev/console and the virtio modules after what each depends on;
// the disk is a qcow2 whose content is a tar archive of the stand-in; a
// second Ensure is a cache hit.
func TestEnsure(t *testing.T) {
	for _, tool := range []string{"apt-get", "dpkg-deb", "qemu-img"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and %s is missing: .ci/run installs it", tool)
			}
			t.Skipf("the stand-in image needs %s", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cache := nodeimage.DefaultCacheDir()
	img, err := Ensure(ctx, Spec{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hex.DecodeString(img.Key); err != nil || len(img.Key) != 12 {
		t.Errorf("key %q is not 12 hex digits", img.Key)
	}
	raw, err := os.ReadFile(img.Initrd)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	unz, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]cpioEntry{}
	for _, e := range readCPIO(t, unz) {
		files[e.name] = e
	}
	for _, name := range []string{"init", "bin/busybox", "etc/udhcpc.script", "etc/modules.load"} {
		if e, ok := files[name]; !ok || len(e.data) == 0 {
			t.Errorf("the initramfs has no %s", name)
		}
	}
	if e := files["dev/console"]; e.mode != 0o20600 || e.rmaj != 5 || e.rmin != 1 {
		t.Errorf("/dev/console is %+v, want the character device 5,1", e)
	}
	order := strings.Fields(string(files["etc/modules.load"].data))
	pos := map[string]int{}
	for i, m := range order {
		pos[m] = i
		if _, ok := files["lib/modules/"+m+".ko"]; !ok {
			t.Errorf("module %s is in the load order but not in the initramfs", m)
		}
	}
	for _, m := range modules {
		if _, ok := pos[m]; !ok {
			t.Errorf("module %s is not loaded", m)
		}
	}
	for _, before := range [][2]string{{"virtio", "virtio_pci"}, {"virtio_ring", "virtio_net"}, {"net_failover", "virtio_net"}, {"virtio", "virtio_blk"}} {
		if pos[before[0]] >= pos[before[1]] {
			t.Errorf("load order %v: %s must come before %s, which depends on it", order, before[0], before[1])
		}
	}
	disk := filepath.Join(t.TempDir(), "disk.raw")
	if out, err := exec.Command("qemu-img", "convert", "-f", "qcow2", "-O", "raw", img.Disk, disk).CombinedOutput(); err != nil {
		t.Fatalf("the disk is no qcow2: %v: %s", err, out)
	}
	f, err := os.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	h, err := tr.Next()
	if err != nil || h.Name != "standin" || h.Mode&0o111 == 0 || h.Size < 1<<20 {
		t.Errorf("the disk's archive starts with %+v, %v; want the stand-in, executable", h, err)
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("the disk's archive holds more than the stand-in: %v", err)
	}
	start := time.Now()
	again, err := Ensure(ctx, Spec{CacheDir: cache})
	if err != nil || again.Dir != img.Dir {
		t.Errorf("a second Ensure = %s, %v; want the cached %s", again.Dir, err, img.Dir)
	}
	t.Logf("cache hit in %v (the stand-in's go build, apt-cache)", time.Since(start).Round(time.Millisecond))
}

// TestFillOnceConcurrent: builds of one image in parallel (two test
// packages of make test) each succeed, and leave one complete directory.
func TestFillOnceConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fillOnce(dir, func(tmp string) error {
				time.Sleep(50 * time.Millisecond) // a build takes a while
				return os.WriteFile(filepath.Join(tmp, "vmlinuz"), []byte(strconv.Itoa(i)), 0o644)
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("build %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "vmlinuz")); err != nil {
		t.Errorf("no complete image: %v", err)
	}
	left, _ := filepath.Glob(dir + ".tmp*")
	if len(left) > 0 {
		t.Errorf("builds left %v", left)
	}
}
