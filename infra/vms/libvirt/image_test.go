package libvirt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user QEMU runs as comes from libvirt's capabilities: the DAC
// security model's base label per domain type (libvirt's
// docs/formatcaps: <secmodel><model>dac</model><baselabel type='kvm'>
// +64055:+64055</baselabel>..., Debian's libvirt-qemu).
func TestDACLabel(t *testing.T) {
	caps := []byte(`<capabilities><host><secmodel><model>none</model><doi>0</doi></secmodel>` +
		`<secmodel><model>dac</model><doi>0</doi><baselabel type='kvm'>+64055:+64055</baselabel><baselabel type='qemu'>+107:+110</baselabel></secmodel></host></capabilities>`)
	if uid, gid, err := dacLabel(caps, "qemu"); err != nil || uid != 107 || gid != 110 {
		t.Errorf("qemu: %d %d %v", uid, gid, err)
	}
	if uid, gid, err := dacLabel(caps, "kvm"); err != nil || uid != 64055 || gid != 64055 {
		t.Errorf("kvm: %d %d %v", uid, gid, err)
	}
	if _, _, err := dacLabel(caps, "xen"); err == nil {
		t.Error("a type without a label")
	}
}

// Whether a user may read a file, by the mode bits of the file and of
// every directory on the way, as the kernel decides for QEMU's process.
func TestUnreadable(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the files' owners are set as root")
	}
	const qemu, group = 64055, 64055
	dir := openDir(t)
	closed := filepath.Join(dir, "closed")
	os.Mkdir(closed, 0o750)
	grouped := filepath.Join(dir, "grouped")
	os.Mkdir(grouped, 0o750)
	os.Chown(grouped, 0, group)
	for _, d := range []string{closed, grouped} {
		os.WriteFile(filepath.Join(d, "golden.qcow2"), nil, 0o644)
	}
	private := filepath.Join(dir, "private.qcow2")
	os.WriteFile(private, nil, 0o600)
	owned := filepath.Join(dir, "owned.qcow2")
	os.WriteFile(owned, nil, 0o600)
	os.Chown(owned, qemu, 0)
	for path, want := range map[string]string{
		filepath.Join(closed, "golden.qcow2"):  "may not enter " + closed,
		filepath.Join(grouped, "golden.qcow2"): "",
		private:                                "may not read the file",
		owned:                                  "",
	} {
		got := unreadable(path, qemu, []int{group})
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if got := unreadable(private, 0, nil); got != "" {
		t.Errorf("root: %q", got)
	}
}

// openDir is a new directory every user may enter (t.TempDir's parent is
// root's alone), removed after the test.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "winconform-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
