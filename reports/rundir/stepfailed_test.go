package rundir_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// Readying a directory moves its report aside and says where; a rerun of
// that report reads it there, a rerun of another stays where it is.
func TestReady(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "report")
	old := reporttest.Linux()
	old.WriteTo(t, mkdir(t, dir))
	var w bytes.Buffer
	rerun, err := rundir.Ready(&w, dir, dir)
	aside := dir + "." + old.ID
	if err != nil || rerun != aside {
		t.Errorf("Ready = %q, %v; want the rerun's input at %s", rerun, err, aside)
	}
	if w.String() != "the previous report in "+dir+" is now in "+aside+"\n" {
		t.Errorf("said: %q", w.String())
	}
	other := filepath.Join(parent, "other")
	reporttest.Linux().WriteTo(t, mkdir(t, dir))
	if rerun, err := rundir.Ready(&w, dir, other); err != nil || rerun != other {
		t.Errorf("Ready with another rerun = %q, %v", rerun, err)
	}
	w.Reset()
	if rerun, err := rundir.Ready(&w, filepath.Join(parent, "new"), ""); err != nil || rerun != "" || w.Len() != 0 {
		t.Errorf("Ready of a new directory = %q, %v, said %q", rerun, err, w.String())
	}
}

// A failed step leaves a JUnit file with the failure, stamped with the
// run, and the previous report moved aside.
func TestStepFailed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	old := reporttest.Linux()
	old.WriteTo(t, mkdir(t, dir))
	upErr := errors.New("kind: the control plane did not come up")
	var w bytes.Buffer
	if !rundir.StepFailed(&w, dir, "wc-261129090000-0001", "up", upErr) {
		t.Fatalf("not readied: %s", w.String())
	}
	path := filepath.Join(dir, reports.JUnitFile)
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `failures="1"`) || !strings.Contains(string(data), "the control plane did not come up") ||
		!strings.Contains(string(data), "wc-261129090000-0001") {
		t.Errorf("the JUnit of a failed up: %v\n%s", err, data)
	}
	if !strings.HasSuffix(w.String(), "the failure of up is in "+path+"\n") {
		t.Errorf("said: %q", w.String())
	}
	if _, err := rundir.Load(dir + "." + old.ID); err != nil {
		t.Errorf("the previous report: %v", err)
	}

	// A directory holding other files is not readied: nothing is written.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	w.Reset()
	if rundir.StepFailed(&w, other, "wc-261129090000-0001", "up", upErr) || !strings.HasPrefix(w.String(), "winconform: no JUnit of the failure: ") {
		t.Errorf("a directory of other files readied? said %q", w.String())
	}
	if _, err := os.Stat(filepath.Join(other, reports.JUnitFile)); err == nil {
		t.Error("a JUnit written among other files")
	}
}
