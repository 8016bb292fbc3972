package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := Write(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Fatalf("read %q, %v; want two", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	assertOnly(t, filepath.Dir(path), "state.json")
}

func TestAFailedProduceLeavesTheFileAsItWas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "archive.tar")
	if err := Write(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Produce(path, 0o644, func(tmp string) error {
		if err := os.WriteFile(tmp, []byte("half"), 0o644); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Produce = %v, want the maker's error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("the file holds %q after a failed write, want old", got)
	}
	assertOnly(t, filepath.Dir(path), "archive.tar")
}

func TestAFailedRenameLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil { // a non-empty directory cannot be renamed over
		t.Fatal(err)
	}
	if err := Write(path, []byte("data"), 0o644); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	assertOnly(t, dir, "target")
}

func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != name {
			t.Errorf("%s left in %s", e.Name(), dir)
		}
	}
}

func TestWriteJSONMakesTheDirectoryAndEndsWithANewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "report.json")
	if err := WriteJSON(path, map[string]int{"specs": 2}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "{\n  \"specs\": 2\n}\n" {
		t.Errorf("%q, %v", data, err)
	}
	if err := WriteJSON(path, func() {}); err == nil {
		t.Error("a value JSON cannot hold was written")
	}
	if data2, _ := os.ReadFile(path); string(data2) != string(data) {
		t.Errorf("a failed write changed the file: %q", data2)
	}
}
