package gate

import (
	"fmt"
	"strings"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/reports/rundir"
)

// CheckRecord refuses a run the gate cannot decide on: one whose record
// breaks an invariant of its contract (rundir.Invariants, each violation
// named), or that was recorded under another claim catalogue than this
// winconform's. rundir.Load already refused a directory that is no one
// run's readable record.
func CheckRecord(r *rundir.Run) error {
	if vs := r.Summary.Violations; len(vs) > 0 {
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = "invariant " + v.String()
		}
		return fmt.Errorf("%s: the record of run %s breaks its contract (docs/record.md), so no verdict can rest on it (%d violation(s)):\n  %s",
			r.Dir, orNone([]string{r.Record.RunID}), len(vs), strings.Join(lines, "\n  "))
	}
	if r.Record.Catalogue != claims.Version() {
		return fmt.Errorf("%s: run %s was recorded under claim catalogue %s by winconform %s; this winconform (%s) reads catalogue %s, with other claims or levels: gate the run with the winconform that recorded it, or rerun the suites with this one",
			r.Dir, r.Record.RunID, r.Record.Catalogue, r.Record.Harness, r.Summary.Harness, claims.Version())
	}
	return nil
}
