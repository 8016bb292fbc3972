package userfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileGrowsPastLimit: a file that passed the size check but grows
// before it is read ends in an *Error at the limit, never more bytes.
func TestFileGrowsPastLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows")
	if err := os.WriteFile(p, []byte("abcd"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open("--vms", p, Kind{What: "VM file", Max: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(p, []byte("0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Problem, "grew past 8 bytes") {
		t.Fatalf("ReadAll = %q, %v; want the growth refused", data, err)
	}
	if len(data) > 8 {
		t.Errorf("read %d bytes, past the limit of 8", len(data))
	}
}

// TestErrorWithoutOrigin: a path no flag names is said alone.
func TestErrorWithoutOrigin(t *testing.T) {
	_, err := Read("", filepath.Join(t.TempDir(), "x"), Secret)
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Dir(err.(*Error).Path)) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzRead checks the reader's contract over sizes and limits: a file of
// at most the limit reads whole and unchanged, one larger is an *Error and
// never data, and nothing panics.
func FuzzRead(f *testing.F) {
	f.Add([]byte(""), int64(0))
	f.Add([]byte("a"), int64(0))
	f.Add([]byte("abc"), int64(3))
	f.Add([]byte("abcd"), int64(3))
	f.Add(bytes.Repeat([]byte{0}, 5000), int64(4096))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, limit int64) {
		if limit < 0 {
			limit = -limit
		}
		if limit < 0 { // math.MinInt64
			limit = 0
		}
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read("--config", p, Kind{What: "cluster file", Max: limit})
		if int64(len(data)) <= limit {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes, limit %d: Read = %d bytes, %v", len(data), limit, len(got), err)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || got != nil {
			t.Fatalf("%d bytes, limit %d: Read = %d bytes, %v; want an *Error", len(data), limit, len(got), err)
		}
		if !strings.Contains(err.Error(), "more than a cluster file holds") {
			t.Errorf("%q does not say the file is too large", err)
		}
		// Streaming: never more than the limit, and the same refusal.
		o, err := Open("--config", p, Kind{What: "cluster file", Max: limit})
		if err == nil {
			n, rerr := io.Copy(io.Discard, o)
			o.Close()
			if n > limit || !errors.As(rerr, &e) {
				t.Fatalf("streamed %d bytes (limit %d), %v", n, limit, rerr)
			}
		}
	})
}
