package sonobuoy

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/winconform/winconform/internal/text"
)

// Spec is one spec as `sonobuoy results --mode detailed` reports it, with
// what the suite's JUnit adds (FromJUnit).
type Spec struct {
	Name    string
	Status  string // passed, failed, skipped
	Message string // the failure, or the reason for a skip
	// Claims are the claims the spec exercises, Shows those its result
	// shows (at their evidence level), Evidence the level it was obtained
	// at: the JUnit properties the harness adds (reports.WriteJUnit).
	Claims   []string
	Shows    []string
	Evidence string
}

// Selected says whether the spec was in the run's selection. Sonobuoy
// counts the specs a label filter left out as skipped; their JUnit entry
// carries no reason of its own ("skipped"), while a spec that ran and
// skipped carries its reason (FromJUnit).
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

// The JUnit test case properties the harness adds (reports.WriteJUnit).
const (
	propClaim    = "claim"
	propEvidence = "evidence"
	propShows    = "shows"
)

// FromJUnit gives the specs what their JUnit report (the suite's
// junit_01.xml) holds and Sonobuoy's detailed results leave out: the
// skipped specs' reasons, and every spec's claims, the claims its result
// shows, and its evidence level.
func FromJUnit(specs []Spec, junit []byte) error {
	type testCase struct {
		Name    string `xml:"name,attr"`
		Skipped *struct {
			Message string `xml:"message,attr"`
		} `xml:"skipped"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
	}
	var doc struct {
		Suites []struct {
			Cases []testCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit, &doc); err != nil {
		return fmt.Errorf("the suite's JUnit report: %w", err)
	}
	cases := map[string]testCase{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases[c.Name] = c
		}
	}
	for i, s := range specs {
		c, ok := cases[s.Name]
		if !ok {
			continue
		}
		if c.Skipped != nil && s.Status == "skipped" && s.Message == "" {
			specs[i].Message = c.Skipped.Message
		}
		for _, p := range c.Properties {
			switch p.Name {
			case propClaim:
				specs[i].Claims = append(specs[i].Claims, p.Value)
			case propEvidence:
				specs[i].Evidence = p.Value
			case propShows:
				for _, id := range strings.Split(p.Value, ",") {
					if id = strings.TrimSpace(id); id != "" {
						specs[i].Shows = append(specs[i].Shows, id)
					}
				}
			}
		}
	}
	return nil
}

// supports says what a passed spec that shows none of its claims did: they
// are only supported (a Linux twin, simulated nodes, the API alone, a
// partial look), or it recorded no evidence.
func (s Spec) supports() string {
	if len(s.Claims) == 0 && s.Evidence == "" {
		return "shows nothing: the JUnit report names no claim or evidence for it"
	}
	var only []string
	for _, id := range s.Claims {
		if !slices.Contains(s.Shows, id) {
			only = append(only, id)
		}
	}
	what := "its claims"
	if len(only) > 0 {
		what = strings.Join(only, ", ")
	}
	ev := s.Evidence
	if ev == "" {
		ev = "not in the JUnit report"
	}
	return fmt.Sprintf("shows nothing: %s only supported, evidence %s", what, ev)
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
	showing := 0
	for _, s := range shown {
		line := fmt.Sprintf("  %-7s %s", s.Status, s.Name)
		switch {
		case s.Status == "passed" && len(s.Shows) > 0:
			showing++
			line += " (shows " + strings.Join(s.Shows, ", ") + ")"
		case s.Status == "passed":
			line += " (" + s.supports() + ")"
		case s.Message != "":
			line += "\n            " + text.FirstLine(s.Message)
		}
		fmt.Fprintln(w, line)
	}
	// A passing spec shows its claims only at their evidence level: count
	// the ones that did apart from those that only support them.
	fmt.Fprintf(w, "  %d passed: %d showing its claims, %d only supporting them (below their evidence level); %d failed, %d skipped (with their reasons); %d outside the selection\n",
		counts["passed"], showing, counts["passed"]-showing, counts["failed"], counts["skipped"], notSelected)
	if counts[Other] > 0 {
		fmt.Fprintf(w, "  %d result(s) that are not specs (above): Sonobuoy's record of a plugin that failed\n", counts[Other])
	}
}
