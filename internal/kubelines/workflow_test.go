package kubelines

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestNightlyMatrixCoversTheOtherLines reads .github/workflows/nightly.yml:
// `make test` (ci.yml) runs the default line, and the nightly kind-lines
// job each other supported line, by KUBERNETES_VERSION, so that a line
// added to or dropped from the table is added to or dropped from CI too.
func TestNightlyMatrixCoversTheOtherLines(t *testing.T) {
	data, err := os.ReadFile("../../.github/workflows/nightly.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Kubernetes []string `yaml:"kubernetes"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	job, ok := wf.Jobs["kind-lines"]
	if !ok {
		t.Fatal("nightly.yml has no kind-lines job")
	}
	var want []string
	for _, l := range Lines() {
		if l != Default() {
			want = append(want, l.Version)
		}
	}
	if got := job.Strategy.Matrix.Kubernetes; !slices.Equal(got, want) {
		t.Errorf("kind-lines matrix = %v, want the lines other than the default %s: %v", got, Default().Version, want)
	}
	passes := false
	for _, s := range job.Steps {
		if strings.Contains(s.Run, "make e2e") && strings.Contains(s.Run, `KUBERNETES_VERSION="${{ matrix.kubernetes }}"`) {
			passes = true
		}
	}
	if !passes {
		t.Error("no kind-lines step runs make e2e with KUBERNETES_VERSION from the matrix")
	}
}
