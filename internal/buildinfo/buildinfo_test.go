package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromReadsVersionAndCommit(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/winconform/winconform", Version: "v0.0.0-20260301120000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"}}}
	got := From(bi)
	want := Info{Version: "v0.0.0-20260301120000-0123456789ab+dirty", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true}
	if got != want {
		t.Fatalf("From = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "v0.0.0-20260301120000-0123456789ab+dirty (commit 0123456789ab, modified)" {
		t.Errorf("String = %q", s)
	}
}

func TestWithoutVCSStampingSaysSo(t *testing.T) {
	got := From(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}})
	if got.Revision != "" || got.Modified {
		t.Fatalf("From = %+v: no commit was recorded", got)
	}
	if s := got.String(); s != "(devel) (no commit recorded)" {
		t.Errorf("String = %q", s)
	}
	old := read
	defer func() { read = old }()
	read = func() (*debug.BuildInfo, bool) { return nil, false }
	if v := Get().Version; v != "(unknown)" {
		t.Errorf("Get without build information = %q", v)
	}
}
