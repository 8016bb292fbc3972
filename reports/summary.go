// Package reports turns a Ginkgo run into what the harness's users read:
// per claim of the catalogue, what the run showed; skips counted by their
// reason; the spec list with labels; and checks that every spec is labelled.
// Ginkgo's own reporters write the JUnit and JSON; this package adds to them.
package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/internal/text"
)

// Outcome of a claim in a run.
const (
	Passed     = "passed"
	Failed     = "failed"
	Skipped    = "skipped"
	NotRun     = "not run"     // has specs, none selected in this run
	NotCovered = "not covered" // no spec carries the claim
)

// Spec is one spec of the run, as the reports use it.
type Spec struct {
	Name       string   `json:"name"`
	Labels     []string `json:"labels"`
	State      string   `json:"state"`
	Failed     bool     `json:"failed"`               // failed, panicked, timed out, interrupted or aborted
	SkipReason string   `json:"skipReason,omitempty"` // a skips.Reason key
	// Simulated says the spec ran on simulated nodes (kwok), and why that sufficed.
	Simulated string  `json:"simulated,omitempty"`
	Message   string  `json:"message,omitempty"`
	Seconds   float64 `json:"seconds"`
}

// Claim is one claim's result.
type Claim struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Outcome string   `json:"outcome"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
	Reasons []string `json:"skipReasons,omitempty"`
	// Simulated counts the passed or failed specs that ran on simulated nodes.
	Simulated int `json:"simulated,omitempty"`
}

// SimulatedEntry is the report entry a spec adds when it ran on simulated nodes.
const SimulatedEntry = "winconform.simulated"

// Summary is the harness's view of a run.
type Summary struct {
	Suite       string         `json:"suite"`
	Succeeded   bool           `json:"succeeded"`
	Interrupted bool           `json:"interrupted,omitempty"` // cut short by an interrupt or the suite timeout: a partial report
	Specs       []Spec         `json:"specs"`
	Claims      []Claim        `json:"claims"`
	SkipReasons map[string]int `json:"skipReasons"`
}

// Summarize reads a Ginkgo report. Specs that the run did not select are
// left out of Specs but still count a claim as having specs (NotRun).
func Summarize(r types.Report) Summary {
	s := Summary{Suite: r.SuiteDescription, Succeeded: r.SuiteSucceeded, SkipReasons: map[string]int{}}
	for _, reason := range r.SpecialSuiteFailureReasons {
		if r := strings.ToLower(reason); strings.Contains(r, "interrupt") || strings.Contains(r, "timeout") {
			s.Interrupted = true
		}
	}
	byClaim := map[string]*Claim{}
	for _, c := range claims.All() {
		byClaim[c.ID] = &Claim{ID: c.ID, Kind: string(c.Kind), Text: c.Text, Outcome: NotCovered}
	}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		spec := Spec{Name: sr.FullText(), Labels: sr.Labels(), State: sr.State.String(), Seconds: sr.RunTime.Seconds(),
			Failed: sr.State.Is(types.SpecStateFailureStates)}
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case skips.EntryName:
				spec.SkipReason = e.StringRepresentation()
			case SimulatedEntry:
				spec.Simulated = e.StringRepresentation()
			}
		}
		if sr.State.Is(types.SpecStateFailureStates) || sr.State == types.SpecStateSkipped {
			spec.Message = sr.Failure.Message
		}
		selected := sr.State != types.SpecStateSkipped || sr.Failure.Message != "" || spec.SkipReason != ""
		for _, id := range labels.Claims(spec.Labels) {
			c := byClaim[id]
			if c == nil {
				continue
			}
			if c.Outcome == NotCovered {
				c.Outcome = NotRun
			}
			if !selected {
				continue
			}
			if spec.Simulated != "" && sr.State != types.SpecStateSkipped {
				c.Simulated++
			}
			switch {
			case sr.State == types.SpecStatePassed:
				c.Passed++
			case sr.State.Is(types.SpecStateFailureStates):
				c.Failed++
			case sr.State == types.SpecStateSkipped:
				c.Skipped++
				if spec.SkipReason != "" && !slices.Contains(c.Reasons, spec.SkipReason) {
					c.Reasons = append(c.Reasons, spec.SkipReason)
				}
			}
		}
		if !selected {
			continue
		}
		if sr.State == types.SpecStateSkipped {
			key := spec.SkipReason
			if key == "" {
				key = "unrecorded"
			}
			s.SkipReasons[key]++
		}
		s.Specs = append(s.Specs, spec)
	}
	for _, c := range claims.All() {
		bc := byClaim[c.ID]
		switch {
		case bc.Failed > 0:
			bc.Outcome = Failed
		case bc.Passed > 0:
			bc.Outcome = Passed
		case bc.Skipped > 0:
			bc.Outcome = Skipped
		}
		s.Claims = append(s.Claims, *bc)
	}
	return s
}

// Counts returns how many claims have each outcome.
func (s Summary) Counts() map[string]int {
	out := map[string]int{}
	for _, c := range s.Claims {
		out[c.Outcome]++
	}
	return out
}

// Markdown renders the summary for people.
func (s Summary) Markdown() string {
	var b strings.Builder
	status := "succeeded"
	if !s.Succeeded {
		status = "failed"
	}
	if s.Interrupted {
		status = "was interrupted (partial report)"
	}
	fmt.Fprintf(&b, "# winconform run: %s\n\n", status)
	counts := s.Counts()
	fmt.Fprintf(&b, "Claims: %d passed, %d failed, %d skipped, %d not run, %d not covered (of %d).\n\n",
		counts[Passed], counts[Failed], counts[Skipped], counts[NotRun], counts[NotCovered], len(s.Claims))
	if len(s.SkipReasons) > 0 {
		b.WriteString("## Skipped specs by reason\n\n| reason | specs |\n|---|---|\n")
		keys := make([]string, 0, len(s.SkipReasons))
		for k := range s.SkipReasons {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | %d |\n", k, s.SkipReasons[k])
		}
		b.WriteString("\n")
	}
	b.WriteString("## Claims\n\n| claim | kind | outcome | passed | failed | skipped | skip reasons |\n|---|---|---|---|---|---|---|\n")
	for _, c := range s.Claims {
		outcome := c.Outcome
		if c.Simulated > 0 {
			outcome += fmt.Sprintf(" (%d on simulated nodes)", c.Simulated)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %s |\n", c.ID, c.Kind, outcome, c.Passed, c.Failed, c.Skipped, strings.Join(c.Reasons, ", "))
	}
	var failed []Spec
	for _, sp := range s.Specs {
		if sp.Failed {
			failed = append(failed, sp)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failed specs\n\n")
		for _, sp := range failed {
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", sp.Name, sp.State, text.FirstLine(sp.Message))
		}
	}
	return b.String()
}

// Write puts summary.json and summary.md into dir.
func (s Summary) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(s.Markdown()), 0o644)
}
