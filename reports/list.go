package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/labels"
)

// Listed is a spec as `make list` shows it.
type Listed struct {
	Name   string
	Labels []string
	// Selected says that the run's selection takes it: a dry run reports
	// the specs its filters leave out as skipped.
	Selected bool
}

// Specs lists the report's specs (It nodes) with their labels, by name.
func Specs(r types.Report) []Listed {
	var out []Listed
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		l := append([]string(nil), sr.Labels()...)
		sort.Strings(l)
		out = append(out, Listed{Name: sr.FullText(), Labels: l, Selected: sr.State != types.SpecStateSkipped})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LabelProblems lists each spec whose labels break the rules of package labels.
func LabelProblems(specs []Listed) []string {
	var out []string
	for _, s := range specs {
		for _, p := range labels.Check(s.Labels) {
			out = append(out, fmt.Sprintf("%s: %s", s.Name, p))
		}
	}
	return out
}

// Uncovered returns the catalogue's claims that no spec carries.
func Uncovered(specs []Listed) []string {
	covered := map[string]bool{}
	for _, s := range specs {
		for _, id := range labels.Claims(s.Labels) {
			covered[id] = true
		}
	}
	var out []string
	for _, c := range claims.All() {
		if !covered[c.ID] {
			out = append(out, c.ID)
		}
	}
	return out
}

// WriteList prints the selected specs with their labels, then how many
// were selected and which claims no spec covers.
func WriteList(w io.Writer, specs []Listed) {
	selected := 0
	for _, s := range specs {
		if s.Selected {
			selected++
			fmt.Fprintf(w, "%s\n    [%s]\n", s.Name, strings.Join(s.Labels, ", "))
		}
	}
	unc := Uncovered(specs)
	fmt.Fprintf(w, "\n%d of %d specs selected; %d of %d claims covered", selected, len(specs), len(claims.All())-len(unc), len(claims.All()))
	if len(unc) > 0 {
		fmt.Fprintf(w, "; not yet covered: %s", strings.Join(unc, " "))
	}
	fmt.Fprintln(w)
}
