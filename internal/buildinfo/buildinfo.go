// Package buildinfo says which harness a binary is: the module version and
// the commit it was built from, as the Go toolchain stamped them into the
// binary (runtime/debug.ReadBuildInfo: the main module's version and the
// vcs.revision and vcs.modified settings). Every report the harness writes
// carries it, so that a report can be tied to the code that wrote it.
//
// The toolchain stamps the commit when it builds inside a git checkout with
// VCS stamping on (`go build -buildvcs=auto`, the Makefile's default; the
// go command's own default unless GOFLAGS turns it off). A binary built
// elsewhere (a tarball, a git worktree, -buildvcs=false) says so: its
// revision is empty and its version "(devel)".
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Info is the harness's version and commit.
type Info struct {
	// Version is the main module's version: a release tag (v0.3.0), a
	// pseudo-version the toolchain derived from the commit, or "(devel)".
	Version string `json:"version"`
	// Revision is the commit the binary was built from (vcs.revision);
	// empty when the build did not record one.
	Revision string `json:"revision,omitempty"`
	// Modified says the checkout had uncommitted changes (vcs.modified).
	Modified bool `json:"modified,omitempty"`
}

// read is debug.ReadBuildInfo, replaced in tests.
var read = debug.ReadBuildInfo

// Get returns this binary's Info.
func Get() Info {
	bi, ok := read()
	if !ok {
		return Info{Version: "(unknown)"}
	}
	return From(bi)
}

// From reads an Info out of build information.
func From(bi *debug.BuildInfo) Info {
	out := Info{Version: bi.Main.Version}
	if out.Version == "" {
		out.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Revision = s.Value
		case "vcs.modified":
			out.Modified = s.Value == "true"
		}
	}
	return out
}

// String is the version and commit in one line: "v0.3.0 (commit 1a2b3c4d5e6f)",
// "(devel) (commit 1a2b3c4d5e6f, modified)", "(devel) (no commit recorded)".
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	switch {
	case i.Revision == "":
		b.WriteString(" (no commit recorded)")
	default:
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		b.WriteString(" (commit " + rev)
		if i.Modified {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	return b.String()
}

// Stamp ties a report file to its run and to the harness that wrote it:
// every JSON file of a report directory carries one at its top level
// ("runID", "harness").
type Stamp struct {
	// RunID is the run's ID (the suites' --run-id, the label e2e-run and
	// winconform.io/run on what the run made in the cluster).
	RunID string `json:"runID,omitempty"`
	// Harness is the winconform that wrote the file.
	Harness Info `json:"harness"`
}

// For is the stamp of run runID, written by this binary.
func For(runID string) Stamp { return Stamp{RunID: runID, Harness: Get()} }
