// Package version says which winconform a binary is: its module version
// and the commit it was built from, as the Go toolchain records them in
// every binary it builds from a module (runtime/debug.ReadBuildInfo).
package version

import (
	"fmt"
	"runtime/debug"
)

// Info is what a binary knows of its own build.
type Info struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the main module's version: a release tag, a pseudo-version
	// (v0.0.0-20261125171500-0123456789ab, +dirty for a modified tree), or
	// "(devel)" where the toolchain stamps none.
	Version string `json:"version"`
	// Commit, CommitTime and Modified are the VCS stamp (go build -buildvcs):
	// empty for a binary built outside a checkout, by go run or go test.
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
}

// The commit make build passes (-ldflags -X), for builds the toolchain
// does not stamp (GOFLAGS=-buildvcs=false, go test -c): commit, its time,
// and "true" when the tree had uncommitted changes.
var commit, commitTime, modified string

// Get reads this binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
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
// (commit 0123456789ab, modified)".
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

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
