// Package assemble builds container images from files, without a Docker
// daemon or a Dockerfile, with go-containerregistry: one layer made from a list
// of entries (laid out for Linux, or for Windows with WindowsLayout) on top of
// a base (or nothing), and archives that `docker load` and `ctr images import`
// accept.
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
	"github.com/google/go-containerregistry/pkg/v1/types"
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

// WindowsSecurityDescriptor is the security descriptor every entry of a
// Windows layer carries (PAX record MSWINDOWS.rawsd): a self-relative
// descriptor, base64, with BUILTIN\Users as owner and group and no ACLs. The
// Windows runtime applies it to the file, which lets ContainerUser (the
// default user of nanoserver) run the binaries of the layer.
const WindowsSecurityDescriptor = "AQAAgBQAAAAkAAAAAAAAAAAAAAABAgAAAAAABSAAAAAhAgAAAQIAAAAAAAUgAAAAIQIAAA=="

// paxWindowsSD is the PAX record that carries WindowsSecurityDescriptor.
const paxWindowsSD = "MSWINDOWS.rawsd"

// TarOption changes how WriteTar lays entries out.
type TarOption func(*tarOptions)

type tarOptions struct {
	windows bool
}

// WindowsLayout lays the entries out as Windows container runtimes expect a
// layer: every entry under Files/ (C:\probe\probe.exe, or /probe/probe.exe, is
// Files/probe/probe.exe), the top-level directories Files and Hives (mode
// 0555), directory names without a trailing slash, and on every entry the
// PAX record MSWINDOWS.rawsd (see WindowsSecurityDescriptor). Entry paths may
// be written the Windows way, with backslashes and the drive C:.
func WindowsLayout() TarOption {
	return func(o *tarOptions) { o.windows = true }
}

