//go:build unix

package userfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path to read without blocking: opening a FIFO
// that nobody writes returns at once (a blocking open would wait for a
// writer, and ignore SIGTERM while it waits).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
