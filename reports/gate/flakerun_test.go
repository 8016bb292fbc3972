package gate

import (
	"regexp"
	"strings"
	"testing"

	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/flakerun"
)

func TestFlakeChild(t *testing.T) { flakerun.Child(t) }

// The gate on a real Ginkgo run with a flake: the flake's first failure
// is beside the required claim's pass (its item, gate.md's row), in the
// flake's own item, and among the flakes the CLI prints, tolerated or not.
func TestGateShowsARealFlakesFirstFailure(t *testing.T) {
	run, err := rundir.Load(flakerun.Run(t, "TestFlakeChild"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`passed on attempt 2; attempt 1 failed at \S*testing/flakerun/flakerun\.go:\d+: dial tcp 10\.0\.0\.7:80: i/o timeout`)
	for _, tolerated := range []string{"0", "1"} {
		res, err := Decide(Input{Policy: loadPolicy(t, requires("NET-07")+"flakes:\n  tolerated: "+tolerated+"\n"), PolicyFile: "test.yaml", Run: run, Now: run.Started})
		if err != nil {
			t.Fatal(err)
		}
		req := item(t, res, KindRequired, "NET-07")
		if req.Decision != Pass || !strings.Contains(req.Reason, "passed only on a retry ("+flakerun.Flaky+": ") || !first.MatchString(req.Reason) {
			t.Errorf("tolerated %s: the required claim's item: %+v", tolerated, req)
		}
		if fl := item(t, res, KindFlake, "spec "+flakerun.Flaky); !first.MatchString(fl.Got) {
			t.Errorf("tolerated %s: the flake's item: %+v", tolerated, fl)
		}
		if fl := res.Flakes(); len(fl) != 1 || !strings.HasPrefix(fl[0], "spec "+flakerun.Flaky+": ") || !first.MatchString(fl[0]) {
			t.Errorf("tolerated %s: flakes %q", tolerated, fl)
		}
		var row string
		for _, l := range strings.Split(res.Markdown(), "\n") {
			if strings.HasPrefix(l, "| NET-07 | required |") {
				row = l
			}
		}
		if !first.MatchString(row) {
			t.Errorf("tolerated %s: gate.md's row of NET-07 lacks its flake's first failure: %q", tolerated, row)
		}
	}
}
