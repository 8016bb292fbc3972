package libvirtguest

import (
	"fmt"
	"io"
	"io/fs"
)

// cpioWriter writes an initramfs in the "new" (SVR4, newc) portable cpio
// format the kernel unpacks (Documentation/driver-api/early-userspace/
// buffer-format.rst): a 110-byte ASCII header of 13 eight-digit hex fields
// after the magic 070701, the NUL-terminated name, and the data, each padded
// to 4 bytes; a last entry named TRAILER!!!. It needs no privileges to make
// device nodes (/dev/console), which the kernel opens for init's standard
// streams before any devtmpfs is mounted.
type cpioWriter struct {
	w   io.Writer
	ino int
	n   int64 // bytes written, for the padding
	err error
}

func (c *cpioWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

// entry writes one entry: mode holds the type bits (cpioDir, cpioFile...)
// and the permissions; rdev the major and minor of a device node.
func (c *cpioWriter) entry(name string, mode uint32, data []byte, rmajor, rminor uint32) {
	c.ino++
	nlink := 1
	if mode&cpioTypeMask == cpioDir {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

// The type bits of a cpio entry's mode (as stat's).
const (
	cpioTypeMask = 0o170000
	cpioDir      = 0o040000
	cpioFile     = 0o100000
	cpioSymlink  = 0o120000
	cpioCharDev  = 0o020000
)

func (c *cpioWriter) dir(name string) { c.entry(name, cpioDir|0o755, nil, 0, 0) }
func (c *cpioWriter) file(name string, perm fs.FileMode, data []byte) {
	c.entry(name, cpioFile|uint32(perm.Perm()), data, 0, 0)
}
func (c *cpioWriter) symlink(name, target string) {
	c.entry(name, cpioSymlink|0o777, []byte(target), 0, 0)
}
func (c *cpioWriter) charDev(name string, major, minor uint32) {
	c.entry(name, cpioCharDev|0o600, nil, major, minor)
}

// close writes the trailer.
func (c *cpioWriter) close() error {
	c.entry("TRAILER!!!", 0, nil, 0, 0)
	return c.err
}
