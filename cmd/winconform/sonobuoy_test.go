package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/images"
)

// The test binary doubles as the suite binary's dry run: with fakeSuiteEnv
// set to a file, it records its arguments there and answers as the suite
// binary does: an unknown SUITE or flag in one line, or a JSON report
// saying how many specs would run (fakeSpecsEnv).
const (
	fakeSuiteEnv = "WINCONFORM_FAKE_SUITE"
	fakeSpecsEnv = "WINCONFORM_FAKE_SPECS"
)

func TestMain(m *testing.M) {
	if rec := os.Getenv(fakeSuiteEnv); rec != "" {
		os.Exit(fakeSuite(rec, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeSuite(record string, args []string) int {
	data, _ := json.Marshal(args)
	os.WriteFile(record, data, 0o644)
	report := ""
	filter := func([]string) bool { return true }
	for _, a := range args {
		switch {
		case a == "--suite=nope":
			fmt.Println("winconform e2e: unknown SUITE \"nope\": the suites are config, limitations")
			return 2
		case a == "--bogus":
			fmt.Println("flag provided but not defined: -bogus")
			fmt.Println("Usage of e2e.test:")
			return 2
		case strings.HasPrefix(a, "--ginkgo.json-report="):
			report = strings.TrimPrefix(a, "--ginkgo.json-report=")
		case strings.HasPrefix(a, "--ginkgo.label-filter="):
			filter, _ = types.ParseLabelFilter(strings.TrimPrefix(a, "--ginkgo.label-filter="))
		}
	}
	n := 0
	fmt.Sscan(os.Getenv(fakeSpecsEnv), &n)
	// Two of the specs, with their labels, as a dry run reports every spec
	// (those the filters leave out too).
	specs := []types.SpecReport{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "pods reach pods", ContainerHierarchyLabels: [][]string{{"suite:networking"}}, LeafNodeLabels: []string{"os:linux", "claim:NET-01"}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "a Windows pod reaches pods", ContainerHierarchyLabels: [][]string{{"suite:networking"}}, LeafNodeLabels: []string{"os:windows", "claim:NET-02"}},
	}
	// The specs the label filter leaves out are skipped, the others passed.
	for i := range specs {
		specs[i].State = types.SpecStateSkipped
		if filter(specs[i].Labels()) {
			specs[i].State = types.SpecStatePassed
		}
	}
	out, _ := json.Marshal([]types.Report{{SuiteDescription: "winconform", PreRunStats: types.PreRunStats{TotalSpecs: 121, SpecsThatWillRun: n}, SpecReports: specs}})
	if err := os.WriteFile(report, out, 0o644); err != nil {
		return 3
	}
	return 0
}

// fakeSuiteBinary is the test binary as the suite binary; calls returns the
// arguments of its last run (nil when it did not run).
func fakeSuiteBinary(t *testing.T, specs int) (string, func() []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "args.json")
	t.Setenv(fakeSuiteEnv, record)
	t.Setenv(fakeSpecsEnv, fmt.Sprint(specs))
	t.Setenv(images.OverridesEnv, "")
	return exe, func() []string {
		data, err := os.ReadFile(record)
		if err != nil {
			return nil
		}
		var args []string
		json.Unmarshal(data, &args)
		return args
	}
}

func TestPluginPassesTheSelectionThrough(t *testing.T) {
	bin, calls := fakeSuiteBinary(t, 24)
	pf := pluginFlags{rf: runFlags{binary: bin, suite: "limitations", claim: "LIM-01,LIM-02", labels: "os:linux"}, image: "winconform.local/suite:v0.1", pullPolicy: "IfNotPresent", strictDrift: true}
	p, n, err := pf.plugin(context.Background(), []string{"--disruptive"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 24 {
		t.Errorf("%d specs, want the dry run's 24", n)
	}
	want := []string{"--suite=limitations", "--claim=LIM-01,LIM-02", "--ginkgo.label-filter=os:linux", "--strict-drift", "--disruptive"}
	if !slices.Equal(p.Spec.Args, want) {
		t.Errorf("plugin args %q, want %q", p.Spec.Args, want)
	}
	got := calls()
	if !slices.Contains(got, "--ginkgo.dry-run") || !slices.Equal(got[len(got)-len(want):], want) {
		t.Errorf("the dry run got %q; want --ginkgo.dry-run and the plugin's arguments %q", got, want)
	}
}

func TestPluginRefusesBadInput(t *testing.T) {
	overrides := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(overrides, []byte("registries:\n  mcr.microsoft.com: [not, a, string]\n"), 0o644)
	for _, tc := range []struct {
		name    string
		pf      pluginFlags
		extra   []string
		specs   int
		want    []string
		dryRuns bool // whether the suite binary's dry run is reached
	}{
		{name: "unknown claim", pf: pluginFlags{rf: runFlags{claim: "NET-03,NOPE-9"}},
			want: []string{`unknown claim "NOPE-9"`}},
		{name: "bad label filter", pf: pluginFlags{rf: runFlags{labels: "os:linux && ("}},
			want: []string{`--labels "os:linux && ("`, "not a Ginkgo label filter", "Mismatched '('"}},
		{name: "unknown suite", pf: pluginFlags{rf: runFlags{suite: "nope"}}, dryRuns: true,
			want: []string{`unknown SUITE "nope"`, "limitations"}},
		{name: "unknown suite flag", extra: []string{"--bogus"}, dryRuns: true,
			want: []string{"suite flags: flag provided but not defined: -bogus"}},
		{name: "nothing selected", pf: pluginFlags{rf: runFlags{labels: "suite:nothing"}}, specs: 0, dryRuns: true,
			want: []string{"matches none of the 121 specs", "--ginkgo.label-filter=suite:nothing", "no spec has the label suite:nothing"}},
		{name: "a flag the runner sets", extra: []string{"--report-dir=/x"},
			want: []string{"--report-dir cannot be passed"}},
		{name: "bad pull policy", pf: pluginFlags{pullPolicy: "Sometimes"},
			want: []string{`pull policy "Sometimes"`}},
		{name: "bad image overrides", pf: pluginFlags{overrides: overrides},
			want: []string{overrides, "registries"}},
		{name: "missing image overrides", pf: pluginFlags{overrides: filepath.Join(t.TempDir(), "none.yaml")},
			want: []string{"--image-overrides", "none.yaml does not exist: check the path of the image override file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, calls := fakeSuiteBinary(t, tc.specs)
			tc.pf.rf.binary = bin
			if tc.pf.image == "" {
				tc.pf.image = "winconform.local/suite:v0.1"
			}
			p, _, err := tc.pf.plugin(context.Background(), tc.extra)
			if err == nil {
				t.Fatalf("no error; plugin %+v", p)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if ran := calls() != nil; ran != tc.dryRuns {
				t.Errorf("dry run reached: %v, want %v", ran, tc.dryRuns)
			}
		})
	}
}

func TestPluginWithoutSuiteBinary(t *testing.T) {
	pf := pluginFlags{rf: runFlags{binary: filepath.Join(t.TempDir(), "e2e.test")}, image: "x"}
	_, _, err := pf.plugin(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("%v, want an error naming make build", err)
	}
}

func TestPluginCarriesImageOverrides(t *testing.T) {
	bin, calls := fakeSuiteBinary(t, 3)
	file := filepath.Join(t.TempDir(), "overrides.yaml")
	content := "images:\n  probe: mirror.example.com/winconform/probe:v0.1\n"
	os.WriteFile(file, []byte(content), 0o644)
	t.Setenv(images.OverridesEnv, file) // the CLI's own overrides go to the plugin too
	pf := pluginFlags{rf: runFlags{binary: bin}, image: "mirror.example.com/winconform/suite:v0.1", pullPolicy: "Always"}
	p, _, err := pf.plugin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.ConfigMap["image-overrides.yaml"] != content || !slices.Contains(p.Spec.Args, "--image-overrides=/tmp/sonobuoy/config/image-overrides.yaml") {
		t.Errorf("config-map %q args %q", p.ConfigMap, p.Spec.Args)
	}
	if !slices.Contains(calls(), "--image-overrides="+file) {
		t.Errorf("the dry run did not check the overrides: %q", calls())
	}
}

func TestPluginCommandWritesNothingOnBadInput(t *testing.T) {
	bin, _ := fakeSuiteBinary(t, 5)
	out := filepath.Join(t.TempDir(), "winconform.yaml")
	run := func(args ...string) error {
		cmd := sonobuoyPluginCmd()
		cmd.SetArgs(append([]string{"--suite-binary", bin, "-o", out}, args...))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		return cmd.ExecuteContext(context.Background())
	}
	if err := run("--claim", "LIM-99"); err == nil {
		t.Error("an unknown claim was accepted")
	}
	if err := run("stray", "more"); err == nil || !strings.Contains(err.Error(), "suite binary flags go after --") {
		t.Errorf("an argument before --: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the plugin was written despite bad input")
	}
	if err := run("--suite", "limitations", "--", "--strict-drift"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Spec struct {
			Args []string `json:"args"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil || !slices.Equal(doc.Spec.Args, []string{"--suite=limitations", "--strict-drift"}) {
		t.Errorf("written plugin args %q (%v)", doc.Spec.Args, err)
	}
}

func TestJUnitFailures(t *testing.T) {
	n, err := junitFailures([]byte(`<testsuites tests="5" failures="2" errors="1"><testsuite/></testsuites>`))
	if err != nil || n != 3 {
		t.Errorf("%d, %v; want 3", n, err)
	}
	if _, err := junitFailures([]byte("nope")); err == nil {
		t.Error("no error for a report that is not XML")
	}
}

// --flake-attempts is one flag, e2e's, on the Sonobuoy commands too: the
// plugin passes it on as Ginkgo's own setting, its range is e2e's, and
// Ginkgo's flag after -- is refused with the harness's flag to use.
func TestSonobuoyTakesFlakeAttemptsAsE2EDoes(t *testing.T) {
	e2e := e2eCmd().Flags().Lookup("flake-attempts")
	for _, cmd := range []*cobra.Command{sonobuoyPluginCmd(), sonobuoyRunCmd()} {
		f := cmd.Flags().Lookup("flake-attempts")
		if f == nil || e2e == nil || f.Usage != e2e.Usage || f.DefValue != e2e.DefValue || f.Value.Type() != e2e.Value.Type() {
			t.Errorf("%s --flake-attempts: %+v, want e2e's %+v", cmd.Name(), f, e2e)
		}
	}
	bin, calls := fakeSuiteBinary(t, 4)
	out := filepath.Join(t.TempDir(), "winconform.yaml")
	run := func(args ...string) error {
		cmd := sonobuoyPluginCmd()
		cmd.SetArgs(append([]string{"--suite-binary", bin, "-o", out}, args...))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		return cmd.ExecuteContext(context.Background())
	}
	if err := run("--suite", "limitations", "--flake-attempts", "2"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Spec struct {
			Args []string `json:"args"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil || !slices.Equal(doc.Spec.Args, []string{"--suite=limitations", "--ginkgo.flake-attempts=2"}) {
		t.Errorf("written plugin args %q (%v)", doc.Spec.Args, err)
	}
	if calls() == nil {
		t.Error("the selection was not checked")
	}
	if err := run("--flake-attempts", "9"); err == nil {
		t.Error("--flake-attempts 9 was accepted (e2e takes 0 to 5)")
	}
	if err := run("--", "--ginkgo.flake-attempts=2"); err == nil || !strings.Contains(err.Error(), "use plugin --flake-attempts instead") {
		t.Errorf("Ginkgo's flag after --: %v", err)
	}
}
