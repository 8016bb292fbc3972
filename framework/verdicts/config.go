package verdicts

import (
	"fmt"
	"strings"
)

// FileRead is one file a spec read in a running container: what it wanted,
// what it got, and how the read ended.
type FileRead struct {
	Path, Want string
	Got        string
	// Err is the read's error (nil when it succeeded); Exit the reader's
	// exit status (-1 when it did not run to an exit), Stderr what it said.
	Err    error
	Exit   int
	Stderr string
}

// notFound are the messages of Windows for a file (ERROR_FILE_NOT_FOUND)
// and a directory (ERROR_PATH_NOT_FOUND) that are not there, as Go's
// *PathError carries them.
var notFound = []string{"The system cannot find the file specified", "The system cannot find the path specified"}

// ConfigVolume decides whether a Secret or ConfigMap volume works in a
// Windows container (CFG-03, CFG-04), from the pod's start (nil when it
// ran) and the reads of its keys' files under mount, in order (the first
// failed read ends them): every key read back exactly works; the running
// container has no file for a key (the reader exits 1 saying the file or
// its directory is not there) is limited. A pod that never started, or a
// read that failed otherwise (the exec broke), decides nothing. A file
// that holds another value is a wrong answer: the error fails the spec.
func ConfigVolume(start error, mount string, reads []FileRead) (Observation, error) {
	if start != nil {
		return Unobserved("the pod did not start, so nothing was read: %v", start), nil
	}
	for _, r := range reads {
		switch {
		case r.Err != nil && r.Exit == 1 && containsAny(r.Stderr, notFound):
			return Limited("the pod ran, and its container has no file %s: %s", r.Path, strings.TrimSpace(r.Stderr)), nil
		case r.Err != nil:
			return Unobserved("reading %s in the container failed, not because the file is missing: %v (%s)", r.Path, r.Err, strings.TrimSpace(r.Stderr)), nil
		case r.Got != r.Want:
			return Observation{}, fmt.Errorf("%s in the container holds %q, want %q", r.Path, r.Got, r.Want)
		}
	}
	return Works("the pod ran and each of the %d keys read back, exactly, from its file under %s", len(reads), mount), nil
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
