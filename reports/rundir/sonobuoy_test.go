package rundir_test

import (
	"archive/tar"
	"compress/gzip"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/winconform/winconform/infra/sonobuoy"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// A run whose results come from a Sonobuoy tarball carries the manifest
// its plugin's suite sealed: extracted, it loads; the plugin's log and
// done file, written after the suite, are outside it; a file changed in
// the tarball is named.
func TestASonobuoyRunKeepsItsManifest(t *testing.T) {
	r := reporttest.Linux()
	r.NoRunFile = true // the plugin runs the suite binary alone
	results := r.Write(t)
	write(t, filepath.Join(results, "e2e.log"), "suite-runner: the suite exited with status 0\n")
	write(t, filepath.Join(results, "done"), results)
	tarball := filepath.Join(t.TempDir(), "results.tar.gz")
	pack(t, results, tarball, nil)
	out := filepath.Join(t.TempDir(), "report")
	if _, err := sonobuoy.Extract(tarball, out); err != nil {
		t.Fatal(err)
	}
	if _, err := rundir.Load(out); err != nil {
		t.Fatalf("a Sonobuoy run's results: %v", err)
	}

	edited := filepath.Join(t.TempDir(), "edited.tar.gz")
	pack(t, results, edited, map[string]string{"summary.json": `{"format": "winconform.summary/v4"}`})
	out = filepath.Join(t.TempDir(), "report")
	if _, err := sonobuoy.Extract(edited, out); err != nil {
		t.Fatal(err)
	}
	_, err := rundir.Load(out)
	wantErr(t, err, "summary.json was changed after the run")
}

// pack writes dir as Sonobuoy's results tarball holds a plugin's results,
// with the files in replace replaced.
func pack(t *testing.T, dir, tarball string, replace map[string]string) {
	t.Helper()
	f, err := os.Create(tarball)
	must(t, err)
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if s, ok := replace[filepath.ToSlash(rel)]; ok {
			data = []byte(s)
		}
		if err := tw.WriteHeader(&tar.Header{Name: path.Join(sonobuoy.PluginResults, filepath.ToSlash(rel)), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	}))
	must(t, tw.Close())
	must(t, gz.Close())
}
