//go:build !unix

package userfile

import "os"

// openNonBlocking opens path to read. Opening a file does not block on
// Windows: a named pipe there is \\.\pipe\..., which Stat refuses.
func openNonBlocking(path string) (*os.File, error) {
	return os.Open(path)
}
