// Package userfile is the one way the harness reads a file a user names:
// by a flag (--inventory, --kubeconfig), an environment variable
// ($WINCONFORM_IMAGE_OVERRIDES) or a reference inside another file (a
// secret's file:, a CA bundle).
//
// The rules, the same for every such file:
//
//   - Only a regular file is read (a link to one is followed). A directory,
//     a device (/dev/zero would never end), a socket and a named pipe are
//     refused before one byte is read. A named pipe is a FIFO, and so is a
//     shell's process substitution <(...): it is refused, with the fix
//     "write it to a file", because the harness reads some files twice (the
//     check, then the run; the harness, then the suite it starts) and a
//     pipe gives its content once, and a pipe nobody writes would block.
//   - "-" is a file's name, not standard input: standard input is read
//     nowhere, for the same reason. It is refused with the same fix.
//   - The file is opened without blocking (O_NONBLOCK on Unix: opening a
//     FIFO nobody writes returns at once), and what it is comes from the
//     opened file (fstat), not from its path: a file swapped for another
//     between the check and the read cannot pass.
//   - A file that holds a secret (Kind.Private) must be its owner's alone:
//     one its group or others may read or write (mode & 0o077) is refused
//     with the fix "chmod 600 FILE", as ssh refuses an unprotected key.
//     Windows files have no such mode, and are not checked.
//   - A file is read up to its kind's limit (Kind.Max); one larger is
//     refused. An empty file is read as empty: whether that is fine is for
//     its kind to say (an empty secret file is refused, for one).
//   - Every refusal is an *Error that names where the path came from (the
//     flag or field), the path, what is wrong and the fix.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// MiB is a mebibyte, for limits.
const MiB = 1 << 20

// Kind is a kind of file a user names: what it is, in messages, and the
// most it may hold.
type Kind struct {
	// What names the kind in a fix: "pass the path of the " + What.
	What string
	// Max is the most bytes a file of the kind may hold.
	Max int64
	// Private is true for a file that holds a secret: one its group or
	// others may read or write is refused, as ssh refuses such a key
	// (not on Windows, whose files have no such mode).
	Private bool
}

// The limits of the kinds of file the harness reads. Each is far above
// what a real file of its kind holds, and far below what would exhaust
// the memory of the machine reading it.
const (
	// ConfigMax bounds a YAML file the harness reads: an inventory, a
	// cluster file, a VM file, a gate policy, an image override file.
	ConfigMax = 4 * MiB
	// KubeconfigMax bounds a kubeconfig (its certificates inline).
	KubeconfigMax = 16 * MiB
	// SecretMax bounds a file that holds one secret.
	SecretMax = 1 * MiB
	// CAMax bounds a CA bundle (PEM certificates).
	CAMax = 1 * MiB
	// StateMax bounds a run's state file (state.json).
	StateMax = 16 * MiB
	// ReportMax bounds a file of a report directory a user names (a run's
	// Ginkgo report with its evidence, the network matrix): the harness
	// wrote it, but the directory is the user's to name.
	ReportMax = 512 * MiB
	// BinaryMax bounds a binary the harness packs into an image (the probe).
	BinaryMax = 1024 * MiB
)

// Kinds the harness reads in more than one place.
var (
	Kubeconfig = Kind{What: "kubeconfig", Max: KubeconfigMax}
	Secret     = Kind{What: "file that holds only the secret", Max: SecretMax, Private: true}
	CA         = Kind{What: "CA's certificates (PEM)", Max: CAMax}
	Report     = Kind{What: "report file a run wrote", Max: ReportMax}
)

// Config is the kind of a YAML file of the harness's: what names it
// ("inventory", "VM file").
func Config(what string) Kind { return Kind{What: what + " (YAML)", Max: ConfigMax} }

// Error is a file refused: the path, where it came from, what is wrong and
// the fix.
type Error struct {
	// Origin is what named the path: a flag ("--inventory"), a variable
	// ("$WINCONFORM_IMAGE_OVERRIDES"), a field; "" for none.
	Origin string
	// Path is the path as given.
	Path string
	// Problem says what is wrong, without the path: "is a directory, not a file".
	Problem string
	// Fix says what to do.
	Fix string
	// Err is the error underneath (one matching fs.ErrNotExist,
	// fs.ErrPermission), or nil.
	Err error
}

// Error says it in one line: "--inventory /dev/zero is a character device,
// not a file: pass the path of the inventory (YAML)".
func (e *Error) Error() string {
	s := e.Path + " " + e.Problem
	if e.Origin != "" {
		s = e.Origin + " " + s
	}
	if e.Fix != "" {
		s += ": " + e.Fix
	}
	return s
}