// name is the tar name of an entry path: cleaned, relative, and under Files/
// for a Windows layer. It is empty for the root.
func (o *tarOptions) name(p string) (string, error) {
	if o.windows {
		if len(p) >= 2 && p[1] == ':' {
			if p[0] != 'C' && p[0] != 'c' {
				return "", fmt.Errorf("layer entry %s: a Windows container layer holds drive C: only", p)
			}
			p = p[2:]
		}
		p = strings.ReplaceAll(p, `\`, "/")
	}
	name := strings.TrimPrefix(path.Clean("/"+p), "/")
	if o.windows && name != "" {
		name = "Files/" + name
	}
	return name, nil
}

// header finishes a header: the PAX format everywhere, and for a Windows
// layer the security descriptor and directory names without a slash.
func (o *tarOptions) header(h *tar.Header) *tar.Header {
	h.Format = tar.FormatPAX
	if h.Typeflag == tar.TypeDir && !o.windows {
		h.Name += "/"
	}
	if o.windows {
		h.PAXRecords = map[string]string{paxWindowsSD: WindowsSecurityDescriptor}
	}
	return h
}

// item is an entry with its tar name.
type item struct {
	name string
	Entry
}

// WriteTar writes entries as a tar stream, creating parent directories that
// the list does not name, in a stable order (by name, parents first).
func WriteTar(w io.Writer, entries []Entry, opts ...TarOption) error {
	var o tarOptions
	for _, opt := range opts {
		opt(&o)
	}
	items := make([]item, 0, len(entries)+2)
	for _, e := range entries {
		name, err := o.name(e.Path)
		if err != nil {
			return err
		}
		if name == "" {
			return fmt.Errorf("layer entry with empty path")
		}
		items = append(items, item{name, e})
	}
	if o.windows {
		items = append(items,
			item{"Files", Entry{Path: "Files", Dir: true, Mode: 0o555}},
			item{"Hives", Entry{Path: "Hives", Dir: true, Mode: 0o555}})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].name < items[j].name })
	tw := tar.NewWriter(w)
	seen := map[string]bool{} // name -> is a directory
	for _, it := range items {
		if err := writeParents(tw, &o, seen, path.Dir(it.name)); err != nil {
			return err
		}
		if _, dup := seen[it.name]; dup {
			return fmt.Errorf("layer entry %s appears twice", it.Path)
		}
		seen[it.name] = it.Dir
		if err := writeEntry(tw, &o, it.name, it.Entry); err != nil {
			return fmt.Errorf("layer entry %s: %w", it.Path, err)
		}
	}
	return tw.Close()
}

func writeParents(tw *tar.Writer, o *tarOptions, seen map[string]bool, dir string) error {
	if dir == "." || dir == "/" || dir == "" {
		return nil
	}
	if isDir, ok := seen[dir]; ok {
		if !isDir {
			return fmt.Errorf("layer entry /%s is not a directory, yet entries are put under it", dir)
		}
		return nil
	}
	if err := writeParents(tw, o, seen, path.Dir(dir)); err != nil {
		return err
	}
	seen[dir] = true
	return tw.WriteHeader(o.header(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch}))
}

func writeEntry(tw *tar.Writer, o *tarOptions, name string, e Entry) error {
	mode := e.Mode
	if mode == 0 {
		mode = 0o755
	}
	hdr := &tar.Header{Name: name, Mode: mode, ModTime: epoch}
	switch {
	case e.Dir:
		hdr.Typeflag = tar.TypeDir
		return tw.WriteHeader(o.header(hdr))
	case e.Link != "":
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.Link, 0o777
		return tw.WriteHeader(o.header(hdr))
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
		if err := tw.WriteHeader(o.header(hdr)); err != nil {
			return err
		}
		n, err := io.Copy(tw, f)
		if err == nil && n != st.Size() {
			err = fmt.Errorf("%s changed size while being read", e.Source)
		}
		return err
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.Data))
		if e.Mode == 0 {
			hdr.Mode = 0o644
		}
		if err := tw.WriteHeader(o.header(hdr)); err != nil {
			return err
		}
		_, err := tw.Write(e.Data)
		return err
	}
}

// Layer makes a layer of entries. The tar is spooled to a file in dir (the
// system temp dir when empty), so that large binaries do not sit in memory;
// the file must outlive every use of the layer.
func Layer(dir string, entries []Entry, opts ...TarOption) (v1.Layer, error) {
	f, err := os.CreateTemp(dir, "layer-*.tar")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := WriteTar(f, entries, opts...); err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return tarball.LayerFromFile(f.Name())
}

// WindowsLayer is Layer with the Windows layout (see WindowsLayout).
func WindowsLayer(dir string, entries []Entry) (v1.Layer, error) {
	return Layer(dir, entries, WindowsLayout())
}

// StreamLayer makes a layer of entries that leaves no file behind: the tar is
// written afresh from the entries, and their Source files, each time the
// layer is read, which is how it gets its digest (here, at once) and its
// contents (when it is written out). The Source files must not change while
// the layer is in use; a layer made from the same entries is the same as
// Layer's, digest for digest.
func StreamLayer(entries []Entry, opts ...TarOption) (v1.Layer, error) {
	entries = append([]Entry(nil), entries...)
	opts = append([]TarOption(nil), opts...)
	// Check the entries first, for an error of WriteTar's own rather than one
	// that went through a pipe and a compressor.
	if err := WriteTar(io.Discard, entries, opts...); err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(WriteTar(pw, entries, opts...)) }()
		return pr, nil
	})
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
// The base's layers stay as they are, foreign (non-distributable) ones
// included; on an OCI base, a Docker gzip layer is described as an OCI one
// (the same bytes), so that the manifest does not mix the two kinds.
func Image(base v1.Image, layer v1.Layer, cfg Config) (v1.Image, error) {
	if base == nil {
		base = empty.Image
	}
	add := mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "winconform", Created: v1.Time{Time: epoch}}}
	if bmt, err := base.MediaType(); err == nil && bmt == types.OCIManifestSchema1 {
		if lmt, err := layer.MediaType(); err == nil && lmt == types.DockerLayer {
			add.MediaType = types.OCILayer
		}
	}
	img, err := mutate.Append(base, add)
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
