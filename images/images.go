// Package images names the container images the harness runs, and builds
// the ones it makes itself. Suites and the CLI both read the names here, so
// what `winconform up` loads into a cluster is what the specs ask for.
//
// Every image has a name and a default reference (Names, Default); Ref gives
// the reference to use, which an override file can point at a mirror
// (Overrides, LoadOverrides, FromEnv).
package images

import (
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/winconform/winconform/images/assemble"
)

// ProbeVersion is the probe image's tag. Local clusters get the image loaded
// afresh on every `winconform up` and `winconform e2e`, so the tag stays put
// while the binary changes.
const ProbeVersion = "v0.1"

// Probe is the default reference of the probe image (images/probe), the
// image named "probe"; Ref("probe") is the one to use, overrides applied.
const Probe = "winconform.local/probe:" + ProbeVersion

// Where the probe is in its images, and how they start it.
const (
	ProbeLinuxPath   = "/probe"
	ProbeWindowsPath = `C:\probe\probe.exe`
)

// ProbeArchive writes a docker-archive holding the Linux probe image, made of
// the static binary at linuxBinary, to path, tagged Ref("probe").
func ProbeArchive(linuxBinary, path string) error {
	img, err := linuxProbeImage(linuxBinary)
	if err != nil {
		return err
	}
	return assemble.WriteArchiveFile(path, map[string]v1.Image{Ref("probe"): img})
}

// linuxProbeImage is the Linux probe image: the static binary at
// linuxBinary, /tmp and an /etc/passwd.
func linuxProbeImage(linuxBinary string) (v1.Image, error) {
	if err := checkBinary("Linux", linuxBinary); err != nil {
		return nil, err
	}
	layer, err := assemble.StreamLayer([]assemble.Entry{
		{Path: ProbeLinuxPath, Source: linuxBinary},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/:/probe\nnobody:x:65534:65534:nobody:/:/probe\n")},
	})
	if err != nil {
		return nil, err
	}
	return assemble.Image(nil, layer, assemble.Config{Entrypoint: []string{ProbeLinuxPath}, Cmd: []string{"serve"}})
}

// checkBinary checks that a probe binary exists, with the fix when not.
func checkBinary(platform, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s probe binary: %w (build it with `make build`)", platform, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s probe binary: %s is not a regular file", platform, path)
	}
	return nil
}
