package rundir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// A new run's report directory: a report there is moved aside whole, to a
// sibling named by its run, never deleted; a directory holding anything
// else is refused before anything moves; a missing or empty one is used.
func TestPrepareMovesAReportAside(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "report")
	s := reporttest.Linux()
	s.WriteTo(t, mkdir(t, dir))
	os.WriteFile(filepath.Join(dir, reports.JUnitFile), []byte("<testsuites/>"), 0o644)
	// What winconform e2e and make test write beside the suites' files
	// when machines joined through the underlay.
	os.WriteFile(filepath.Join(dir, rundir.UnderlayFile), []byte(`{"machines": []}`), 0o644)
	os.WriteFile(filepath.Join(dir, "underlay-fault.log"), []byte("PASS\n"), 0o644)
	mkdir(t, filepath.Join(dir, "artifacts", "nodes"))
	reporttest.Reseal(t, dir)
	if err := rundir.Check(dir); err != nil {
		t.Fatalf("Check of a report directory: %v", err)
	}
	aside, err := rundir.Prepare(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + "." + s.ID; aside != want {
		t.Errorf("moved aside to %s, want %s", aside, want)
	}
	if back, err := rundir.Load(aside); err != nil || back.Summary.RunID != s.ID {
		t.Errorf("the report moved aside: %v", err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the report directory after Prepare: %v %v, want it empty", err, entries)
	}
	// The same run's report again (a second copy): a free name beside it.
	s.WriteTo(t, dir)
	again, err := rundir.Prepare(dir)
	if err != nil || again == aside || !strings.HasPrefix(again, aside) {
		t.Errorf("second Prepare: %v, moved to %s (first %s)", err, again, aside)
	}
	// Empty now: nothing to move.
	if aside, err := rundir.Prepare(dir); err != nil || aside != "" {
		t.Errorf("Prepare of an empty directory: %q %v", aside, err)
	}
	if aside, err := rundir.Prepare(filepath.Join(parent, "new", "report")); err != nil || aside != "" {
		t.Errorf("Prepare of a missing directory: %q %v", aside, err)
	}
}

func TestPrepareRefusesWhatIsNotAReport(t *testing.T) {
	dir := mkdir(t, filepath.Join(t.TempDir(), "home"))
	reporttest.Linux().WriteTo(t, dir)
	os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("years of work"), 0o644)
	mkdir(t, filepath.Join(dir, ".git"))
	for _, f := range []func(string) error{rundir.Check, func(d string) error { _, err := rundir.Prepare(d); return err }} {
		err := f(dir)
		wantErr(t, err, "holds what is not a winconform report (.git/, thesis.tex)", "nothing in it was moved or deleted")
	}
	if _, err := os.Stat(filepath.Join(dir, "thesis.tex")); err != nil {
		t.Errorf("the refused directory lost a file: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	wantErr(t, rundir.Check(file), "is a file")
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
