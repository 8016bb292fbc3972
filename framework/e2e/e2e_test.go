package e2e

import (
	"testing"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
)

// A spec on real Windows nodes records the build of each (their
// node.kubernetes.io/windows-build label), one record per build, so that a
// gate for a build counts only what was seen on it; Linux nodes have none.
func TestNodeRecordsCarryTheBuild(t *testing.T) {
	got := NodeRecords("windows", []facts.Node{
		{Name: "win-a", OS: "windows", WindowsBuild: "10.0.20348"},
		{Name: "win-b", OS: "windows", WindowsBuild: "10.0.17763"},
	})
	if len(got) != 2 {
		t.Fatalf("NodeRecords = %+v, want one record per build", got)
	}
	for i, want := range []string{"10.0.20348", "10.0.17763"} {
		if got[i].Level != claims.WindowsNode || got[i].Build != want {
			t.Errorf("record %d = %+v, want windows-node on build %s", i, got[i], want)
		}
	}
	lin := NodeRecords("linux", []facts.Node{{Name: "lin-a", OS: "linux"}})
	if len(lin) != 1 || lin[0].Level != claims.Linux || lin[0].Build != "" {
		t.Errorf("Linux NodeRecords = %+v", lin)
	}
}
