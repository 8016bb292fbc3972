package reports_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/flakerun"
)

func TestFlakeChild(t *testing.T) { flakerun.Child(t) }

// A real Ginkgo run with --ginkgo.flake-attempts=2, read back: the spec
// that passed on its retry is the run's one flake, with its first failure
// where it failed; the one that failed on both attempts is a failure; the
// one that passed at once is neither.
func TestARealRetryIsAFlake(t *testing.T) {
	dir := flakerun.Run(t, "TestFlakeChild")
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Summary.Flaky) != 1 {
		t.Fatalf("flaky %+v, want the spec that failed once", run.Summary.Flaky)
	}
	fl := run.Summary.Flaky[0]
	if fl.Spec != flakerun.Flaky || fl.Attempts != 2 || fl.FirstFailure == nil || fl.Artifacts != flakerun.Artifacts(flakerun.Flaky) ||
		fl.FirstFailure.Message != flakerun.FirstFailed || !strings.Contains(fl.FirstFailure.Location, "flakerun.go:") {
		t.Errorf("the flake: %+v, first failure %+v", fl, fl.FirstFailure)
	}
	for _, sp := range run.Summary.Specs {
		_, flaky := run.Summary.Flake(sp.Name)
		switch sp.Name {
		case flakerun.Flaky:
			if !flaky || sp.Result != reports.SpecPassed {
				t.Errorf("%s: %+v", sp.Name, sp)
			}
		case flakerun.Failing:
			if flaky || sp.Result != reports.SpecFailed || sp.Attempts != 2 {
				t.Errorf("%s: %+v", sp.Name, sp)
			}
		case flakerun.Steady:
			if flaky || sp.Attempts != 0 {
				t.Errorf("%s: %+v", sp.Name, sp)
			}
		}
	}
	if v := run.Summary.Violations; len(v) > 0 {
		t.Errorf("a record Ginkgo wrote with retries breaks its contract: %v", v)
	}
}

// firstFailureAt is how every view says the flake's first failure: the
// attempt it passed on, then where and how attempt 1 failed.
var firstFailureAt = regexp.MustCompile(`passed on attempt 2; attempt 1 failed at \S*testing/flakerun/flakerun\.go:\d+: dial tcp 10\.0\.0\.7:80: i/o timeout`)

// summary.md of a real run with a flake: the flake counted apart from the
// passes, and its first failure beside its pass in the flaky list and in
// its claim's row.
func TestSummaryMarkdownShowsAFlakesFirstFailure(t *testing.T) {
	dir := flakerun.Run(t, "TestFlakeChild")
	data, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	if !strings.Contains(md, "Specs: 1 passed, 1 flaky (passed on a retry), 1 failed.") {
		t.Errorf("summary.md does not count the flake apart from the passes:\n%s", md)
	}
	var flakeLine, claimRow string
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "- **"+flakerun.Flaky+"**"):
			flakeLine = l
		case strings.HasPrefix(l, "| NET-07 |"):
			claimRow = l
		}
	}
	if !firstFailureAt.MatchString(flakeLine) || !strings.HasSuffix(flakeLine, " (artifacts: `"+flakerun.Artifacts(flakerun.Flaky)+"`)") {
		t.Errorf("the flaky list's line %q lacks the first failure", flakeLine)
	}
	if !strings.Contains(claimRow, "| shown |") || !strings.Contains(claimRow, "passed only on a retry: "+flakerun.Flaky) ||
		!firstFailureAt.MatchString(claimRow) || !strings.Contains(claimRow, "flaky 1, passed 1") {
		t.Errorf("NET-07's row does not show its flake's first failure beside its pass, counted apart: %q", claimRow)
	}
	if strings.Contains(md, "**"+flakerun.Failing+"**: passed") || strings.Contains(md, "- **"+flakerun.Steady+"**") {
		t.Errorf("summary.md lists a spec as flaky that is not:\n%s", md)
	}
}

// summary.json of a real run with a flake (format v5): the flake, with
// its first failure, in the one list of flakes; its claim counts it apart
// from the passes and names it.
func TestSummaryJSONCarriesAFlakesFirstFailure(t *testing.T) {
	dir := flakerun.Run(t, "TestFlakeChild")
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Format string `json:"format"`
		Flaky  []struct {
			Spec         string `json:"spec"`
			Attempts     int    `json:"attempts"`
			FirstFailure struct {
				Message, Location string
			} `json:"firstFailure"`
		} `json:"flaky"`
		Specs  []map[string]any `json:"specs"`
		Claims []struct {
			ID    string         `json:"id"`
			Why   string         `json:"why"`
			Specs map[string]int `json:"specs"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Format != "winconform.summary/v5" {
		t.Errorf("format %q", s.Format)
	}
	if len(s.Flaky) != 1 || s.Flaky[0].Spec != flakerun.Flaky || s.Flaky[0].Attempts != 2 ||
		s.Flaky[0].FirstFailure.Message != flakerun.FirstFailed || !strings.Contains(s.Flaky[0].FirstFailure.Location, "flakerun.go:") {
		t.Errorf("flaky: %+v", s.Flaky)
	}
	for _, sp := range s.Specs {
		if _, ok := sp["firstFailure"]; ok {
			t.Errorf("spec %v carries a first failure of its own: the flaky list is its one place", sp["name"])
		}
	}
	for _, c := range s.Claims {
		if c.ID != "NET-07" {
			continue
		}
		if c.Specs[reports.SpecFlaky] != 1 || c.Specs[reports.SpecPassed] != 1 || !firstFailureAt.MatchString(c.Why) {
			t.Errorf("NET-07: specs %v, why %q", c.Specs, c.Why)
		}
	}
}

// The JUnit file of a real run with a flake: the flaky case passed, with
// its attempts and first failure; the run's properties count it apart.
func TestJUnitOfARealRunCarriesAFlakesFirstFailure(t *testing.T) {
	dir := flakerun.Run(t, "TestFlakeChild")
	data, err := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	type props struct {
		Property []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"property"`
	}
	var f struct {
		Suites []struct {
			Properties props `xml:"properties"`
			Cases      []struct {
				Name       string    `xml:"name,attr"`
				Status     string    `xml:"status,attr"`
				Properties props     `xml:"properties"`
				SystemOut  string    `xml:"system-out"`
				Failure    *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &f); err != nil || len(f.Suites) != 1 {
		t.Fatalf("%v\n%s", err, data)
	}
	get := func(p props, name string) string {
		for _, kv := range p.Property {
			if kv.Name == name {
				return kv.Value
			}
		}
		return ""
	}
	if n := get(f.Suites[0].Properties, reports.PropFlaky); n != "1" {
		t.Errorf("the run's %s property is %q, want 1", reports.PropFlaky, n)
	}
	found := false
	for _, c := range f.Suites[0].Cases {
		if c.Name != "[It] "+flakerun.Flaky {
			continue
		}
		found = true
		if c.Status != "passed" || c.Failure != nil || get(c.Properties, reports.PropAttempts) != "2" ||
			!strings.HasPrefix(get(c.Properties, reports.PropFirstFailure), flakerun.FirstFailed+" (") || !firstFailureAt.MatchString(c.SystemOut) {
			t.Errorf("the flaky case: status %s, failure %v, properties %+v, system-out %q", c.Status, c.Failure, c.Properties, c.SystemOut)
		}
	}
	if !found {
		t.Errorf("no case of the flake:\n%s", data)
	}
}
