// Package images names the container images the harness runs, and builds
// the ones it makes itself. Suites and the CLI both read the names here, so
// what `winconform up` loads into a cluster is what the specs ask for.
package images

import (
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/winconform/winconform/images/assemble"
)

// ProbeVersion is the probe image's tag. Local clusters get the image loaded
// afresh on every `winconform up` and `winconform e2e`, so the tag stays put
// while the binary changes.
const ProbeVersion = "v0.1"

// Probe is the default reference of the probe image (images/probe).
const Probe = "winconform.local/probe:" + ProbeVersion

// ProbeArchive writes a docker-archive holding the Linux probe image, made of
// the static binary at linuxBinary, to path.
func ProbeArchive(linuxBinary, path string) error {
	if _, err := os.Stat(linuxBinary); err != nil {
		return fmt.Errorf("probe binary: %w (build it with `make build`)", err)
	}
	// The layer is spooled to a file that must outlive the archive's writing.
	spool, err := os.MkdirTemp(filepath.Dir(path), ".probe-layer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(spool)
	layer, err := assemble.Layer(spool, []assemble.Entry{
		{Path: "/probe", Source: linuxBinary},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/:/probe\nnobody:x:65534:65534:nobody:/:/probe\n")},
	})
	if err != nil {
		return err
	}
	img, err := assemble.Image(nil, layer, assemble.Config{Entrypoint: []string{"/probe"}, Cmd: []string{"serve"}})
	if err != nil {
		return err
	}
	return assemble.WriteArchiveFile(path, map[string]v1.Image{Probe: img})
}
