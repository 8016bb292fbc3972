// Package evidence records, for the running spec, what its result was
// obtained on: real Windows nodes or machines, real Linux nodes (a Linux
// twin of a Windows claim included), the real control plane with simulated
// nodes, or the API server alone (the levels of framework/claims). Reports
// decide from these records whether a passing spec shows its claims or only
// supports them. A spec that could see only part of what its claim needs
// records that too (Partial), and so does one that could not observe what
// it needed (Inconclusive).
//
// Records travel as Ginkgo report entries, so they reach the report from
// every parallel process and survive an interrupted run.
package evidence

import (
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/skips"
)

// EntryName is the Ginkgo report entry that carries a Record.
const EntryName = "winconform.evidence"

// Record is one piece of evidence a spec obtained.
type Record struct {
	Level claims.Level `json:"level"`
	// Detail says on what: node names, "simulated by kwok: <why that is
	// enough>", "dry-run create", ...
	Detail string `json:"detail,omitempty"`
	// Partial, when set, says which part of the claim the spec could not
	// see: its result then shows nothing, whatever the level.
	Partial string `json:"partial,omitempty"`
}

// Add records that the current spec's result comes from level, on what detail says.
func Add(level claims.Level, detail string) {
	add(Record{Level: level, Detail: detail})
}

// Addf is Add with a format.
func Addf(level claims.Level, format string, args ...any) {
	Add(level, fmt.Sprintf(format, args...))
}

// Partial records that the current spec saw only part of what its claim
// needs: why names what is missing.
func Partial(level claims.Level, why string) {
	add(Record{Level: level, Partial: why})
}

func add(r Record) {
	if !r.Level.Valid() {
		panic(fmt.Sprintf("evidence: unknown level %q", r.Level))
	}
	data, err := json.Marshal(r)
	if err != nil {
		panic(err) // strings only
	}
	ginkgo.AddReportEntry(EntryName, string(data), ginkgo.ReportEntryVisibilityNever)
}

// Parse reads a record back from a report entry's value.
func Parse(value string) (Record, error) {
	var r Record
	if err := json.Unmarshal([]byte(value), &r); err != nil {
		return r, fmt.Errorf("evidence entry %q: %w", value, err)
	}
	if !r.Level.Valid() {
		return r, fmt.Errorf("evidence entry %q: unknown level %q", value, r.Level)
	}
	return r, nil
}

// Inconclusive ends the current spec without a verdict: it ran, but could
// not observe what it needed (why says what). Reports count it apart from
// passed, failed and skipped.
func Inconclusive(why string) {
	skips.Skip(skips.Inconclusive, why)
}
