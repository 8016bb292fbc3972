package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra/doc"
)

// referenceDir is the command reference, generated from the CLI.
const referenceDir = "../../docs/commands"

// The command reference in docs/commands is cobra's doc generation of the
// CLI: it says what --help says. WINCONFORM_UPDATE_DOCS=1 (make docs)
// writes it anew; otherwise a reference that differs from the CLI fails.
func TestCommandReferenceIsCurrent(t *testing.T) {
	dir := t.TempDir()
	root := rootCmd()
	root.DisableAutoGenTag = true
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	got := readDir(t, dir)
	if os.Getenv("WINCONFORM_UPDATE_DOCS") != "" {
		if err := os.RemoveAll(referenceDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(referenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range got {
			if err := os.WriteFile(filepath.Join(referenceDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := readDir(t, referenceDir)
	for name, data := range got {
		if old, ok := want[name]; !ok || string(old) != string(data) {
			t.Errorf("docs/commands/%s differs from the CLI's help: run make docs", name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("docs/commands/%s is of no command: run make docs", name)
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	if len(out) > 0 && !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "winconform.md" }) {
		t.Fatalf("%s has no winconform.md", dir)
	}
	return out
}
