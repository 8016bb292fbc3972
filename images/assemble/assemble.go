// Package assemble builds container images from files, without a Docker
// daemon or a Dockerfile, with go-containerregistry: one layer made from a list
// of entries on top of a base (or nothing), and archives that `docker load`
// and `ctr images import` accept.
package assemble

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Entry is one thing in a layer: a regular file (from Source on the host, or
// Data), a symlink (Link), or a directory (Dir).
type Entry struct {
	Path   string // absolute path in the image
	Source string // host file to copy
	Data   []byte // inline content, when Source is empty
	Link   string // symlink target
	Dir    bool
	Mode   int64 // permission bits; 0 means 0755 for files and dirs
}

// epoch is the fixed timestamp of every entry, so that the same files make
// the same layer digest.
var epoch = time.Unix(0, 0).UTC()

// WriteTar writes entries as a tar stream, creating parent directories that
// the list does not name, in a stable order.
func WriteTar(w io.Writer, entries []Entry) error {
	tw := tar.NewWriter(w)
	seen := map[string]bool{} // path -> is a directory
	sorted := append([]Entry(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, e := range sorted {
		name := strings.TrimPrefix(path.Clean("/"+e.Path), "/")
		if name == "" {
			return fmt.Errorf("layer entry with empty path")
		}
		if err := writeParents(tw, seen, path.Dir(name)); err != nil {
			return err
		}
		if _, dup := seen[name]; dup {
			return fmt.Errorf("layer entry %s appears twice", e.Path)
		}
		seen[name] = e.Dir
		if err := writeEntry(tw, name, e); err != nil {
			return fmt.Errorf("layer entry %s: %w", e.Path, err)
		}
	}
	return tw.Close()
}

func writeParents(tw *tar.Writer, seen map[string]bool, dir string) error {
	if dir == "." || dir == "/" || dir == "" {
		return nil
	}
	if isDir, ok := seen[dir]; ok {
		if !isDir {
			return fmt.Errorf("layer entry /%s is not a directory, yet entries are put under it", dir)
		}
		return nil
	}
	if err := writeParents(tw, seen, path.Dir(dir)); err != nil {
		return err
	}
	seen[dir] = true
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
}

func writeEntry(tw *tar.Writer, name string, e Entry) error {
	mode := e.Mode
	if mode == 0 {
		mode = 0o755
	}
	hdr := &tar.Header{Name: name, Mode: mode, ModTime: epoch, Format: tar.FormatPAX}
	switch {
	case e.Dir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		return tw.WriteHeader(hdr)
	case e.Link != "":
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.Link, 0o777
		return tw.WriteHeader(hdr)
	case e.Source != "":
		f, err := os.Open(e.Source)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", e.Source)
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		return err
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.Data))
		if e.Mode == 0 {
			hdr.Mode = 0o644
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(e.Data)
		return err
	}
}

// Layer makes a layer of entries. The tar is spooled to a file in dir (the
// system temp dir when empty), so that large binaries do not sit in memory.
func Layer(dir string, entries []Entry) (v1.Layer, error) {
	f, err := os.CreateTemp(dir, "layer-*.tar")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := WriteTar(f, entries); err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return tarball.LayerFromFile(f.Name())
}

// Config is the part of an image's configuration the harness sets.
type Config struct {
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
	Labels     map[string]string
	OS         string // default linux
	Arch       string // default amd64
	OSVersion  string // Windows images: the build, e.g. 10.0.20348.2340
}

// Image puts layer on base (an empty image when base is nil) and sets cfg.
func Image(base v1.Image, layer v1.Layer, cfg Config) (v1.Image, error) {
	if base == nil {
		base = empty.Image
	}
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "winconform", Created: v1.Time{Time: epoch}}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.OSVersion = orDefault(cfg.OS, "linux"), orDefault(cfg.Arch, "amd64"), cfg.OSVersion
	if cfg.OSVersion == "" && base != empty.Image {
		if bcf, err := base.ConfigFile(); err == nil {
			cf.OSVersion = bcf.OSVersion
		}
	}
	cf.Created = v1.Time{Time: epoch}
	c := &cf.Config
	if cfg.Entrypoint != nil {
		c.Entrypoint = cfg.Entrypoint
	}
	if cfg.Cmd != nil {
		c.Cmd = cfg.Cmd
	}
	if cfg.Env != nil {
		c.Env = cfg.Env
	}
	if cfg.WorkingDir != "" {
		c.WorkingDir = cfg.WorkingDir
	}
	if cfg.User != "" {
		c.User = cfg.User
	}
	if len(cfg.Labels) > 0 {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		for k, v := range cfg.Labels {
			c.Labels[k] = v
		}
	}
	return mutate.ConfigFile(img, cf)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
