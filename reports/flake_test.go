package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
)

// retried makes sr a spec Ginkgo ran attempts times with --flake-attempts
// (MaxFlakeAttempts), keeping each failed attempt before the last as it
// does (v2.32.0, internal/group.go): "Failure recorded during attempt N:\n".
func retried(sr types.SpecReport, attempts int, first string) types.SpecReport {
	sr.NumAttempts, sr.MaxFlakeAttempts = attempts, attempts
	for n := 1; n < attempts; n++ {
		msg := first
		if n > 1 {
			msg = "failed again"
		}
		sr.AdditionalFailures = append(sr.AdditionalFailures, types.AdditionalFailure{State: types.SpecStateFailed, Failure: types.Failure{
			Message: "Failure recorded during attempt " + string(rune('0'+n)) + ":\n" + msg, FailureNodeType: types.NodeTypeIt,
			Location: types.CodeLocation{FileName: "suites/networking/pods.go", LineNumber: 77}}})
	}
	return sr
}

// flakeReport is a run with --flake-attempts=2: one spec passed on its
// retry (flaky), one failed on both attempts, one passed at once, and one
// that must pass three times (MustPassRepeatedly, no retry).
func flakeReport() types.Report {
	flaky := retried(spec("flaky", types.SpecStatePassed, "", []string{"claim:NET-07", "os:linux"}, ev(claims.Linux)), 2, "dial tcp 10.0.0.7:80: i/o timeout\nafter 30s")
	failed := retried(spec("fails twice", types.SpecStateFailed, "expected 1\nto equal 2", []string{"claim:NET-02", "os:linux"}, ev(claims.Linux)), 2, "expected 1\nto equal 2")
	steady := spec("passes", types.SpecStatePassed, "", []string{"claim:NET-08", "os:linux"}, ev(claims.Linux))
	steady.NumAttempts = 1
	repeated := spec("repeats", types.SpecStatePassed, "", []string{"claim:NET-09", "os:linux"}, ev(claims.Linux))
	repeated.NumAttempts, repeated.MaxMustPassRepeatedly = 3, 3
	return types.Report{SuiteDescription: "winconform", SuiteConfig: types.SuiteConfig{FlakeAttempts: 2},
		SpecReports: types.SpecReports{clusterEntry(linuxOnly...), flaky, failed, steady, repeated}}
}

func TestAFlakeIsAPassCountedApartWithItsFirstFailure(t *testing.T) {
	s := Summarize(flakeReport())
	if len(s.Flaky) != 1 || s.Flaky[0].Spec != "[networking] pod to pod flaky" {
		t.Fatalf("flaky %+v, want the spec that passed on its retry alone", s.Flaky)
	}
	bySpec := map[string]Spec{}
	for _, sp := range s.Specs {
		bySpec[strings.TrimPrefix(sp.Name, "[networking] pod to pod ")] = sp
	}
	flaky := func(name string) bool { _, ok := s.Flake("[networking] pod to pod " + name); return ok }
	fl := s.Flaky[0]
	if bySpec["flaky"].Result != SpecPassed || fl.Attempts != 2 || fl.FirstFailure == nil ||
		fl.FirstFailure.Message != "dial tcp 10.0.0.7:80: i/o timeout\nafter 30s" || fl.FirstFailure.Location != "suites/networking/pods.go:77" {
		t.Errorf("the flaky spec: %+v (first failure %+v)", fl, fl.FirstFailure)
	}
	if f := bySpec["fails twice"]; f.Result != SpecFailed || flaky("fails twice") || f.Message != "expected 1\nto equal 2" {
		t.Errorf("a spec that failed on every attempt is a failure, no flake: %+v", f)
	}
	for _, name := range []string{"passes", "repeats"} {
		if sp := bySpec[name]; sp.Result != SpecPassed || flaky(name) {
			t.Errorf("%s is no flake: %+v", name, sp)
		}
	}
	md := s.Markdown()
	for _, want := range []string{
		"Specs: 2 passed, 1 flaky (passed on a retry), 1 failed.",
		"## Flaky specs",
		"- **[networking] pod to pod flaky**: passed on attempt 2; attempt 1 failed at suites/networking/pods.go:77: dial tcp 10.0.0.7:80: i/o timeout\n",
		"- **[networking] pod to pod fails twice** (failed, :0): expected 1 (each of its 2 attempts failed)\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "pod to pod fails twice**: passed") || strings.Contains(md, "**[networking] pod to pod passes**") {
		t.Errorf("summary.md lists a spec as flaky that is not:\n%s", md)
	}
}

func TestJUnitKeepsAFlakePassedWithItsFirstFailure(t *testing.T) {
	r := flakeReport()
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := WriteJUnit(path, r, Summarize(r)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var f struct {
		Cases []struct {
			Name       string          `xml:"name,attr"`
			Status     string          `xml:"status,attr"`
			Properties junitProperties `xml:"properties"`
			SystemOut  string          `xml:"system-out"`
			Failure    *struct{}       `xml:"failure"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(data, &f); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	seen := 0
	for _, c := range f.Cases {
		props := map[string]string{}
		for _, p := range c.Properties.Property {
			props[p.Name] = p.Value
		}
		switch {
		case strings.HasSuffix(c.Name, " flaky"):
			seen++
			if c.Status != "passed" || c.Failure != nil || props[PropResult] != SpecPassed || props[PropAttempts] != "2" ||
				props[PropFirstFailure] != "dial tcp 10.0.0.7:80: i/o timeout (suites/networking/pods.go:77)" {
				t.Errorf("the flaky case: status %s, failure %v, properties %v", c.Status, c.Failure, props)
			}
			if !strings.Contains(c.SystemOut, "winconform: flaky: passed on attempt 2; attempt 1 failed at suites/networking/pods.go:77") || !strings.Contains(c.SystemOut, "after 30s") {
				t.Errorf("the flaky case's system-out lacks its first failure: %q", c.SystemOut)
			}
		case strings.HasSuffix(c.Name, " fails twice"), strings.HasSuffix(c.Name, " passes"), strings.HasSuffix(c.Name, " repeats"):
			seen++
			if props[PropAttempts] != "" || props[PropFirstFailure] != "" || strings.Contains(c.SystemOut, "flaky") {
				t.Errorf("%s is no flake: properties %v, system-out %q", c.Name, props, c.SystemOut)
			}
		}
	}
	if seen != 4 {
		t.Errorf("%d of the 4 specs' cases found:\n%s", seen, data)
	}
}

// A spec that passed on a retry but is labelled with a claim the catalogue
// lacks fails in the summary: it is a failure, not a flake.
func TestAMislabelledRetryIsNoFlake(t *testing.T) {
	r := flakeReport()
	typo := retried(spec("typo", types.SpecStatePassed, "", []string{"claim:NET-2O", "os:linux"}, ev(claims.Linux)), 2, "i/o timeout")
	r.SpecReports = append(r.SpecReports, typo)
	s := Summarize(r)
	if _, ok := s.Flake("[networking] pod to pod typo"); ok || len(s.Flaky) != 1 {
		t.Errorf("flaky %+v: the mislabelled spec is among them", s.Flaky)
	}
	for _, c := range s.Claims {
		if c.ID == "NET-2O" && (c.Outcome != Failed || c.Specs[SpecFailed] != 1 || c.Specs[SpecFlaky] != 0) {
			t.Errorf("NET-2O: %+v", c)
		}
	}
}
