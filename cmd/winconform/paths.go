package main

import (
	"os"
	"path/filepath"
)

// outDir is the _output directory the defaults (the suite binary, the
// probe, kwok, Ginkgo's CLI, kubeconfigs, reports) are in: the one this
// executable was built into (make build puts it in _output/bin), so that
// the binary works from any directory; else _output under the working
// directory (go run, a copied binary).
var outDir = outputDir(executable())

// outputDir is the _output directory of the executable at exe.
func outputDir(exe string) string {
	if exe != "" {
		bin := filepath.Dir(exe)
		if filepath.Base(bin) == "bin" && filepath.Base(filepath.Dir(bin)) == "_output" {
			return filepath.Dir(bin)
		}
	}
	return "_output"
}

// executable is this program's path with symbolic links resolved ("" when
// it cannot be found).
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
}

// outPath is a path under the _output directory.
func outPath(elem ...string) string {
	return filepath.Join(append([]string{outDir}, elem...)...)
}

// binPath is a program make build puts in _output/bin.
func binPath(name string) string { return outPath("bin", name) }
