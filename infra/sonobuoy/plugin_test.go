package sonobuoy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/images/suiteimage"
)

// parse reads a plugin definition back as Sonobuoy would see it: a generic
// document, field by field.
func parse(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the plugin is not YAML: %v\n%s", err, data)
	}
	return doc
}

func field(t *testing.T, doc map[string]any, path ...string) any {
	t.Helper()
	var cur any = doc
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: not a mapping at %s", strings.Join(path, "."), p)
		}
		cur = m[p]
	}
	return cur
}

func TestPluginHasWhatSonobuoyNeeds(t *testing.T) {
	p, err := New(Options{Args: []string{"--suite=limitations", "--claim=LIM-01", "--ginkgo.label-filter=os:linux"}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, data)
	for path, want := range map[string]any{
		"sonobuoy-config.driver":        "Job",
		"sonobuoy-config.plugin-name":   "winconform",
		"sonobuoy-config.result-format": "junit",
		"spec.image":                    suiteimage.Suite,
		"spec.imagePullPolicy":          "IfNotPresent",
		"spec.name":                     "plugin",
	} {
		if got := field(t, doc, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if got := field(t, doc, "sonobuoy-config", "result-files"); !reflect.DeepEqual(got, []any{"junit_01.xml"}) {
		t.Errorf("result-files = %v, want [junit_01.xml] only (Ginkgo's report.xml would count every spec twice)", got)
	}
	if got := field(t, doc, "spec", "command"); !reflect.DeepEqual(got, []any{suiteimage.RunnerPath}) {
		t.Errorf("command = %v, want the runner %s", got, suiteimage.RunnerPath)
	}
	if got := field(t, doc, "spec", "args"); !reflect.DeepEqual(got, []any{"--suite=limitations", "--claim=LIM-01", "--ginkgo.label-filter=os:linux"}) {
		t.Errorf("args = %v, want the selection as given", got)
	}
	mounts, _ := field(t, doc, "spec", "volumeMounts").([]any)
	if len(mounts) != 1 || !reflect.DeepEqual(mounts[0], map[string]any{"name": "results", "mountPath": "/tmp/sonobuoy/results"}) {
		t.Errorf("volumeMounts = %v, want Sonobuoy's results volume at /tmp/sonobuoy/results", mounts)
	}
	if _, ok := doc["podSpec"]; ok {
		t.Errorf("a podSpec replaces Sonobuoy's default one (its service account, Linux node selector and tolerations)")
	}
	if _, ok := doc["config-map"]; ok {
		t.Errorf("a config-map without image overrides")
	}

	// And strictly, into the type: no field is misspelt.
	var back Plugin
	if err := yaml.UnmarshalStrict(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, p) {
		t.Errorf("round trip changed the plugin:\n%+v\n%+v", back, *p)
	}
}

func TestPluginImageOverridesGoThroughTheConfigMap(t *testing.T) {
	overrides := []byte("images:\n  probe: mirror.example.com/probe:v0.1\n")
	p, err := New(Options{Image: "mirror.example.com/suite:v1", PullPolicy: corev1.PullAlways, ImageOverrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, data)
	if got := field(t, doc, "config-map", "image-overrides.yaml"); got != string(overrides) {
		t.Errorf("config-map image-overrides.yaml = %q, want the file", got)
	}
	if got := field(t, doc, "spec", "args"); !reflect.DeepEqual(got, []any{"--image-overrides=/tmp/sonobuoy/config/image-overrides.yaml"}) {
		t.Errorf("args = %v, want the config-map's file, where Sonobuoy mounts it", got)
	}
	if field(t, doc, "spec", "image") != "mirror.example.com/suite:v1" || field(t, doc, "spec", "imagePullPolicy") != "Always" {
		t.Errorf("image and pull policy not as given: %s", data)
	}
}

func TestPluginRefusesWhatTheRunnerDecides(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubeconfig=/root/.kube/config"}, "--kubeconfig cannot be passed"},
		{[]string{"--suite=x", "--report-dir", "/tmp/r"}, "--report-dir cannot be passed"},
		{[]string{"-probe-binary=/p"}, "a pod is not outside the cluster"},
		{[]string{"--inventory=m.yaml"}, "passwords"},
		{[]string{"--kwok-binary=/k"}, "kwok is in the suite image"},
		{[]string{"--rerun-of=_output/report"}, "select the specs with --claim or --labels"},
	} {
		if _, err := New(Options{Args: tc.args}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q): %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := New(Options{PullPolicy: "Sometimes"}); err == nil || !strings.Contains(err.Error(), "IfNotPresent") {
		t.Errorf("a bad pull policy: %v", err)
	}
	if _, err := New(Options{Args: []string{"--strict-drift", "--ginkgo.label-filter=os:linux"}}); err != nil {
		t.Errorf("other suite flags pass: %v", err)
	}
}

// FlakeAttempts reaches the suite binary as Ginkgo's own setting: the
// plugin's arguments, read by Ginkgo's flag set for the suite binary,
// set its SuiteConfig.FlakeAttempts; none without it; and the plugin's
// arguments may not set it beside the option.
func TestPluginFlakeAttemptsAreGinkgos(t *testing.T) {
	read := func(args []string) int {
		t.Helper()
		var suite types.SuiteConfig
		var reporter types.ReporterConfig
		var flags types.GinkgoFlags
		for _, f := range types.SuiteConfigFlags.CopyAppend(types.ReporterConfigFlags...) {
			if strings.HasPrefix(f.KeyPath, "S.") || strings.HasPrefix(f.KeyPath, "R.") {
				flags = append(flags, f)
			}
		}
		fs, err := types.NewGinkgoFlagSet(flags.WithPrefix("ginkgo"), map[string]any{"S": &suite, "R": &reporter}, types.FlagSections)
		if err != nil {
			t.Fatal(err)
		}
		var ginkgo []string
		for _, a := range args {
			if strings.HasPrefix(a, "--ginkgo.") {
				ginkgo = append(ginkgo, a)
			}
		}
		if _, err := fs.Parse(ginkgo); err != nil {
			t.Fatalf("Ginkgo refuses %q: %v", ginkgo, err)
		}
		return suite.FlakeAttempts
	}
	sel := []string{"--suite=limitations"}
	for attempts, want := range map[int]int{0: 0, 1: 0, 2: 2, 5: 5} {
		p, err := New(Options{Args: sel, FlakeAttempts: attempts})
		if err != nil {
			t.Fatal(err)
		}
		if got := read(p.Spec.Args); got != want || p.Spec.Args[0] != sel[0] {
			t.Errorf("FlakeAttempts %d: args %q give Ginkgo %d attempts, want %d", attempts, p.Spec.Args, got, want)
		}
	}
	if _, err := New(Options{Args: []string{"--ginkgo.flake-attempts=3"}}); err == nil || !strings.Contains(err.Error(), "FlakeAttempts") {
		t.Errorf("the plugin's arguments set Ginkgo's retries: %v", err)
	}
}
