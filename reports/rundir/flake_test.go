package rundir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// A run with --flake-attempts=2, as Ginkgo's report has it: a spec that
// passed on its retry is the summary's one flake, with its attempts and
// its first failure; one that failed on both attempts is a failure; one that passed
// at once is neither. The views written from the record say so.
func TestTheSummaryCarriesEachFlakesFirstFailure(t *testing.T) {
	r := reporttest.Linux()
	r.Set("NET-07", reporttest.Spec{Name: "flaky pod to pod", Attempts: 2, FirstFailure: "dial tcp 10.0.0.7:80: connect: connection refused\nafter 3 tries",
		Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	r.Set("NET-08", reporttest.Spec{Name: "failing pod to service", Attempts: 2, FirstFailure: "no endpoints", State: types.SpecStateFailed, Message: "no endpoints",
		Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	dir := r.Write(t)
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := reports.Flake{Spec: "[synthetic] flaky pod to pod", Attempts: 2,
		FirstFailure: &reports.Failure{Message: "dial tcp 10.0.0.7:80: connect: connection refused\nafter 3 tries", Location: reporttest.RetryLocation.String()}}
	flaky := run.Summary.Flaky
	if len(flaky) != 1 || flaky[0].Spec != want.Spec || flaky[0].Attempts != 2 || flaky[0].FirstFailure == nil || *flaky[0].FirstFailure != *want.FirstFailure {
		t.Fatalf("flaky %+v, want %+v (first failure %+v)", flaky, want, want.FirstFailure)
	}
	if note := flaky[0].Note(); note != "passed on attempt 2; attempt 1 failed at suites/networking/retry.go:42: dial tcp 10.0.0.7:80: connect: connection refused" {
		t.Errorf("note %q", note)
	}
	for _, c := range run.Summary.Claims {
		switch c.ID {
		case "NET-07":
			if c.Outcome != reports.Supported && c.Outcome != reports.Shown {
				t.Errorf("NET-07 passed on its retry: %s", c.Outcome)
			}
		case "NET-08":
			if c.Outcome != reports.Failed {
				t.Errorf("NET-08 failed on every attempt: %s, want failed", c.Outcome)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	junit, _ := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	for file, wants := range map[string][]string{
		string(md):    {"1 flaky (passed on a retry)", "- **[synthetic] flaky pod to pod**: passed on attempt 2; attempt 1 failed at suites/networking/retry.go:42: dial tcp"},
		string(junit): {`<property name="attempts" value="2">`, `<property name="firstFailure" value="dial tcp 10.0.0.7:80: connect: connection refused (suites/networking/retry.go:42)">`},
	} {
		for _, w := range wants {
			if !strings.Contains(file, w) {
				t.Errorf("a view lacks %q:\n%s", w, file)
			}
		}
	}
	if strings.Contains(string(md), "failing pod to service**: passed") {
		t.Errorf("summary.md calls the failure a flake:\n%s", md)
	}
}
