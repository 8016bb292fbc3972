package rundir_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// A run's directory carries its manifest: every file the run wrote, with
// its SHA-256, and not the files written after it, which it names.
func TestARunIsSealed(t *testing.T) {
	r := reporttest.IdealHybrid()
	dir := r.Write(t)
	data, err := os.ReadFile(filepath.Join(dir, rundir.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m rundir.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Format != rundir.ManifestFormat || m.RunID != r.ID {
		t.Errorf("manifest %s of run %s, want %s of run %s", m.Format, m.RunID, rundir.ManifestFormat, r.ID)
	}
	var names []string
	for _, f := range m.Files {
		if len(f.Digest["sha256"]) != 64 {
			t.Errorf("%s: digest %v", f.Name, f.Digest)
		}
		names = append(names, f.Name)
	}
	for _, want := range []string{reports.GinkgoFile, rundir.RunFile, reports.ClusterFile, reports.SummaryFile, reports.JUnitFile} {
		if !slices.Contains(names, want) {
			t.Errorf("the manifest lacks %s: %v", want, names)
		}
	}
	for _, out := range []string{rundir.ManifestFile, "summary.md"} {
		if slices.Contains(names, out) {
			t.Errorf("the manifest holds %s, written after the run", out)
		}
	}
	if !slices.Contains(m.Outside.Files, "gate.json") || !slices.Contains(m.Outside.Files, rundir.StatementFile) || m.Outside.Why == "" {
		t.Errorf("the manifest does not say what it leaves out, and why: %+v", m.Outside)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.ManifestDigest()) != 64 || len(run.RecordDigest()) != 64 {
		t.Errorf("digests %q %q", run.ManifestDigest(), run.RecordDigest())
	}
}

// Load names each file missing, added or changed since the run sealed
// its directory; the files written after the run change nothing.
func TestLoadHoldsTheDirectoryToItsManifest(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   []string
	}{
		{"an extra file", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "artifacts", "notes.txt"), "added")
		}, []string{"artifacts/notes.txt is not the run's (an extra file)"}},
		{"a file renamed", func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, reports.LimitationsFile), filepath.Join(dir, "limits.json")))
		}, []string{"limits.json is not the run's", reports.LimitationsFile + " is missing"}},
		{"a file removed", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, reports.JUnitFile)))
		}, []string{reports.JUnitFile + " is missing"}},
		{"a derived file changed after the manifest", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, reports.SummaryFile), `{}`)
		}, []string{reports.SummaryFile + " was changed after the run"}},
		{"a symbolic link", func(t *testing.T, dir string) {
			must(t, os.Symlink("/etc/hostname", filepath.Join(dir, "artifacts-link")))
		}, []string{"artifacts-link is not a regular file"}},
		{"a file replaced by a link to its copy", func(t *testing.T, dir string) {
			path := filepath.Join(dir, reports.ClusterFile)
			data, err := os.ReadFile(path)
			must(t, err)
			copy := filepath.Join(t.TempDir(), "cluster.json")
			write(t, copy, string(data))
			must(t, os.Remove(path))
			must(t, os.Symlink(copy, path))
		}, []string{reports.ClusterFile + " is not a regular file"}},
		{"the manifest edited: a file's digest", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *rundir.Manifest) { m.Files[0].Digest["sha256"] = "00" + m.Files[0].Digest["sha256"][2:] })
		}, []string{"was changed after the run"}},
		{"the manifest edited: a file taken out of it", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *rundir.Manifest) { m.Files = m.Files[1:] })
		}, []string{"is not the run's (an extra file)"}},
		{"the manifest edited: more left outside", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *rundir.Manifest) { m.Outside.Files = append(m.Outside.Files, reports.SummaryFile) })
		}, []string{"leaves out", "it was edited"}},
		{"the manifest removed", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, rundir.ManifestFile)))
		}, []string{"no " + rundir.ManifestFile}},
		{"the manifest cut short", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, rundir.ManifestFile), `{"format": "winconform.manifest/v1", "files": [`)
		}, []string{"is not a manifest of this winconform"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := reporttest.IdealHybrid().Write(t)
			c.tamper(t, dir)
			_, err := rundir.Load(dir)
			wantErr(t, err, c.want...)
		})
	}

	// What is written after the run is outside it.
	dir := reporttest.IdealHybrid().Write(t)
	for _, name := range rundir.AfterRun {
		write(t, filepath.Join(dir, name), "after the run")
	}
	if _, err := rundir.Load(dir); err != nil {
		t.Errorf("files written after the run: %v", err)
	}
}

// The CLI seals the directory again when it ends the run, after what it
// adds (node logs, run.json ended): a run it ended loads.
func TestFinishSealsWhatTheCLIAdds(t *testing.T) {
	r := reporttest.Linux()
	r.NoRunFile = true
	dir := r.Write(t)
	must(t, rundir.MarkStarted(dir, r.ID, reporttest.Started))
	write(t, filepath.Join(dir, "artifacts", "nodes", "kind-worker", "kubelet.log"), "logs")
	must(t, rundir.MarkEnded(dir, "ended"))
	if _, err := rundir.Load(dir); err == nil {
		t.Fatal("files added after the suite's seal and before the CLI's were not refused")
	}
	must(t, rundir.Seal(dir, r.ID))
	if _, err := rundir.Load(dir); err != nil {
		t.Fatal(err)
	}
}

func editManifest(t *testing.T, dir string, edit func(*rundir.Manifest)) {
	t.Helper()
	path := filepath.Join(dir, rundir.ManifestFile)
	data, err := os.ReadFile(path)
	must(t, err)
	var m rundir.Manifest
	must(t, json.Unmarshal(data, &m))
	edit(&m)
	data, err = json.Marshal(m)
	must(t, err)
	write(t, path, string(data))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
