package verdicts

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

// ConfigVolume decides whether a Secret or ConfigMap volume works in a
// Windows container (CFG-03, CFG-04), from the pod's start (nil when it
// ran) and the reads of its keys' files under mount, in order (the first
// failed read ends them). An error is a wrong answer: the spec fails.
func ConfigVolume(start error, mount string, reads []FileRead) (Observation, error) {
	if start != nil {
		return Limited("%v", start), nil
	}
	for _, r := range reads {
		if r.Err != nil {
			return Limited("reading %s in the container: %v (%s)", r.Path, r.Err, r.Stderr), nil
		}
		if r.Got != r.Want {
			return Limited("%s in the container holds %q, want %q", r.Path, r.Got, r.Want), nil
		}
	}
	return Works("the pod ran and each of the %d keys read back, exactly, from its file under %s", len(reads), mount), nil
}
