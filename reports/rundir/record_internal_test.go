package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/winconform/winconform/internal/suiterun"
)

// The swept line goes to a summary the suite wrote, never makes one, and
// names a dead run that left only its heartbeat.
func TestAppendSweptLine(t *testing.T) {
	dir := t.TempDir()
	rep := suiterun.SweepReport{Dead: []suiterun.RunSwept{{ID: "wc-1", Why: "dead"}}}
	if err := appendSweptLine(filepath.Join(dir, "summary.md"), rep); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.md")); err == nil {
		t.Error("a summary made where the suite wrote none")
	}
	os.WriteFile(filepath.Join(dir, "summary.md"), []byte("# Summary\n"), 0o644)
	if err := appendSweptLine(filepath.Join(dir, "summary.md"), rep); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if want := "# Summary\n\nBefore its specs, this run removed what 1 dead run(s) left (swept.json): run `wc-1` (dead): nothing but its heartbeat.\n"; string(got) != want {
		t.Errorf("summary.md:\n%q\nwant\n%q", got, want)
	}
}

func TestPrefixed(t *testing.T) {
	var b bytes.Buffer
	n, err := prefixed{&b, "> "}.Write([]byte("one\ntwo\n"))
	if err != nil || n != 8 || b.String() != "> one\n> two\n" {
		t.Errorf("Write = %d, %v: %q", n, err, b.String())
	}
}
