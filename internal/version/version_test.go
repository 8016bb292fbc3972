package version

import (
	"runtime/debug"
	"testing"
)

// A binary built by `go build` in a checkout carries its commit; the
// version command and the reports read it from there.
func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/winconform/winconform", Version: "v0.0.0-20261125171500-b9131b5c0d1e+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "b9131b5c0d1e2f3a4b5c6d7e8f90123456789abc"},
			{Key: "vcs.time", Value: "2026-11-25T17:15:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	i := FromBuildInfo(bi)
	if i.Commit != "b9131b5c0d1e2f3a4b5c6d7e8f90123456789abc" || !i.Modified || i.CommitTime != "2026-11-25T17:15:00Z" || i.Go != "go1.26.8" {
		t.Errorf("%+v", i)
	}
	if got, want := i.String(), "v0.0.0-20261125171500-b9131b5c0d1e+dirty (commit b9131b5c0d1e, with uncommitted changes)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := i.CommitLabel(); got != "b9131b5c0d1e2f3a4b5c6d7e8f90123456789abc+modified" {
		t.Errorf("CommitLabel %q", got)
	}
	if got := FromBuildInfo(&debug.BuildInfo{Main: debug.Module{Path: "m"}}).String(); got != "(devel) (no commit recorded)" {
		t.Errorf("no stamp: %q", got)
	}
}

// Where the toolchain stamps no commit (GOFLAGS=-buildvcs=false, as on
// this project's machines; go test -c; a git worktree), make build links
// it in; a binary without build information says so.
func TestLinkedCommit(t *testing.T) {
	i := withLinked(Info{Version: "(devel)"}, "b9131b5c0d1e2f3a", "2026-11-25T17:15:00Z", "true")
	if i.String() != "(devel) (commit b9131b5c0d1e, with uncommitted changes)" || i.CommitTime != "2026-11-25T17:15:00Z" {
		t.Errorf("%+v", i)
	}
	stamped := Info{Version: "v1.0.0", Commit: "aaaa"}
	if withLinked(stamped, "bbbb", "", "") != stamped {
		t.Error("the linked commit replaced the toolchain's stamp")
	}
	old := read
	defer func() { read = old }()
	read = func() (*debug.BuildInfo, bool) { return nil, false }
	if v := Get().Version; v != "(unknown)" {
		t.Errorf("Get without build information = %q", v)
	}
	if s := For("wc-1"); s.RunID != "wc-1" || s.Harness.Version != "(unknown)" {
		t.Errorf("For = %+v", s)
	}
}
