package sonobuoy

import (
	"bufio"
	"encoding/json"
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
// carries no reason of its own.
func (s Spec) Selected() bool {
	return s.Status != "skipped" || s.Message != "" && s.Message != "skipped"
}

// ParseDetailed reads the JSON lines of `sonobuoy results --mode detailed`.
func ParseDetailed(out string) ([]Spec, error) {
	var specs []Spec
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
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
	rank := map[string]int{"failed": 0, "passed": 1, "skipped": 2}
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
}
