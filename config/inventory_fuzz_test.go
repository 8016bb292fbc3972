package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzInventory checks that Parse never panics, returns an inventory or a
// *Error, says every problem's fix, and never shows a password it read.
func FuzzInventory(f *testing.F) {
	full, err := os.ReadFile(filepath.Join("testdata", "inventory.yaml"))
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
		inv, err := Parse[Inventory](path, data, env)
		if err == nil {
			if inv == nil || len(inv.Machines) == 0 {
				t.Fatalf("no error and no machines: %v", inv)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || len(e.List) == 0 {
			t.Fatalf("error is not a *Error with problems: %v", err)
		}
		for _, fe := range e.List {
			if !strings.Contains(Detail(fe), "; ") {
				t.Errorf("a problem without its fix: %q", Detail(fe))
			}
		}
		if !strings.Contains(string(data), secret) && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password:\n%v", err)
		}
	})
}
