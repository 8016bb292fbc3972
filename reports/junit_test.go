package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"
)

type junitFile struct {
	Suites []struct {
		Cases []struct {
			Name       string `xml:"name,attr"`
			Properties struct {
				Property []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"property"`
			} `xml:"properties"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestAmendJUnitAddsClaimAndEvidenceProperties(t *testing.T) {
	r := sampleReport()
	s := Summarize(r)
	for name, cfg := range map[string]reporters.JunitReportConfig{
		"with labels in the names": {},
		"without labels":           {OmitSpecLabels: true},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "junit_01.xml")
			if err := reporters.GenerateJUnitReportWithConfig(r, path, cfg); err != nil {
				t.Fatal(err)
			}
			if err := AmendJUnit(path, r, s); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			var f junitFile
			if err := xml.Unmarshal(data, &f); err != nil {
				t.Fatalf("the amended file does not parse: %v\n%s", err, data)
			}
			props := map[string]map[string][]string{}
			failures := 0
			for _, c := range f.Suites[0].Cases {
				if c.Failure != nil {
					failures++
				}
				for _, p := range c.Properties.Property {
					name := strings.TrimPrefix(c.Name, "[It] ")
					if i := strings.Index(name, " ["); i > 0 {
						name = name[:i]
					}
					if props[name] == nil {
						props[name] = map[string][]string{}
					}
					props[name][p.Name] = append(props[name][p.Name], p.Value)
				}
			}
			if failures == 0 {
				t.Error("the failures Ginkgo wrote were lost")
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
			check("web linux twin", PropResult, "passed")
			check("sch-05", PropEvidence, "scheduler")
			check("skips", PropEvidence, "none")
			check("skips", PropResult, "skipped")
			check("net-20", PropEvidence, "linux (partial: no cell probed from Windows pods)")
			check("net-20", PropShows, "")
			check("lim-05", PropResult, "inconclusive")
		})
	}
}

func TestAmendJUnitErrors(t *testing.T) {
	dir := t.TempDir()
	if err := AmendJUnit(filepath.Join(dir, "missing.xml"), sampleReport(), Summary{}); err == nil {
		t.Error("a missing file: no error")
	}
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte("<testsuites><testsuite>"), 0o644)
	if err := AmendJUnit(bad, sampleReport(), Summary{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a broken file: %v, want an error naming it", err)
	}
}
