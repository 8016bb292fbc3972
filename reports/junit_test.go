package reports

import (
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/internal/version"
)

type junitProperties struct {
	Property []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"property"`
}

type junitFile struct {
	Suites []struct {
		Properties junitProperties `xml:"properties"`
		Cases      []struct {
			Name       string          `xml:"name,attr"`
			Properties junitProperties `xml:"properties"`
			Failure    *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestWriteJUnitAddsCaseAndRunProperties(t *testing.T) {
	r := sampleReport()
	s := Summarize(r)
	s.Stamp = version.Stamp{RunID: "wc-20260301t120000-0a1b2c3d", Harness: version.Info{Version: "v0.3.0", Commit: "0123456789abcdef", Modified: true}}
	dir := t.TempDir()
	path := filepath.Join(dir, JUnitFile)
	if err := WriteJUnit(path, r, s); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var f junitFile
	if err := xml.Unmarshal(data, &f); err != nil {
		t.Fatalf("the JUnit file does not parse: %v\n%s", err, data)
	}
	if len(f.Suites) != 1 {
		t.Fatalf("%d test suites, want 1", len(f.Suites))
	}
	run := map[string]string{}
	for _, p := range f.Suites[0].Properties.Property {
		run[p.Name] = p.Value
	}
	// Ginkgo's own suite properties stay; the run's are beside them: a
	// dashboard that reads only the JUnit sees that this run, on a cluster
	// without Windows nodes, showed nothing on Windows.
	for k, want := range map[string]string{"SuiteSucceeded": "false", PropShown: strconv.Itoa(s.Shown), PropShownOnWindows: "0",
		PropClaims: strconv.Itoa(s.Total), PropWindowsNodes: "0", PropRunID: "wc-20260301t120000-0a1b2c3d", PropVersion: "v0.3.0",
		PropCommit: "0123456789abcdef+modified", PropStatus: s.Status} {
		if run[k] != want {
			t.Errorf("run property %s = %q, want %q", k, run[k], want)
		}
	}
	props := map[string]map[string][]string{}
	failures := 0
	var names []string
	for _, c := range f.Suites[0].Cases {
		names = append(names, c.Name)
		if c.Failure != nil {
			failures++
		}
		for _, p := range c.Properties.Property {
			name := strings.TrimPrefix(c.Name, "[It] ")
			if props[name] == nil {
				props[name] = map[string][]string{}
			}
			props[name][p.Name] = append(props[name][p.Name], p.Value)
		}
	}
	if failures == 0 {
		t.Error("the failures Ginkgo wrote were lost")
	}
	if !slices.IsSorted(names) {
		t.Errorf("test cases are not sorted by name (as the e2e framework writes them): %q", names)
	}
	check := func(spec, prop string, want ...string) {
		t.Helper()
		got := props["[networking] pod to pod "+spec][prop]
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %s = %q, want %q", spec, prop, got, want)
		}
	}
	check("passes", PropClaim, "NET-07")
	check("passes", PropEvidence, "linux")
	check("passes", PropShows, "NET-07")
	check("web linux twin", PropEvidence, "linux")
	check("web linux twin", PropShows, "")
	check("web linux twin", PropResult, SupportedOnly)
	check("lim-09 echo", PropResult, SupportedOnly)
	check("passes", PropResult, SpecPassed)
	// A Linux twin and an API echo of a claim on Windows are no passes:
	// their test cases are skipped, saying what they supported.
	for _, c := range f.Suites[0].Cases {
		for _, name := range []string{"web linux twin", "lim-09 echo", "cfg-04 linux twin"} {
			if strings.HasPrefix(c.Name, "[It] [networking] pod to pod "+name) && (c.Skipped == nil || !strings.Contains(c.Skipped.Message, "supported only")) {
				t.Errorf("%s: skipped %+v, want a skipped case saying it only supported its claim", name, c.Skipped)
			}
		}
		if strings.HasPrefix(c.Name, "[It] [networking] pod to pod passes") && c.Skipped != nil {
			t.Errorf("a spec that showed its claim is no pass: %+v", c.Skipped)
		}
	}
	check("sch-05", PropEvidence, "scheduler")
	check("skips", PropEvidence, "none")
	check("skips", PropResult, "skipped")
	check("net-20", PropEvidence, "linux (partial: no cell probed from Windows pods)")
	check("net-20", PropShows, "")
	check("lim-05", PropResult, "inconclusive")
	// One file: nothing left beside it.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the report directory holds %d entries, want the JUnit file alone", len(entries))
	}
}

func TestWriteJUnitOnAnUnknownCluster(t *testing.T) {
	s := Summarize(types.Report{SuiteDescription: "winconform"})
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := WriteJUnit(path, types.Report{SuiteDescription: "winconform"}, s); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `<property name="windowsNodes" value="unknown">`) {
		t.Errorf("a run that never reached the cluster says its Windows nodes are 0, not unknown:\n%s", data)
	}
	if err := WriteJUnit(filepath.Join(t.TempDir(), "missing", JUnitFile), types.Report{}, s); err == nil {
		t.Error("writing into a missing directory: no error")
	}
}

// A run whose `up` (or join) failed writes a JUnit file with the step as a
// failed test case, so that a dashboard that reads only JUnit goes red.
func TestWriteStepFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), JUnitFile)
	stamp := version.Stamp{RunID: "wc-20260301t120000-0a1b2c3d", Harness: version.Info{Version: "v0.3.0"}}
	if err := WriteStepFailure(path, stamp, "up", errors.New("kind: node image pull timed out")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var f struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Failures   int `xml:"failures,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &f); err != nil || len(f.Suites) != 1 {
		t.Fatalf("%v\n%s", err, data)
	}
	s := f.Suites[0]
	if f.Failures != 1 || s.Failures != 1 || len(s.Cases) != 1 || s.Cases[0].Failure == nil || !strings.Contains(s.Cases[0].Name, "[winconform] up") ||
		!strings.Contains(s.Cases[0].Failure.Text, "up failed before the suites ran: kind: node image pull timed out") {
		t.Errorf("the JUnit of a failed up has no failed test case for it:\n%s", data)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props[PropRunID] != stamp.RunID || props[PropWindowsNodes] != "unknown" || props[PropShown] != "0" || !strings.Contains(props[PropStatus], "failed before the suites ran (up)") {
		t.Errorf("run properties %v", props)
	}
}

