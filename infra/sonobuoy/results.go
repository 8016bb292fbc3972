package sonobuoy

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/winconform/winconform/internal/text"
)

// Spec is one spec as `sonobuoy results --mode detailed` reports it.
type Spec struct {
	Name    string
	Status  string // passed, failed, skipped
	Message string // the failure, or the reason for a skip
}

// Selected says whether the spec was in the run's selection. Sonobuoy
// counts the specs a label filter left out as skipped; their JUnit entry
// carries no reason of its own ("skipped"), while a spec that ran and
// skipped carries its reason (AddSkipReasons).
func (s Spec) Selected() bool {
	return s.Status != "skipped" || s.Message != "" && s.Message != "skipped"
}

// Other is the status of a line of `sonobuoy results --mode detailed` that
// is not a spec: Sonobuoy prints a result it holds as a file (such as the
// error it recorded for a plugin that failed) as the file's path and content.
const Other = "other"

// ParseDetailed reads the JSON lines of `sonobuoy results --mode detailed`;
// other lines are kept as Specs of status Other, their text as the name.
func ParseDetailed(out string) ([]Spec, error) {
	var specs []Spec
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "{") {
			if len(line) > 300 {
				line = line[:300] + " ..."
			}
			specs = append(specs, Spec{Name: line, Status: Other})
			continue
		}
		var item struct {
			Name    string         `json:"name"`
			Status  string         `json:"status"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal([]byte(line), &item); err != nil {
			return nil, fmt.Errorf("sonobuoy results --mode detailed, line %d: %w", n, err)
		}
		s := Spec{Name: item.Name, Status: item.Status}
		for _, k := range []string{"failure", "skipped", "error"} {
			if v, ok := item.Details[k].(string); ok && v != "" {
				s.Message = v
				break
			}
		}
		specs = append(specs, s)
	}
	return specs, sc.Err()
}

// AddSkipReasons gives the skipped specs the reasons their JUnit report
// (the suite's junit_01.xml) holds: Sonobuoy's detailed results leave them out.
func AddSkipReasons(specs []Spec, junit []byte) error {
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit, &doc); err != nil {
		return fmt.Errorf("the suite's JUnit report: %w", err)
	}
	reasons := map[string]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Skipped != nil {
				reasons[c.Name] = c.Skipped.Message
			}
		}
	}
	for i, s := range specs {
		if r, ok := reasons[s.Name]; ok && s.Status == "skipped" && s.Message == "" {
			specs[i].Message = r
		}
	}
	return nil
}

// WriteSpecs lists the specs that were selected, one a line, by status then
// name, with the first line of their failure or skip reason, and counts.
func WriteSpecs(w io.Writer, specs []Spec) {
	var shown []Spec
	counts := map[string]int{}
	notSelected := 0
	for _, s := range specs {
		if !s.Selected() {
			notSelected++
			continue
		}
		shown = append(shown, s)
		counts[s.Status]++
	}
	rank := map[string]int{Other: 0, "failed": 1, "passed": 2, "skipped": 3}
	sort.SliceStable(shown, func(i, j int) bool {
		if rank[shown[i].Status] != rank[shown[j].Status] {
			return rank[shown[i].Status] < rank[shown[j].Status]
		}
		return shown[i].Name < shown[j].Name
	})
	for _, s := range shown {
		line := fmt.Sprintf("  %-7s %s", s.Status, s.Name)
		if s.Status != "passed" && s.Message != "" {
			line += "\n            " + text.FirstLine(s.Message)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  %d passed, %d failed, %d skipped (with their reasons); %d outside the selection\n",
		counts["passed"], counts["failed"], counts["skipped"], notSelected)
	if counts[Other] > 0 {
		fmt.Fprintf(w, "  %d result(s) that are not specs (above): Sonobuoy's record of a plugin that failed\n", counts[Other])
	}
}
