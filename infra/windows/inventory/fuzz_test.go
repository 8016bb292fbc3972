package inventory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, returns an inventory or a
// *Error, writes every problem as `<file>: ...; <fix>`, and never shows a
// password it read.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	for _, tc := range problemCases {
		f.Add([]byte(tc.yaml))
	}
	const secret = "Fuzz-5ecret-Pa55word"
	env := func(string) (string, bool) { return secret, true }
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.yaml")
		inv, err := Parse(path, data, env)
		if err == nil {
			if inv == nil || len(inv.Machines) == 0 {
				t.Fatalf("no error and no machines: %v", inv)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || len(e.Problems) == 0 {
			t.Fatalf("error is not a *Error with problems: %v", err)
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, path+": ") || !strings.Contains(line, "; ") {
				t.Errorf("line is not `<file>: ...; <fix>`: %q", line)
			}
		}
		if !strings.Contains(string(data), secret) && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password:\n%v", err)
		}
	})
}
