package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/winconform/winconform/internal/atomicfile"
	"github.com/winconform/winconform/internal/version"
)

// ManifestFile is the run's manifest: the SHA-256 of every file the run
// wrote into its report directory, written when the run ends (Seal) and
// checked by every reader (Load). A statement of the gate names it, by
// its own digest, as the run it decided on.
const ManifestFile = "manifest.json"

// ManifestFormat is ManifestFile's format.
const ManifestFormat = "winconform.manifest/v1"

// The gate's statement (an in-toto Statement v1 of its decision) and that
// statement signed (a Sigstore bundle), beside gate.json: written after
// the run, outside its manifest.
const (
	StatementFile       = "gate.intoto.json"
	SignedStatementFile = "gate.intoto.sigstore.json"
)

// AfterRun are the files written into a report directory after its run
// ended, by whoever reads it: the gate (and its statement), the diff, the
// views for people (summary.md, to which the CLI adds what the run swept;
// report.html and its screenshot), Sonobuoy's plugin log and done file,
// make test's underlay fault test. They are outside the manifest, which
// says so; nothing decides on them (the gate decides from the record).
var AfterRun = []string{
	"summary.md", "report.html", "report.png",
	"gate.json", "gate.md", StatementFile, SignedStatementFile,
	"diff.json", "diff.md",
	"e2e.log", "done", "underlay-fault.log",
}

// Manifest is ManifestFile.
type Manifest struct {
	Format string `json:"format"`
	// Stamp is the run's ID and the harness that wrote the manifest.
	version.Stamp
	// Files are the run's files, by path (slash-separated, relative to the
	// report directory), in path order, each with its SHA-256: the shape
	// of an in-toto resource descriptor.
	Files []File `json:"files"`
	// Outside names the files left out, and why.
	Outside Outside `json:"outside"`
}

// File is one file of the run and its digest.
type File struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Outside are the names left out of a manifest, and why.
type Outside struct {
	Files []string `json:"files"`
	Why   string   `json:"why"`
}

const outsideWhy = "written after the run, by the gate, the diff and the views (and Sonobuoy's plugin log and done file): nothing decides on them; the gate's statement binds its decision to this manifest by its digest"

// Seal writes dir's manifest for run runID: the SHA-256 of every file in
// dir but the manifest itself and AfterRun. The run's last writer calls
// it where the run ends: the suite when it writes its record (Write: every
// run, the CLI's, the suite binary's alone, Sonobuoy's plugin, also a
// failed or interrupted one), and the CLI once more when it marks the run
// ended (Record.Finish), after the last files it adds (the node logs,
// run.json ended).
func Seal(dir, runID string) error {
	files, err := digests(dir)
	if err != nil {
		return fmt.Errorf("writing the manifest of %s: %w", dir, err)
	}
	m := Manifest{Format: ManifestFormat, Stamp: version.For(runID), Files: files, Outside: Outside{Files: AfterRun, Why: outsideWhy}}
	return atomicfile.WriteJSON(filepath.Join(dir, ManifestFile), m)
}

// digests walks dir: the SHA-256 of each regular file in it, in path
// order, but the manifest and AfterRun. A symbolic link, or any file that
// is not regular, is refused: what it points to is no file the run wrote.
func digests(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case rel == ManifestFile || slices.Contains(AfterRun, rel):
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): a run writes files only", rel, d.Type())
		}
		sum, err := fileSum(path)
		if err != nil {
			return err
		}
		files = append(files, File{Name: rel, Digest: map[string]string{"sha256": sum}})
		return nil
	})
	return files, err
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkManifest reads dir's manifest and holds the directory to it: every
// file it names there with its digest, and no other (but AfterRun). It
// returns the manifest's own SHA-256 (hex), the digest a statement names.
// Each file missing, added or changed is named.
func checkManifest(dir string) (string, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s: no %s, the digests of the run's files, which a run writes when it ends: a copy missing it, or a directory a winconform before manifests wrote; pass the whole directory the run wrote, or rerun the suites", dir, ManifestFile)
	case err != nil:
		return "", err
	}
	var m Manifest
	if err := decodeStrict(data, &m); err != nil || m.Format != ManifestFormat {
		return "", fmt.Errorf("%s is not a manifest of this winconform (%s): it was edited, or cut short; pass the directory as the run wrote it", path, ManifestFormat)
	}
	if !slices.Equal(m.Outside.Files, AfterRun) {
		return "", fmt.Errorf("%s leaves out %s, not the files written after a run (%s): it was edited; pass the directory as the run wrote it",
			path, strings.Join(m.Outside.Files, ", "), strings.Join(AfterRun, ", "))
	}
	have, err := digests(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	want := map[string]string{}
	for _, f := range m.Files {
		want[f.Name] = f.Digest["sha256"]
	}
	var problems []string
	for _, f := range have {
		sum, ok := want[f.Name]
		switch {
		case !ok:
			problems = append(problems, f.Name+" is not the run's (an extra file)")
		case sum != f.Digest["sha256"]:
			problems = append(problems, f.Name+" was changed after the run")
		}
		delete(want, f.Name)
	}
	for _, f := range m.Files {
		if _, ok := want[f.Name]; ok {
			problems = append(problems, f.Name+" is missing")
		}
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("%s does not hold what its run wrote (%s): %s; pass the directory as the run wrote it (a copy whole, nothing added or edited)",
			dir, ManifestFile, strings.Join(problems, "; "))
	}
	return hexSum(data), nil
}

// ManifestDigest is the SHA-256 of the manifest as Load checked it: with
// RecordDigest, what a statement of the gate names as its subject.
func (r *Run) ManifestDigest() string { return r.manifestSum }

// RecordDigest is the SHA-256 of the record file (reports.GinkgoFile).
func (r *Run) RecordDigest() string { return r.recordSum }
