//go:build unix

package userfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRead is the door's table: every kind of path a user can name, and
// what Read answers.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	k := Kind{What: "inventory (YAML)", Max: 16}
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	type want struct {
		data     string // when no error
		problem  string // in the error
		fix      string
		notExist bool
	}
	cases := []struct {
		name, path string
		want
		root bool // the case is not one for root, who reads anything
	}{
		{name: "a regular file", path: write("ok.yaml", []byte("machines: []\n"), 0o600), want: want{data: "machines: []\n"}},
		{name: "an empty file is read as empty", path: write("empty.yaml", nil, 0o600), want: want{data: ""}},
		{name: "a file at the limit", path: write("at.yaml", bytes.Repeat([]byte("a"), 16), 0o600), want: want{data: strings.Repeat("a", 16)}},
		{name: "a file one byte over the limit", path: write("over.yaml", bytes.Repeat([]byte("a"), 17), 0o600),
			want: want{problem: "is 17 bytes, more than a inventory (YAML) holds (at most 16 bytes)", fix: "pass the path of the inventory (YAML) itself"}},
		{name: "missing", path: filepath.Join(dir, "none.yaml"), want: want{problem: "does not exist", fix: "check the path of the inventory (YAML)", notExist: true}},
		{name: "empty path", path: "", want: want{problem: "is empty", fix: "pass the path"}},
		{name: "standard input", path: "-", want: want{problem: "is not read as standard input", fix: "write it to a file"}},
		{name: "a directory", path: dir, want: want{problem: "is a directory, not a file", fix: "pass the path of the inventory (YAML) in it"}},
		{name: "/dev/zero", path: "/dev/zero", want: want{problem: "is a character device, not a file", fix: "pass the path of the inventory (YAML)"}},
		{name: "/dev/null", path: "/dev/null", want: want{problem: "is a character device, not a file"}},
		{name: "a link to /dev/zero", path: zeroLink, want: want{problem: "is a link to /dev/zero, a character device, not a file"}},
		{name: "a FIFO nobody writes", path: fifo, want: want{problem: "is a named pipe (FIFO), not a file", fix: "write it to a file and pass that file's path (a pipe or a process substitution"}},
		{name: "a Unix socket", path: sock, want: want{problem: "is a socket, not a file"}},
		{name: "an unreadable file", path: write("secret.yaml", []byte("x"), 0o000), root: true,
			want: want{problem: "cannot be read (permission denied)", fix: "make it readable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			start := time.Now()
			data, err := Read("--inventory", c.path, k)
			if d := time.Since(start); d > time.Second {
				t.Errorf("Read took %s: it must answer at once", d)
			}
			if c.problem == "" {
				if err != nil || string(data) != c.data {
					t.Fatalf("Read = %q, %v; want %q", data, err, c.data)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Read = %q, %v; want an *Error", data, err)
			}
			if data != nil {
				t.Errorf("Read returned %d bytes with its error", len(data))
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "--inventory "+c.path+" ") {
				t.Errorf("%q does not start with the flag and the path", msg)
			}
			if !strings.Contains(e.Problem, c.problem) || !strings.Contains(e.Fix, c.fix) || e.Fix == "" {
				t.Errorf("problem %q, fix %q; want %q and %q", e.Problem, e.Fix, c.problem, c.fix)
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("%q is more than one line", msg)
			}
			if errors.Is(err, fs.ErrNotExist) != c.notExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v", !c.notExist)
			}
		})
	}
}

// TestFIFOWithWriterStillRefused: a FIFO is refused even when something
// writes it (a process substitution): what it gives can be read once.
func TestFIFOWithWriterStillRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader that holds the FIFO open lets a writer open it without blocking.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("machines: []\n"); err != nil {
		t.Fatal(err)
	}
	if data, err := Read("--inventory", fifo, Config("inventory")); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("Read = %q, %v; want the FIFO refused", data, err)
	}
}

// TestPrivate: a file of a Private kind (a secret) that its group or
// others may read or write is refused, naming its mode and the chmod; one
// its owner's alone is read.
func TestPrivate(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o600, true}, {0o400, true}, {0o644, false}, {0o640, false}, {0o604, false}, {0o620, false}, {0o602, false}} {
		p := filepath.Join(dir, "pw")
		os.Remove(p)
		if err := os.WriteFile(p, []byte("hunter2\n"), c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, c.mode); err != nil { // past the umask
			t.Fatal(err)
		}
		data, err := Read("machines[0].passwordFrom.file", p, Secret)
		if c.ok {
			if err != nil || string(data) != "hunter2\n" {
				t.Errorf("mode %#o: Read = %q, %v; want it read", c.mode, data, err)
			}
			continue
		}
		want := fmt.Sprintf("machines[0].passwordFrom.file %s is open to others (mode %#o): a file that holds a secret must be its owner's alone: chmod 600 %s", p, c.mode, p)
		if err == nil || err.Error() != want {
			t.Errorf("mode %#o: Read = %q, %v;\nwant %s", c.mode, data, err, want)
		}
		if strings.Contains(fmt.Sprint(err), "hunter2") {
			t.Errorf("the error holds the secret")
		}
	}
	// A kind that holds no secret takes any mode.
	p := filepath.Join(dir, "inv")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read("--inventory", p, Config("inventory")); err != nil {
		t.Errorf("an inventory open to others: %v", err)
	}
}
