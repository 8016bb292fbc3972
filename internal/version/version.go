// Package version says which winconform a binary is: its module version
// and the commit it was built from, and stamps every report with it and
// the run's ID, so that a report can be tied to the code that wrote it.
//
// The commit comes from the Go toolchain's VCS stamp (runtime/debug.
// ReadBuildInfo: vcs.revision, vcs.time, vcs.modified) where there is one,
// else from what `make build` links in (-ldflags -X). The toolchain stamps
// nothing under GOFLAGS=-buildvcs=false, in `go test -c` (the suite binary,
// which writes the reports) unless -buildvcs=true, and in a git worktree:
// cmd/go takes a directory for a git checkout only when its .git is a
// directory (cmd/go/internal/vcs, vcsGit's RootNames), and a worktree's .git
// is a file. `git rev-parse HEAD`, which the Makefile asks, answers in all of
// these and in a clean clone.
package version

import (
	"fmt"
	"runtime/debug"
)

// Info is what a binary knows of its own build.
type Info struct {
	// Module is the main module's path.
	Module string `json:"module,omitempty"`
	// Version is the main module's version: a release tag, a pseudo-version
	// (v0.0.0-20261125171500-0123456789ab, +dirty for a modified tree), or
	// "(devel)" where the toolchain stamps none.
	Version string `json:"version"`
	// Commit, CommitTime and Modified are the commit the binary was built
	// from, its time, and whether the tree had uncommitted changes: empty
	// for a binary built outside a checkout and without make build.
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	// Go is the toolchain that built the binary.
	Go string `json:"go,omitempty"`
}

// The commit make build passes (-ldflags -X), for builds the toolchain
// does not stamp: commit, its time, and "true" when the tree had
// uncommitted changes.
var commit, commitTime, modified string

// read is debug.ReadBuildInfo, replaced in tests.
var read = debug.ReadBuildInfo

// Get reads this binary's build information.
func Get() Info {
	bi, ok := read()
	if !ok {
		bi = &debug.BuildInfo{Main: debug.Module{Version: "(unknown)"}}
	}
	return withLinked(FromBuildInfo(bi), commit, commitTime, modified)
}

// withLinked fills in the commit make build linked in where the build
// info has none.
func withLinked(i Info, commit, commitTime, modified string) Info {
	if i.Commit == "" && commit != "" {
		i.Commit, i.CommitTime, i.Modified = commit, commitTime, modified == "true"
	}
	return i
}

// FromBuildInfo reads a build's information.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.CommitTime = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// String is the version and the commit on one line: "v0.0.0-...+dirty
// (commit 0123456789ab, with uncommitted changes)".
func (i Info) String() string {
	s := i.Version
	switch {
	case i.Commit == "":
		s += " (no commit recorded)"
	case i.Modified:
		s += fmt.Sprintf(" (commit %s, with uncommitted changes)", short(i.Commit))
	default:
		s += fmt.Sprintf(" (commit %s)", short(i.Commit))
	}
	return s
}

// CommitLabel is the commit with "+modified" for a tree with uncommitted
// changes ("" when none was recorded): the JUnit's run-level property.
func (i Info) CommitLabel() string {
	if i.Commit != "" && i.Modified {
		return i.Commit + "+modified"
	}
	return i.Commit
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
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
