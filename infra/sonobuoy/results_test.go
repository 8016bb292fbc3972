package sonobuoy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExtractTakesThePluginResults(t *testing.T) {
	inner := tarGz(map[string]string{"cluster.json": "{}", "ginkgo/report.json": "[]"})
	outer := tarGz(map[string]string{
		PluginResults + "junit_01.xml":                     "<testsuites/>",
		PluginResults + "summary.md":                       "# summary",
		"./" + PluginResults + "network-matrix.json":       "{}",
		PluginResults + "results.tar.gz":                   string(inner),
		"plugins/other/results/global/junit_01.xml":        "not ours",
		"resources/cluster/nodes.json":                     "{}",
		"plugins/" + PluginName + "/sonobuoy_results.yaml": "name: winconform",
	})
	path := filepath.Join(t.TempDir(), "results.tar.gz")
	if err := os.WriteFile(path, outer, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := Extract(path, dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	want := []string{"cluster.json", "ginkgo/report.json", "junit_01.xml", "network-matrix.json", "summary.md"}
	if !slices.Equal(files, want) {
		t.Errorf("extracted %q, want %q", files, want)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "summary.md")); string(data) != "# summary" {
		t.Errorf("summary.md = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "ginkgo", "report.json")); string(data) != "[]" {
		t.Errorf("ginkgo/report.json (from the packed directory) = %q", data)
	}
}

func TestExtractRefusesPathsOutOfTheDirectory(t *testing.T) {
	// path.Clean keeps a name inside the prefix from climbing out of it.
	data := tarGz(map[string]string{PluginResults + "../../../../../../escape": "x"})
	path := filepath.Join(t.TempDir(), "r.tar.gz")
	os.WriteFile(path, data, 0o644)
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := Extract(path, dir); err == nil {
		t.Error("no error for a tarball without our results")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Error("a file was written outside the directory")
	}
}

func TestExtractWithoutResultsSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.tar.gz")
	os.WriteFile(path, tarGz(map[string]string{"meta/run.log": "x"}), 0o644)
	_, err := Extract(path, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "sent no results") || !strings.Contains(err.Error(), "e2e.log") {
		t.Errorf("%v, want an error saying the plugin sent nothing and where to look", err)
	}
	os.WriteFile(path, []byte("not a tarball"), 0o644)
	if _, err := Extract(path, t.TempDir()); err == nil {
		t.Error("no error for a file that is not a tarball")
	}
}

func TestParseDetailedAndWriteSpecs(t *testing.T) {
	out := strings.Join([]string{
		`{"name":"[limitations] LIM-01 privileged [os:linux]","status":"passed","meta":{"path":"winconform|global|junit_01.xml"}}`,
		`{"name":"[limitations] LIM-02 windows","status":"skipped","meta":{},"details":{"skipped":"skipped: no Windows node\nmore"}}`,
		`{"name":"[networking] NET-01","status":"skipped","details":{"skipped":"skipped"}}`,
		`{"name":"[limitations] LIM-03","status":"failed","details":{"failure":"expected x\ngot y"}}`,
		``,
	}, "\n")
	specs, err := ParseDetailed(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 4 {
		t.Fatalf("%d specs: %+v", len(specs), specs)
	}
	if specs[1].Message != "skipped: no Windows node\nmore" || !specs[1].Selected() || specs[2].Selected() {
		t.Errorf("skips: %+v", specs[1:3])
	}
	var b bytes.Buffer
	WriteSpecs(&b, specs)
	got := b.String()
	for _, want := range []string{
		"  failed  [limitations] LIM-03\n            expected x\n",
		"  passed  [limitations] LIM-01 privileged [os:linux] (shows nothing: the JUnit report names no claim or evidence for it)\n",
		"  skipped [limitations] LIM-02 windows\n            skipped: no Windows node\n",
		"1 passed: 0 showing its claims, 1 only supporting them (below their evidence level); 1 failed, 1 skipped (with their reasons); 1 outside the selection",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "NET-01") {
		t.Errorf("a spec outside the selection is listed:\n%s", got)
	}
	if strings.Index(got, "failed ") > strings.Index(got, "passed ") {
		t.Errorf("failures come first:\n%s", got)
	}

	if _, err := ParseDetailed("{not json\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad output: %v", err)
	}
	other, err := ParseDetailed(`winconform|Container sonobuoy-worker is in a terminated state (exit code 1) {"error":"x"}` + "\n")
	if err != nil || len(other) != 1 || other[0].Status != Other {
		t.Fatalf("a line that is not a spec: %+v, %v", other, err)
	}
	b.Reset()
	WriteSpecs(&b, other)
	if !strings.Contains(b.String(), "other   winconform|Container sonobuoy-worker") || !strings.Contains(b.String(), "1 result(s) that are not specs") {
		t.Errorf("a line that is not a spec is not shown:\n%s", b.String())
	}
}

func TestFromJUnitSkipReasons(t *testing.T) {
	specs := []Spec{
		{Name: "[It] a LIM-03 windows", Status: "skipped"},
		{Name: "[It] NET-01 outside", Status: "skipped"},
		{Name: "[It] passes", Status: "passed"},
	}
	junit := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3"><testsuite name="winconform" tests="3">
<testcase name="[It] a LIM-03 windows" status="skipped"><skipped message="skipped - no Windows node in this cluster"></skipped></testcase>
<testcase name="[It] NET-01 outside" status="skipped"><skipped message="skipped"></skipped></testcase>
<testcase name="[It] passes" status="passed"></testcase>
</testsuite></testsuites>`
	if err := FromJUnit(specs, []byte(junit)); err != nil {
		t.Fatal(err)
	}
	if specs[0].Message != "skipped - no Windows node in this cluster" || !specs[0].Selected() {
		t.Errorf("a spec that ran and skipped: %+v", specs[0])
	}
	if specs[1].Selected() {
		t.Errorf("a spec outside the selection counts as selected: %+v", specs[1])
	}
	if specs[2].Message != "" || !specs[2].Selected() {
		t.Errorf("a passed spec: %+v", specs[2])
	}
	if err := FromJUnit(specs, []byte("<oops")); err == nil {
		t.Error("no error for a report that is not XML")
	}
}

// A passing spec shows its claims only at their evidence level (the JUnit's
// shows property, reports.AmendJUnit); a Linux twin or an API-only check
// passes without showing them. The count says which, as the summary does.
func TestWriteSpecsCountsShownApartFromSupported(t *testing.T) {
	specs := []Spec{
		{Name: "[It] NET-07 linux pods", Status: "passed"},
		{Name: "[It] WEB-01 linux twin", Status: "passed"},
		{Name: "[It] LIM-09 API echo", Status: "passed"},
		{Name: "[It] NET-03 windows", Status: "skipped", Message: "no Windows node"},
	}
	junit := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4"><testsuite name="winconform" tests="4">
<testcase name="[It] NET-07 linux pods" status="passed"><properties><property name="claim" value="NET-07"></property><property name="evidence" value="linux"></property><property name="shows" value="NET-07"></property><property name="result" value="passed"></property></properties></testcase>
<testcase name="[It] WEB-01 linux twin" status="passed"><properties><property name="claim" value="WEB-01"></property><property name="evidence" value="linux"></property><property name="shows" value=""></property><property name="result" value="passed"></property></properties></testcase>
<testcase name="[It] LIM-09 API echo" status="passed"><properties><property name="claim" value="LIM-09"></property><property name="evidence" value="api"></property><property name="shows" value=""></property></properties></testcase>
<testcase name="[It] NET-03 windows" status="skipped"><skipped message="no Windows node"></skipped></testcase>
</testsuite></testsuites>`
	if err := FromJUnit(specs, []byte(junit)); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteSpecs(&b, specs)
	got := b.String()
	for _, want := range []string{
		"  passed  [It] NET-07 linux pods (shows NET-07)\n",
		"  passed  [It] WEB-01 linux twin (shows nothing: WEB-01 only supported, evidence linux)\n",
		"  passed  [It] LIM-09 API echo (shows nothing: LIM-09 only supported, evidence api)\n",
		"3 passed: 1 showing its claims, 2 only supporting them (below their evidence level); 0 failed, 1 skipped (with their reasons); 0 outside the selection",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
