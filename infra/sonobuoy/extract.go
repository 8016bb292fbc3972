package sonobuoy

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// PluginResults is where a Job plugin's results are in Sonobuoy's tarball.
const PluginResults = "plugins/" + PluginName + "/results/global/"

// Extract copies the plugin's results (the suite's report directory) out
// of a Sonobuoy results tarball into dir, and returns the files' paths
// relative to dir (Sonobuoy's done file left out). Sonobuoy's worker sends a directory as a tarball of its
// own (results.tar.gz), which the aggregator unpacks; one still packed is
// unpacked here too.
func Extract(tarball, dir string) ([]string, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files, err := extractPrefix(f, PluginResults, dir)
	if err != nil {
		return nil, fmt.Errorf("results tarball %s: %w", tarball, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("results tarball %s holds nothing under %s: the plugin sent no results (see `sonobuoy logs` and its e2e.log)", tarball, PluginResults)
	}
	return files, nil
}

// extractPrefix unpacks the regular files under prefix of the gzipped tar r
// into dir, without the prefix, refusing paths that leave dir.
func extractPrefix(r io.Reader, prefix, dir string) ([]string, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var files []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		rel, ok := name, true
		if prefix != "" {
			rel, ok = strings.CutPrefix(name, strings.TrimSuffix(prefix, "/")+"/")
		}
		if !ok || rel == "" || rel == "done" || h.Typeflag != tar.TypeReg {
			continue
		}
		if rel == "results.tar.gz" {
			// A directory the aggregator kept packed.
			inner, err := extractPrefix(tr, "", dir)
			if err != nil {
				return files, fmt.Errorf("%s: %w", h.Name, err)
			}
			files = append(files, inner...)
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(filepath.Separator)) {
			return files, fmt.Errorf("%s leaves the directory", h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return files, err
		}
		out, err := os.Create(target)
		if err != nil {
			return files, err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, err
		}
		files = append(files, rel)
	}
}
