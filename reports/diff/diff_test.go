package diff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports/diff"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

func load(t *testing.T, r *reporttest.Run) *rundir.Run {
	t.Helper()
	run, err := rundir.Load(r.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// onBuild moves the hybrid run's Windows nodes, and its records of them,
// to build.
func onBuild(r *reporttest.Run, build string) {
	for i := range r.Facts.Nodes {
		if r.Facts.Nodes[i].OS == "windows" {
			r.Facts.Nodes[i].WindowsBuild = build
		}
	}
	for i := range r.Specs {
		for j := range r.Specs[i].Evidence {
			if r.Specs[i].Evidence[j].Build != "" {
				r.Specs[i].Evidence[j].Build = build
			}
		}
	}
}

func TestCompare(t *testing.T) {
	b := reporttest.IdealHybrid()
	onBuild(b, "10.0.17763")
	b.Fail("NET-07", "it failed")
	b.Block("NET-16", "BeforeAll failed")
	b.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{
		reporttest.Cell("linux-a", "svc-linux/service-dns", netmatrix.OK, netmatrix.Reachable, "NET-08"),
		reporttest.Cell("linux-a", "linux-b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-07"),
		reporttest.Cell("win-a", "linux-b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-03"),
	}}
	c := reporttest.IdealHybrid()
	c.Fail("NET-08", "dns")
	c.Set("WEB-01", reporttest.Spec{Name: reporttest.TwinName("WEB-01"), Labels: []string{"os:linux"}, Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	c.LabelFilter = "!claim:NET-16"
	c.One("LIM-07").Ledger[0].Observed = ledger.Works
	c.Set("NET-27") // its spec, and its ledger entry, gone
	c.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{
		reporttest.Cell("linux-a", "svc-linux/service-dns", netmatrix.Regression, netmatrix.Blocked, "NET-08"),
		reporttest.Cell("linux-a", "linux-b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-07"),
	}}
	base, cur := load(t, b), load(t, c)
	d := diff.Compare(base, cur)
	// diff.json names the compared run (whose report.html shows it), each side's run, and the harness.
	if d.RunID != cur.Summary.RunID || d.Report.RunID != cur.Summary.RunID || d.Baseline.RunID != base.Summary.RunID || d.RunID == d.Baseline.RunID || d.Harness.Version == "" {
		t.Errorf("diff stamps: run %q (report %q, baseline %q), harness %+v", d.RunID, d.Report.RunID, d.Baseline.RunID, d.Harness)
	}
	if strings.Join(d.NotRunNow, ",") != "NET-16" || !strings.Contains(strings.Join(d.Notes, " "), "not compared: NET-16") {
		t.Errorf("NET-16, not run now: %v %v", d.NotRunNow, d.Notes)
	}
	if strings.Join(d.NewlyFailing, ",") != "NET-08" || strings.Join(d.NewlyFixed, ",") != "NET-07" || strings.Join(d.LostShown, ",") != "LIM-07,NET-08,NET-27,WEB-01" {
		t.Errorf("newly failing %v, fixed %v (NET-16 only not run now), lost %v", d.NewlyFailing, d.NewlyFixed, d.LostShown)
	}
	var web diff.ClaimChange
	for _, c := range d.Claims {
		if c.Claim == "NET-15" {
			t.Error("NET-15 did not change")
		}
		if c.Claim == "WEB-01" {
			web = c
		}
	}
	if web.Change != "shown (windows-node 1) before, only supported (linux twin) now" || len(web.Lost) != 1 || web.Lost[0] != claims.WindowsNode || web.Gained[0] != claims.Linux {
		t.Errorf("WEB-01: %+v", web)
	}
	if !d.MatrixCompared || len(d.Cells) != 2 {
		t.Fatalf("cells: %+v", d.Cells)
	}
	if c := d.Cells[0]; c.Source != "linux-a" || c.Before.String() != "ok (reachable)" || c.After.String() != "regression (blocked)" || c.Repro == "" {
		t.Errorf("changed cell: %+v", c)
	}
	if c := d.Cells[1]; c.Source != "win-a" || c.After != nil || c.After.String() != "absent" {
		t.Errorf("a cell gone: %+v", c)
	}
	var lim, net27 *diff.LedgerChange
	for i, l := range d.Ledger {
		switch l.Claim {
		case "LIM-07":
			lim = &d.Ledger[i]
		case "NET-27":
			net27 = &d.Ledger[i]
		}
	}
	if lim == nil || lim.Before != "holds" || lim.After != "lifted" || net27 == nil || net27.After != "absent" || len(d.Ledger) != 2 {
		t.Errorf("ledger: %+v", d.Ledger)
	}
	if len(d.ShapeChanges) != 0 || len(d.BuildChanges) != 1 || d.BuildChanges[0] != "Windows builds 10.0.17763 -> 10.0.20348" {
		t.Errorf("shape %v, builds %v", d.ShapeChanges, d.BuildChanges)
	}
	md := d.Markdown()
	for _, w := range []string{"Newly failing: NET-08. Newly fixed: NET-07.", "| linux-a | svc-linux/service-dns | NET-08 | ok (reachable) | regression (blocked) |", "| LIM-07 | [synthetic] LIM-07 on the cluster | holds (observed limited) | lifted (observed works) |", "10.0.17763 -> 10.0.20348"} {
		if !strings.Contains(md, w) {
			t.Errorf("diff.md lacks %q:\n%s", w, md)
		}
	}
}

func TestShape(t *testing.T) {
	other := reporttest.Linux()
	other.Facts.CNI = "flannel/host-gw"
	other.Facts.Nodes = append(other.Facts.Nodes, facts.Node{Name: "lin-x", OS: "linux", Ready: true})
	d := diff.Compare(load(t, reporttest.IdealHybrid()), load(t, other))
	if got := strings.Join(d.ShapeChanges, "; "); got != "Linux nodes 2 -> 3; Windows nodes 2 -> 0; CNI flannel/vxlan -> flannel/host-gw" {
		t.Errorf("shape changes %q", got)
	}
	if !d.MatrixCompared && len(d.Notes) == 0 {
		t.Error("no note that the matrix was not compared")
	}
}

func TestNothingChanged(t *testing.T) {
	dir := t.TempDir()
	r := load(t, reporttest.Linux())
	d := diff.Compare(r, r)
	if !d.Empty() {
		t.Errorf("a run compared with itself changed: %+v", d)
	}
	dir = filepath.Join(dir, "new")
	if err := d.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, ok, err := diff.Read(dir)
	if err != nil || !ok || back.Format != diff.Format {
		t.Fatalf("read back %v %v", ok, err)
	}
	os.WriteFile(filepath.Join(dir, diff.JSONFile), []byte(`{"format":"winconform.diff/v0"}`), 0o644)
	if _, _, err := diff.Read(dir); err == nil || !strings.Contains(err.Error(), "winconform.diff/v0") {
		t.Errorf("another format: %v", err)
	}
	if _, ok, err := diff.Read(t.TempDir()); ok || err != nil {
		t.Errorf("no diff.json: %v %v", ok, err)
	}
}