// Unwrap returns the error underneath, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Read reads the file at path, which origin names (a flag, a variable, a
// field; "" for none), as a file of kind k: see the package's rules.
func Read(origin, path string, k Kind) ([]byte, error) {
	f, err := Open(origin, path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// File is a user's file, open and checked: reading it past its kind's
// limit is an *Error.
type File struct {
	f      *os.File
	r      io.Reader // f, up to the kind's limit and one byte more
	n      int64     // bytes read so far
	origin string
	path   string
	kind   Kind
}

// Open opens the file at path, which origin names, as a file of kind k,
// for a reader that streams it (a binary): what it is and its size are
// checked now, its size again as it is read. The caller closes it.
func Open(origin, path string, k Kind) (*File, error) {
	refuse := func(problem, fix string, err error) (*File, error) {
		return nil, &Error{Origin: origin, Path: path, Problem: problem, Fix: fix, Err: err}
	}
	switch path {
	case "":
		return refuse("is empty", "pass the path of the "+k.What, nil)
	case "-":
		return refuse(`("-") is not read as standard input`, toFile+" (a file named - is ./-)", nil)
	}
	f, err := openNonBlocking(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return refuse("does not exist", "check the path of the "+k.What, err)
		case errors.Is(err, fs.ErrPermission):
			return refuse("cannot be read (permission denied)", "make it readable by the user the harness runs as, or pass another copy of the "+k.What, err)
		}
		// A socket cannot be opened (ENXIO): say what it is, from its path
		// (nothing is read from it).
		if info, serr := os.Stat(path); serr == nil && notRegular(info.Mode()) != "" {
			problem, fix := notFile(path, info.Mode(), k)
			return refuse(problem, fix, nil)
		}
		return refuse("cannot be opened: "+causeOf(err), "check the path of the "+k.What, err)
	}
	info, err := f.Stat() // of the file opened, not of the path
	if err != nil {
		f.Close()
		return refuse("cannot be read: "+causeOf(err), "check the path of the "+k.What, err)
	}
	if notRegular(info.Mode()) != "" {
		f.Close()
		problem, fix := notFile(path, info.Mode(), k)
		return refuse(problem, fix, nil)
	}
	if m := info.Mode().Perm(); k.Private && m&0o077 != 0 && runtime.GOOS != "windows" {
		f.Close()
		return refuse(fmt.Sprintf("is open to others (mode %#o): a file that holds a secret must be its owner's alone", m),
			"chmod 600 "+path, nil)
	}
	if info.Size() > k.Max {
		f.Close()
		return refuse(fmt.Sprintf("is %s, more than a %s holds (at most %s)", size(info.Size()), k.What, size(k.Max)),
			"pass the path of the "+k.What+" itself", nil)
	}
	return &File{f: f, r: io.LimitReader(f, k.Max+1), origin: origin, path: path, kind: k}, nil
}

// Read reads the file; past the kind's limit it is an *Error.
func (f *File) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	prev := f.n
	f.n += int64(n)
	if f.n > f.kind.Max {
		return int(max(0, f.kind.Max-prev)), &Error{Origin: f.origin, Path: f.path,
			Problem: fmt.Sprintf("grew past %s as it was read, more than a %s holds", size(f.kind.Max), f.kind.What),
			Fix:     "pass the path of the " + f.kind.What + " itself, one that nothing writes to while the harness reads it"}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = &Error{Origin: f.origin, Path: f.path, Problem: "cannot be read: " + causeOf(err),
			Fix: "check the file (a disk error, a network file system that went away)", Err: err}
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// toFile is the fix for what can be read only once (standard input, a pipe).
const toFile = "write it to a file and pass that file's path"

// notFile is the problem and fix of the path of a file of kind k whose mode
// is m, no regular file's.
func notFile(path string, m fs.FileMode, k Kind) (problem, fix string) {
	what := notRegular(m)
	problem = "is " + what + ", not a file"
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path && filepath.Clean(path) != target {
		problem = "is a link to " + target + ", " + what + ", not a file"
	}
	fix = "pass the path of the " + k.What
	switch m.Type() {
	case fs.ModeNamedPipe:
		fix = toFile + " (a pipe or a process substitution <(...) is not read)"
	case fs.ModeDir:
		fix = "pass the path of the " + k.What + " in it"
	}
	return problem, fix
}

// notRegular says what a mode that is no regular file's is ("a directory"),
// or "" for a regular file.
func notRegular(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return ""
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// causeOf is err without the operation and path *os.PathError says: the
// message says the path already.
func causeOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// size says a number of bytes: "1 MiB", "1048577 bytes".
func size(n int64) string {
	if n >= MiB && n%MiB == 0 {
		return fmt.Sprintf("%d MiB", n/MiB)
	}
	return fmt.Sprintf("%d bytes", n)
}
