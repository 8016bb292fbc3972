package evidence

import (
	"reflect"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/claims"
)

// A record carries the Windows build of the node it was obtained on, as the
// node label node.kubernetes.io/windows-build has it (10.0.20348), or as a
// machine reports it with its revision (10.0.20348.2700); a build on a
// result that was not obtained on Windows is refused.
func TestBuildTravelsWithTheRecord(t *testing.T) {
	r, err := Parse(`{"level":"windows-node","detail":"win-1","build":"10.0.20348"}`)
	if err != nil || r.Build != "10.0.20348" || r.OnWindowsBuild() != "10.0.20348" {
		t.Fatalf("Parse = %+v, %v", r, err)
	}
	if r, _ := Parse(`{"level":"windows-machine","build":"10.0.20348.2700"}`); r.OnWindowsBuild() != "10.0.20348" {
		t.Errorf("a machine's build with its revision: %q, want the build", r.OnWindowsBuild())
	}
	if r, _ := Parse(`{"level":"windows-node"}`); r.OnWindowsBuild() != Unrecorded {
		t.Errorf("a Windows record without a build: %q, want %q", r.OnWindowsBuild(), Unrecorded)
	}
	if r, _ := Parse(`{"level":"scheduler"}`); r.OnWindowsBuild() != "" {
		t.Errorf("a scheduler record: build %q, want none", r.OnWindowsBuild())
	}
	for value, want := range map[string]string{
		`{"level":"linux","build":"10.0.20348"}`:      "not obtained on Windows",
		`{"level":"windows-node","build":"ltsc2022"}`: "not a Windows build",
		`{"level":"windows"}`:                         "unknown level",
	} {
		if _, err := Parse(value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error saying %q", value, err, want)
		}
	}
	if err := (Record{Level: claims.Domain, Build: "10.0.17763"}).Check(); err != nil {
		t.Errorf("a domain record of build 10.0.17763: %v", err)
	}
}

// A result obtained on Windows nodes of two builds is two records, one per
// build, each naming its nodes; a node whose label is not a build shares a
// record without build (counted as unrecorded, never as some build); a
// result off Windows is one record without build.
func TestRecordsOnePerBuild(t *testing.T) {
	got := Records(claims.WindowsNode, "real windows node(s)", "", []On{
		{Name: "win-a", Build: "10.0.20348"}, {Name: "win-b", Build: "10.0.17763"}, {Name: "win-c", Build: "10.0.20348"}, {Name: "win-d", Build: "ltsc2022"},
		{Name: "m-1", Build: "10.0.20348.2700", Machine: true, Note: "Windows Server 2022"},
	})
	want := []Record{
		{Level: claims.WindowsNode, Detail: "real windows node(s) win-a, win-c", Build: "10.0.20348", Nodes: []string{"win-a", "win-c"}},
		{Level: claims.WindowsNode, Detail: "real windows node(s) win-b", Build: "10.0.17763", Nodes: []string{"win-b"}},
		{Level: claims.WindowsNode, Detail: "real windows node(s) win-d", Nodes: []string{"win-d"}},
		{Level: claims.WindowsNode, Detail: "real windows node(s) m-1 (Windows Server 2022)", Build: "10.0.20348.2700", Machines: []string{"m-1"}},
	}
	if len(got) != len(want) {
		t.Fatalf("Records = %+v, want %+v", got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
		if err := got[i].Check(); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	lin := Records(claims.Linux, "real linux node(s)", "", []On{{Name: "lin-a"}, {Name: "lin-b"}})
	if len(lin) != 1 || lin[0].Build != "" || lin[0].Detail != "real linux node(s) lin-a, lin-b" || !reflect.DeepEqual(lin[0].Nodes, []string{"lin-a", "lin-b"}) {
		t.Errorf("Linux records = %+v", lin)
	}
	part := Records(claims.WindowsNode, "nodes", "enforcement", []On{{Name: "win-a", Build: "10.0.20348"}})
	if len(part) != 1 || part[0].Partial != "enforcement" || part[0].Build != "10.0.20348" {
		t.Errorf("partial records = %+v", part)
	}
}
