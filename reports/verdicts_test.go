package reports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
)

var hybridNodes = []facts.Node{
	{Name: "cp", OS: "linux", ControlPlane: true, Ready: true},
	{Name: "win-1", OS: "windows", Ready: true, WindowsBuild: "10.0.20348"},
	{Name: "win-2", OS: "windows", Ready: false, WindowsBuild: "10.0.26100"},
}

func evOn(level claims.Level, build string) types.ReportEntry {
	data, _ := json.Marshal(evidence.Record{Level: level, Detail: "test", Build: build})
	return entry(evidence.EntryName, string(data))
}

// Only the specs that show a claim count towards "shown on Windows": a
// partial look at a Windows node beside a spec that shows the claim on
// simulated nodes shows nothing on Windows.
func TestOnlyShowingSpecsCountOnWindows(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		clusterEntry(hybridNodes...),
		spec("sch-01 simulated", types.SpecStatePassed, "", []string{"claim:SCH-01"}, ev(claims.Scheduler)),
		spec("sch-01 windows", types.SpecStatePassed, "", []string{"claim:SCH-01"}, partial(claims.WindowsNode, "no pod started")),
	}}
	s := Summarize(r)
	if c := claimOf(t, s, "SCH-01"); c.Outcome != Shown {
		t.Fatalf("SCH-01 %+v, want shown by the scheduler", c)
	}
	if s.ShownOnWindows != 0 {
		t.Errorf("shown on Windows %d, want 0: the only Windows record was partial", s.ShownOnWindows)
	}
	c := claimOf(t, s, "SCH-01")
	if c.ShownAt(claims.Level.OnWindows) || len(c.Shown) != 1 || c.Shown[0] != (Showing{Level: claims.Scheduler, Specs: 1}) {
		t.Errorf("SCH-01 shown %+v, want the scheduler spec only", c.Shown)
	}
}

// A record that shows the claim wins over a stronger one that does not:
// NET-15 (through a Linux node's address) is shown by its Linux cells also
// when the matrix probed Windows-backed Services through it.
func TestLinuxClaimShownBesideWindowsCells(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		clusterEntry(hybridNodes...),
		spec("net-15", types.SpecStatePassed, "", []string{"claim:NET-15"}, ev(claims.Linux), evOn(claims.WindowsNode, "10.0.20348")),
	}}
	if c := claimOf(t, Summarize(r), "NET-15"); c.Outcome != Shown {
		t.Errorf("NET-15 with Linux and Windows cells: %s (%s), want shown", c.Outcome, c.Why)
	}
}

// Drift is what the server version does not explain, seen at the claim's
// level: an expected lift is shown, with a note; a Linux twin's lift of a
// Windows limitation says nothing.
func TestDriftIsUnexpectedAndAtTheClaimsLevel(t *testing.T) {
	lift := func(claim string, expected ledger.Behaviour) types.ReportEntry {
		return ledgerEntry(ledger.Entry{Claim: claim, Expected: expected, Observed: ledger.Works})
	}
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		clusterEntry(hybridNodes...),
		// CFG-03: lifted in 1.14, as the catalogue expects of this server.
		spec("cfg-03", types.SpecStatePassed, "", []string{"claim:CFG-03"}, evOn(claims.WindowsNode, "10.0.20348"), lift("CFG-03", ledger.Works)),
		// LIM-10: expected to hold; found lifted on a Windows node: drift.
		spec("lim-10", types.SpecStatePassed, "", []string{"claim:LIM-10"}, evOn(claims.WindowsNode, "10.0.20348"), lift("LIM-10", ledger.Limited)),
		// LIM-04: holds on the Windows node; its Linux twin saw it "lifted".
		spec("lim-04", types.SpecStatePassed, "", []string{"claim:LIM-04"}, evOn(claims.WindowsNode, "10.0.20348"),
			ledgerEntry(ledger.Entry{Claim: "LIM-04", Expected: ledger.Limited, Observed: ledger.Limited})),
		spec("lim-04 twin", types.SpecStatePassed, "", []string{"claim:LIM-04", "twin"}, ev(claims.Linux), lift("LIM-04", ledger.Limited)),
	}}
	s := Summarize(r)
	if c := claimOf(t, s, "CFG-03"); c.Outcome != Shown || !strings.Contains(c.Why, "lifted, as expected") {
		t.Errorf("CFG-03, lifted as expected: %s (%s), want shown with a note", c.Outcome, c.Why)
	}
	if c := claimOf(t, s, "LIM-10"); c.Outcome != Drift || !strings.Contains(c.Why, "does not explain") {
		t.Errorf("LIM-10, lifted unexpectedly: %s (%s), want drift", c.Outcome, c.Why)
	}
	if c := claimOf(t, s, "LIM-04"); c.Outcome != Shown {
		t.Errorf("LIM-04, lifted only on its Linux twin: %s (%s), want shown", c.Outcome, c.Why)
	}
	// The ledger keeps the twin's entry, without a verdict it cannot give.
	entries, err := Ledger(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Claim == "LIM-04" && e.Spec == "[networking] pod to pod lim-04 twin" && (e.Verdict != ledger.Inconclusive || e.Below != "linux twin") {
			t.Errorf("the twin's ledger entry %+v, want inconclusive: below the claim's level", e)
		}
	}
}

// The node's Windows build travels with each showing record.
func TestShownCarriesTheBuild(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		clusterEntry(hybridNodes...),
		spec("web a", types.SpecStatePassed, "", []string{"claim:WEB-01"}, evOn(claims.WindowsNode, "10.0.20348")),
		spec("web b", types.SpecStatePassed, "", []string{"claim:WEB-01"}, evOn(claims.WindowsNode, "10.0.20348.2700")),
		spec("web c", types.SpecStatePassed, "", []string{"claim:WEB-01"}, ev(claims.WindowsNode)),
		spec("web twin", types.SpecStatePassed, "", []string{"claim:WEB-01"}, ev(claims.Linux)),
	}}
	c := claimOf(t, Summarize(r), "WEB-01")
	want := []Showing{{Level: claims.WindowsNode, Build: "10.0.20348", Specs: 2}, {Level: claims.WindowsNode, Build: evidence.Unrecorded, Specs: 1}}
	if len(c.Shown) != 2 || c.Shown[0] != want[0] || c.Shown[1] != want[1] {
		t.Errorf("WEB-01 shown %+v, want %+v", c.Shown, want)
	}
	if got := c.ShownOnBuilds(claims.WindowsNode.Shows); strings.Join(got, ",") != "10.0.20348,unrecorded" {
		t.Errorf("builds %v", got)
	}
}
