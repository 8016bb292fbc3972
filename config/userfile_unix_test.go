//go:build unix

package config

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestLoadRefusesWhatIsNoFile: every kind of file Load reads goes through
// the one door (internal/userfile): a device, a FIFO nobody writes and a
// directory are refused at once, in one *Error naming the path, what it
// is and the fix, never read (no hang, no out of memory).
func TestLoadRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	load := map[string]func(string) error{
		"Inventory":      func(p string) error { _, err := Load[Inventory](p, mapEnv(nil)); return err },
		"Cluster":        func(p string) error { _, err := Load[Cluster](p, mapEnv(nil)); return err },
		"Machines":       func(p string) error { _, err := Load[Machines](p, mapEnv(nil)); return err },
		"GatePolicy":     func(p string) error { _, err := Load[GatePolicy](p, mapEnv(nil)); return err },
		"ImageOverrides": func(p string) error { _, err := Load[ImageOverrides](p, mapEnv(nil)); return err },
	}
	for kind, load := range load {
		for path, want := range map[string]string{
			"/dev/zero": "is a character device, not a file; pass the path of the " + kind + " file (YAML)",
			fifo:        "is a named pipe (FIFO), not a file; write it to a file",
			dir:         "is a directory, not a file",
		} {
			start := time.Now()
			err := load(path)
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s %s: Load took %s", kind, path, d)
			}
			var e *Error
			if !errors.As(err, &e) || len(e.List) != 1 || !strings.HasPrefix(err.Error(), path+": the path "+want) {
				t.Errorf("%s %s: Load = %v; want %q", kind, path, err, want)
			}
		}
	}
}

// TestSecretFileIsNoFile: a secret's file: that is a device or a FIFO is
// refused naming the field, never read.
func TestSecretFileIsNoFile(t *testing.T) {
	f := newFixture(t)
	fifo := f.path("fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "is a character device, not a file"},
		{fifo, "is a named pipe (FIFO), not a file"},
	} {
		_, err := f.load(strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: "+c.path+"}", 1), nil)
		list, _ := problemsOf(t, err)
		if len(list) != 1 || list[0].Field != field.NewPath("machines").Index(0).Child("passwordFrom", "file").String() ||
			!strings.Contains(list[0].Detail, c.want) {
			t.Errorf("%s: %v; want %q", c.path, err, c.want)
		}
	}
}
