// Package suiteimage builds the images that run the suites inside a cluster
// as a Sonobuoy plugin, from files, with go-containerregistry (package
// assemble): no Docker, no Dockerfile, no base image.
//
//   - The suite image (Suite): the suite binary (go test -c ./suites), its
//     entrypoint (images/suiterunner, which makes a kubeconfig from the pod's
//     service account, runs the suite binary and writes Sonobuoy's done file)
//     and kwok (which simulates Windows nodes from inside the cluster).
//   - Sonobuoy's aggregator image (Aggregator): the sonobuoy binary, which is
//     both Sonobuoy's aggregator and the worker beside each plugin.
//
// The binaries go in as they are, so they must be static linux/amd64
// executables (CGO_ENABLED=0): the images hold no C library.
package suiteimage

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/winconform/winconform/images/assemble"
)

// Version is the suite image's tag. Local clusters get the image loaded
// afresh on every `winconform sonobuoy run`, so the tag stays put while the
// binaries change (as the probe's does).
const Version = "v0.1"

// Suite is the suite image's reference.
const Suite = "winconform.local/suite:" + Version

// SonobuoyVersion is the Sonobuoy release the harness builds and runs.
const SonobuoyVersion = "v0.57.3"

// Aggregator is the reference of Sonobuoy's aggregator (and worker) image
// built from the sonobuoy binary.
const Aggregator = "winconform.local/sonobuoy:" + SonobuoyVersion

// Where things are in the suite image.
const (
	BinDir      = "/usr/local/bin"
	RunnerPath  = BinDir + "/suite-runner"
	SuitePath   = BinDir + "/e2e.test"
	KwokPath    = BinDir + "/kwok"
	HomeDir     = "/tmp"
	SuiteUser   = "65534:65534" // nobody: the suites only talk to the API server
	suiteEnvBin = "WINCONFORM_SUITE_BINARY"
	kwokEnvBin  = "WINCONFORM_KWOK_BINARY"
)

// AggregatorPath is where the sonobuoy binary is in the aggregator image:
// Sonobuoy starts its aggregator and workers as /sonobuoy.
const AggregatorPath = "/sonobuoy"

// Binaries are the host files the suite image is made of.
type Binaries struct {
	Runner string // the entrypoint (_output/bin/suite-runner)
	Suite  string // the suite binary (_output/bin/e2e.test)
	Kwok   string // kwok (_output/bin/kwok)
}

// SuiteImage is the suite image: the binaries under /usr/local/bin, /tmp
// (the home directory, where the runner writes its kubeconfig), and an
// /etc/passwd; it runs as nobody, with the runner as its entrypoint.
func SuiteImage(b Binaries) (v1.Image, error) {
	for _, f := range []struct{ what, path, fix string }{
		{"suite runner", b.Runner, "make build"},
		{"suite binary", b.Suite, "make build"},
		{"kwok binary", b.Kwok, "make build"},
	} {
		if err := CheckStatic(f.what, f.path, f.fix); err != nil {
			return nil, err
		}
	}
	layer, err := assemble.StreamLayer([]assemble.Entry{
		{Path: RunnerPath, Source: b.Runner, Mode: 0o755},
		{Path: SuitePath, Source: b.Suite, Mode: 0o755},
		{Path: KwokPath, Source: b.Kwok, Mode: 0o755},
		{Path: HomeDir, Dir: true, Mode: 0o1777},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/usr/local/bin/suite-runner\nnobody:x:65534:65534:nobody:/tmp:/usr/local/bin/suite-runner\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnogroup:x:65534:\n")},
	})
	if err != nil {
		return nil, err
	}
	return assemble.Image(nil, layer, assemble.Config{
		Entrypoint: []string{RunnerPath},
		Env: []string{
			"PATH=" + BinDir,
			"HOME=" + HomeDir,
			suiteEnvBin + "=" + SuitePath,
			kwokEnvBin + "=" + KwokPath,
		},
		WorkingDir: HomeDir,
		User:       SuiteUser,
		Labels:     map[string]string{"io.winconform.image": "suite"},
	})
}

// AggregatorImage is Sonobuoy's aggregator image: the sonobuoy binary at
// /sonobuoy and a /tmp, starting the aggregator as Sonobuoy's own image
// does. Sonobuoy gives the command and user in the pods it makes.
func AggregatorImage(sonobuoyBinary string) (v1.Image, error) {
	if err := CheckStatic("sonobuoy binary", sonobuoyBinary, "make sonobuoy builds it"); err != nil {
		return nil, err
	}
	layer, err := assemble.StreamLayer([]assemble.Entry{
		{Path: AggregatorPath, Source: sonobuoyBinary, Mode: 0o755},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
	})
	if err != nil {
		return nil, err
	}
	return assemble.Image(nil, layer, assemble.Config{
		Entrypoint: []string{AggregatorPath},
		Cmd:        []string{"aggregator", "--no-exit", "-v", "3", "--logtostderr"},
		WorkingDir: "/",
		Labels:     map[string]string{"io.winconform.image": "sonobuoy"},
	})
}

// Archive writes the suite image and the aggregator image, tagged Suite
// and Aggregator, as one docker-archive at path (for `docker load`, `ctr
// images import` or kind's node loading).
func Archive(path string, suite, aggregator v1.Image) error {
	return assemble.WriteArchiveFile(path, map[string]v1.Image{Suite: suite, Aggregator: aggregator})
}

// CheckStatic checks that path is a statically linked linux/amd64
// executable, naming what it is (what) and how to make it (fix) when not.
func CheckStatic(what, path, fix string) error {
	if path == "" {
		return fmt.Errorf("%s: no path given (%s)", what, fix)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w (%s)", what, err, fix)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %s is not a regular file", what, path)
	}
	f, err := elf.Open(path)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return fmt.Errorf("%s: %s is not a Linux executable (%v)", what, path, err)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: %s is a %v %v %v file; want an amd64 executable", what, path, f.Class, f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s: %s is dynamically linked, and the image holds no C library: build it with CGO_ENABLED=0 (%s)", what, path, fix)
		}
	}
	return nil
}
