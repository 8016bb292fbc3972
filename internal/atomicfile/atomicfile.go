// Package atomicfile writes a file whole or not at all: what is written
// goes to a temporary file beside it, synced, then renamed over the file,
// so a reader (or a run stopped while writing) never sees half of it.
//
// It is the harness's one way to do so. github.com/google/renameio does the
// same on Unix but does not build on Windows, where the harness's reports
// and state files are written too; os.Rename replaces an existing file on
// both (MoveFileEx with MOVEFILE_REPLACE_EXISTING on Windows).
package atomicfile

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path whole or not at all, with permissions perm.
func Write(path string, data []byte, perm fs.FileMode) error {
	return Produce(path, perm, func(tmp string) error {
		return os.WriteFile(tmp, data, perm)
	})
}

// WriteJSON writes v as indented JSON with a final newline to path, whole
// or not at all, making path's directory; the harness's JSON reports are
// written so.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return Write(path, append(data, '\n'), 0o644)
}

// Produce calls write with the path of a temporary file beside path, to
// write what path is to hold, and renames it over path when write succeeds.
// A failure of write, or of the rename, leaves path as it was and removes
// the temporary file.
func Produce(path string, perm fs.FileMode, write func(tmp string) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := sync(tmp, perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// sync gives the file its permissions (CreateTemp makes it 0600) and
// flushes it to disk, so that the rename never publishes an empty file.
func sync(name string, perm fs.FileMode) error {
	if err := os.Chmod(name, perm); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
