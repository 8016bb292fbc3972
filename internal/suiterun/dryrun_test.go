package suiterun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// fakeSuite writes a suite binary, a shell script with body, and returns
// its path.
func fakeSuite(t *testing.T, body string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "e2e.test")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// The dry run asks the suite binary for a dry run, with the selection after
// the dry run's own flags, and returns the report it wrote.
func TestDryRun(t *testing.T) {
	args := filepath.Join(t.TempDir(), "args")
	bin := fakeSuite(t, `printf '%s\n' "$@" > `+args+`
for a; do case "$a" in --ginkgo.json-report=*) r="${a#--ginkgo.json-report=}";; esac; done
echo '[{"SuiteDescription":"winconform","PreRunStats":{"TotalSpecs":3,"SpecsThatWillRun":1}}]' > "$r"
`)
	r, err := DryRun(context.Background(), bin, []string{"--ginkgo.label-filter=os:linux"})
	if err != nil || r.PreRunStats.TotalSpecs != 3 || r.PreRunStats.SpecsThatWillRun != 1 {
		t.Fatalf("DryRun = %+v, %v", r.PreRunStats, err)
	}
	got, _ := os.ReadFile(args)
	if !strings.HasPrefix(string(got), "--ginkgo.dry-run\n") || !strings.HasSuffix(string(got), "\n--ginkgo.label-filter=os:linux\n") {
		t.Errorf("the suite binary's arguments:\n%s", got)
	}
}

// A suite binary that is not there, or refuses its arguments, is one line:
// the fix, or the suite's own reason.
func TestDryRunRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "e2e.test")
	if _, err := DryRun(context.Background(), missing, nil); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("a missing suite binary: %v", err)
	}
	bin := fakeSuite(t, "echo 'Running Suite'; echo 'winconform e2e: unknown SUITE \"nope\"' >&2; exit 1\n")
	if _, err := DryRun(context.Background(), bin, nil); err == nil || err.Error() != `unknown SUITE "nope"` {
		t.Errorf("a refused selection: %v", err)
	}
	bin = fakeSuite(t, "exit 0\n")
	if _, err := DryRun(context.Background(), bin, nil); err == nil || !strings.HasPrefix(err.Error(), "dry run of "+bin+": ") {
		t.Errorf("a dry run that wrote no report: %v", err)
	}
}

func TestRefusal(t *testing.T) {
	exit := errors.New("exit status 1")
	for _, tc := range []struct{ out, want string }{
		{"noise\nwinconform e2e: unknown claim NET-99\n", "unknown claim NET-99"},
		{"flag provided but not defined: -bogus\nUsage of e2e.test:\n", "suite flags: flag provided but not defined: -bogus (the suite binary's flags: e2e.test --help)"},
		{"invalid boolean value \"x\" for -ginkgo.v: parse error\n", `suite flags: invalid boolean value "x" for -ginkgo.v: parse error (the suite binary's flags: e2e.test --help)`},
		{"panic: something\n", "e2e.test refused the selection: exit status 1: panic: something"},
	} {
		if got := Refusal("e2e.test", tc.out, exit); got == nil || got.Error() != tc.want {
			t.Errorf("Refusal(%q) = %v, want %s", tc.out, got, tc.want)
		}
	}
}

func writeReports(t *testing.T, rs []types.Report) string {
	t.Helper()
	data, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadReport(t *testing.T) {
	first := types.Report{SuiteDescription: "winconform", SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"[networking]"}, LeafNodeText: "pod to pod passes", State: types.SpecStatePassed},
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"[networking]"}, LeafNodeText: "pod to pod fails", State: types.SpecStateFailed,
			Failure: types.Failure{Message: "expected 1\nto equal 2"}},
	}}
	second := types.Report{SuiteDescription: "second"}
	r, err := ReadReport(writeReports(t, []types.Report{first, second}))
	if err != nil {
		t.Fatal(err)
	}
	if r.SuiteDescription != "winconform" || len(r.SpecReports) != len(first.SpecReports) {
		t.Errorf("ReadReport = %q with %d specs, want the first suite", r.SuiteDescription, len(r.SpecReports))
	}
	if got := r.SpecReports[1]; got.State != types.SpecStateFailed || got.Failure.Message != "expected 1\nto equal 2" || got.FullText() != "[networking] pod to pod fails" {
		t.Errorf("spec after JSON = %v %q %q", got.State, got.Failure.Message, got.FullText())
	}
}

func TestReadReportErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadReport(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"not": "a list"}`), 0o644)
	if _, err := ReadReport(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("not a list: err = %v, want one naming %s", err, bad)
	}
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`[]`), 0o644)
	if _, err := ReadReport(empty); err == nil || !strings.Contains(err.Error(), "holds no suite") {
		t.Errorf("empty list: err = %v", err)
	}
}
