package reports

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A selection that matches no spec names the labels no spec has, with the
// nearest one some spec has; labels inside /regular expressions/ are not
// words of the filter.
func TestCheckSelected(t *testing.T) {
	r := listReport()
	r.PreRunStats = types.PreRunStats{TotalSpecs: 4, SpecsThatWillRun: 1}
	if err := CheckSelected(r, []string{"--ginkgo.label-filter=os:linx"}); err != nil {
		t.Errorf("a selection of one spec: %v", err)
	}
	r.PreRunStats.SpecsThatWillRun = 0
	args := []string{"--ginkgo.label-filter=os:linx && !/suite:nope/ || os:linux", "--ginkgo.focus=x"}
	err := CheckSelected(r, args)
	want := `the selection --ginkgo.label-filter=os:linx && !/suite:nope/ || os:linux --ginkgo.focus=x matches none of the 4 specs: no spec has the label os:linx (did you mean "os:linux"?) ` +
		"(`make list` lists every spec with its labels)"
	if err == nil || err.Error() != want {
		t.Errorf("CheckSelected =\n %v\nwant\n %s", err, want)
	}
	if err := CheckSelected(r, []string{"--ginkgo.focus=x"}); err == nil || strings.Contains(err.Error(), "no spec has") {
		t.Errorf("without a label filter: %v", err)
	}
}

func TestLabelHint(t *testing.T) {
	specs := Specs(listReport())
	if got := LabelHint([]string{"--ginkgo.label-filter=os:linux && suite:networking"}, specs); got != "" {
		t.Errorf("labels some spec has: %q", got)
	}
	got := LabelHint([]string{"--ginkgo.label-filter=zzzz-none || zzzz-none", "--ginkgo.label-filter=os:linx"}, specs)
	if got != `no spec has the label zzzz-none; no spec has the label os:linx (did you mean "os:linux"?)` {
		t.Errorf("LabelHint = %q", got)
	}
}