// A report node that passed is no test case (Sonobuoy counted the progress
// reporter's ReportBeforeSuite as one more spec passed); one that failed
// stays, so that its failure is seen.
func TestWriteJUnitLeavesOutPassedReportNodes(t *testing.T) {
	r := sampleReport()
	r.SpecReports = append(r.SpecReports,
		types.SpecReport{LeafNodeType: types.NodeTypeReportBeforeSuite, State: types.SpecStatePassed},
		types.SpecReport{LeafNodeType: types.NodeTypeReportAfterSuite, State: types.SpecStateFailed,
			Failure: types.Failure{Message: "the report could not be written"}})
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := WriteJUnit(path, r, Summarize(r)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var f junitFile
	if err := xml.Unmarshal(data, &f); err != nil || len(f.Suites) != 1 {
		t.Fatalf("the JUnit file: %v\n%s", err, data)
	}
	var before, after int
	for _, c := range f.Suites[0].Cases {
		switch {
		case strings.HasPrefix(c.Name, "[ReportBeforeSuite]"):
			before++
		case strings.HasPrefix(c.Name, "[ReportAfterSuite]"):
			after++
			if c.Failure == nil {
				t.Errorf("the failed ReportAfterSuite case has no failure")
			}
		}
	}
	if before != 0 || after != 1 {
		t.Errorf("test cases: %d passed ReportBeforeSuite (want 0), %d failed ReportAfterSuite (want 1)", before, after)
	}
}

// A run's own properties (--junit-property, recorded with the run) follow
// the harness's in the test suite's properties, never in their place.
func TestWriteJUnitCarriesTheRunsProperties(t *testing.T) {
	s := Summarize(types.Report{SuiteDescription: "winconform"})
	s.Properties = [][2]string{{"build", "20348.2340"}, {"shown", "93"}}
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := WriteJUnit(path, types.Report{SuiteDescription: "winconform"}, s); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	out := string(data)
	if !strings.Contains(out, `<property name="build" value="20348.2340">`) || strings.Count(out, `name="shown"`) != 1 {
		t.Errorf("the run's properties:\n%s", out)
	}
	if i, j := strings.Index(out, `name="commit"`), strings.Index(out, `name="build"`); i < 0 || j < i {
		t.Errorf("the run's property does not follow the harness's:\n%s", out)
	}
	if !ReservedProperty("shown") || ReservedProperty("build") {
		t.Error("ReservedProperty")
	}
}

// A failed spec's test case names its bundle; a passed one names none.
func TestWriteJUnitNamesAFailedSpecsBundle(t *testing.T) {
	r := sampleReport()
	failed := -1
	for i, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && failed < 0 {
			failed = i
		}
	}
	if failed < 0 {
		t.Fatal("the sample has no spec")
	}
	sr := &r.SpecReports[failed]
	sr.State, sr.Failure = types.SpecStateFailed, types.Failure{Message: "the probe timed out", FailureNodeType: types.NodeTypeIt}
	sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: ArtifactsEntry, Value: types.WrapEntryValue("artifacts/the-spec-1a2b")})
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := WriteJUnit(path, r, Summarize(r)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var f junitFile
	if err := xml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "The failure bundle") || !strings.Contains(string(data), "artifacts/the-spec-1a2b in the report directory") {
		t.Errorf("the JUnit does not name the failed spec's bundle:\n%s", data)
	}
	if n := strings.Count(string(data), "The failure bundle"); n != strings.Count(string(data), "artifacts/the-spec-1a2b in the report directory") {
		t.Errorf("a bundle is named for a spec that has none:\n%s", data)
	}
}
