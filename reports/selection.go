package reports

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/config"
)

// CheckSelected says whether the suite binary's dry run r of the selection
// args selected any spec: nil when it did, else an error naming the
// selection and the number of specs, with the labels of args' label
// filters that no spec has (LabelHint) and where every spec is listed.
func CheckSelected(r types.Report, args []string) error {
	if r.PreRunStats.SpecsThatWillRun > 0 {
		return nil
	}
	msg := fmt.Sprintf("the selection %s matches none of the %d specs", strings.Join(args, " "), r.PreRunStats.TotalSpecs)
	if hint := LabelHint(args, Specs(r)); hint != "" {
		msg += ": " + hint
	}
	return errors.New(msg + " (`make list` lists every spec with its labels)")
}

// labelRe finds the labels a Ginkgo label filter names: its words, outside
// /regular expressions/.
var (
	labelRe  = regexp.MustCompile(`[^&|!,()\s/]+`)
	regexpRe = regexp.MustCompile(`/[^/]*/`)
)

// LabelHint says which labels of the label filters in args
// (--ginkgo.label-filter=...) no spec of specs has, each with the nearest
// one that some spec has; "" when every label is some spec's.
func LabelHint(args []string, specs []Listed) string {
	var known []string
	for _, s := range specs {
		known = append(known, s.Labels...)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	var hints []string
	for _, a := range args {
		filter, ok := strings.CutPrefix(a, "--ginkgo.label-filter=")
		if !ok {
			continue
		}
		for _, l := range labelRe.FindAllString(regexpRe.ReplaceAllString(filter, " "), -1) {
			if slices.Contains(known, l) {
				continue
			}
			h := "no spec has the label " + l
			if dym := config.DidYouMean(l, known); dym != "" {
				h += " (" + strings.TrimSpace(dym) + ")"
			}
			hints = append(hints, h)
		}
	}
	return strings.Join(slices.Compact(hints), "; ")
}
