package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// ArtifactsDir is the directory, under a report directory, that holds what
// was collected of failed specs: one subdirectory per spec, named by SpecSlug.
const ArtifactsDir = "artifacts"

// SpecSlug is the name of a spec's artifact directory: the spec's full name
// in lower case, every run of other characters than letters and digits made
// one dash, cut to 80 characters, then a dash and the first 8 hex digits of
// the name's SHA-256 (so that two specs never share a directory, however
// alike their names).
func SpecSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	sum := sha256.Sum256([]byte(name))
	if s == "" {
		return hex.EncodeToString(sum[:4])
	}
	return s + "-" + hex.EncodeToString(sum[:4])
}

// SpecArtifacts is the path of a spec's artifact directory, relative to the
// report directory (with forward slashes, for links).
func SpecArtifacts(name string) string {
	return path.Join(ArtifactsDir, SpecSlug(name))
}
