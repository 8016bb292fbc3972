package winrelease

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestWindowsWorkflowPinsItsImages reads .github/workflows/windows.yml: the
// Windows runners run Windows images with process isolation, where an image
// of a later update revision than the runner fails to start (0xc0370106,
// microsoft/Windows-Containers#591), so each matrix entry pins its images to
// the version tag of its release's revision in this table, never a floating
// ltsc tag; and the Docker daemon, which may still be starting on a fresh
// runner, is waited for before the first docker command.
func TestWindowsWorkflowPinsItsImages(t *testing.T) {
	data, err := os.ReadFile("../../.github/workflows/windows.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Include []map[string]string `yaml:"include"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	job, ok := wf.Jobs["windows"]
	if !ok || len(job.Strategy.Matrix.Include) == 0 {
		t.Fatal("windows.yml has no windows job with a matrix")
	}
	for _, m := range job.Strategy.Matrix.Include {
		r, ok := Named(m["release"])
		if !ok {
			t.Errorf("matrix entry %v: release %q is none of %s", m, m["release"], List())
			continue
		}
		if want := (Version{Build: r.Build, Revision: r.Revision, HasRevision: true}).String(); m["image-tag"] != want {
			t.Errorf("matrix entry %s: image-tag %q, want the version tag %s (a floating tag may be newer than the runner)", m["os"], m["image-tag"], want)
		}
	}
	uses := map[string]bool{}
	for _, s := range job.Steps {
		if strings.Contains(s.Run, "image-tag") || strings.Contains(s.Run, "-Tag ") || strings.Contains(s.Run, "-BaseTag ") {
			uses[s.Name] = true
		}
	}
	for _, script := range []string{"Test-ProbeImage.ps1", "Test-WebServerContainer.ps1"} {
		for _, s := range job.Steps {
			if strings.Contains(s.Run, script) && !uses[s.Name] {
				t.Errorf("step %q runs %s without the matrix's image-tag", s.Name, script)
			}
		}
	}
	docker := regexp.MustCompile(`(?m)^\s*docker\s`)
	for _, s := range job.Steps {
		if strings.Contains(s.Run, "Wait-Docker.ps1") {
			break
		}
		if docker.MatchString(s.Run) || strings.Contains(s.Run, "Test-ProbeImage") || strings.Contains(s.Run, "Test-WebServerContainer") {
			t.Errorf("step %q uses Docker before Wait-Docker.ps1 has waited for its daemon", s.Name)
		}
	}
}
