// Package ledger records what the harness finds of the documented
// limitations of Windows nodes: for each, the document and the era it was
// written for, the behaviour expected of the running server version, the
// behaviour observed, and the verdict. Specs record entries; the suite's
// report writes the ledger (reports.Ledger) as Markdown and JSON.
//
// Entries travel as Ginkgo report entries, so they reach the report from
// every parallel process and survive an interrupted run.
package ledger

import (
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"
)

// EntryName is the Ginkgo report entry that carries a ledger entry.
const EntryName = "winconform.ledger"

// Behaviour is what a limitation looks like on a cluster.
type Behaviour string

// Behaviours.
const (
	// Limited: the limitation holds (the thing cannot be done).
	Limited Behaviour = "limited"
	// Works: the thing can be done.
	Works Behaviour = "works"
)

// Verdict compares what was observed with the documents and the server version.
type Verdict string

// Verdicts.
const (
	// Holds: observed as the documents say, and as expected of this version.
	Holds Verdict = "holds"
	// Lifted: the documents' limitation no longer holds (drift from the
	// documents); Expected says whether this server version was expected to lift it.
	Lifted Verdict = "lifted"
	// Regressed: expected to work on this server version, observed limited.
	Regressed Verdict = "regressed"
)

// Entry is one limitation, checked.
type Entry struct {
	Claim      string `json:"claim"`
	Limitation string `json:"limitation"` // what the documents say, in a sentence
	Document   string `json:"document"`   // where they say it
	Era        string `json:"era"`        // the release the document was written for
	Server     string `json:"server"`     // the server version checked
	// Expected is the behaviour expected of this server version, and Why.
	Expected Behaviour `json:"expected"`
	Why      string    `json:"why,omitempty"`
	Observed Behaviour `json:"observed"`
	Evidence string    `json:"evidence"` // what the spec saw
	Verdict  Verdict   `json:"verdict"`
	// Unexpected is set when the observation differs from the expectation
	// for this version (a regression, or drift the version did not explain).
	Unexpected bool `json:"unexpected"`
	// Simulated is set when the observation was made on a simulated node.
	Simulated bool `json:"simulated,omitempty"`
}

// Decide fills Verdict and Unexpected from Expected and Observed: the
// documents always describe the limitation (Limited).
func (e *Entry) Decide() {
	switch {
	case e.Observed == Limited:
		e.Verdict = Holds
		if e.Expected == Works {
			e.Verdict = Regressed
		}
	default:
		e.Verdict = Lifted
	}
	e.Unexpected = e.Observed != e.Expected
}

// Record decides e and adds it to the current spec's report.
func Record(e Entry) Entry {
	e.Decide()
	data, err := json.Marshal(e)
	if err != nil {
		panic(err) // Entry holds only strings and booleans
	}
	ginkgo.AddReportEntry(EntryName, string(data), ginkgo.ReportEntryVisibilityNever)
	ginkgo.GinkgoWriter.Printf("ledger: %s %s: expected %s, observed %s (%s)\n", e.Claim, e.Verdict, e.Expected, e.Observed, e.Evidence)
	return e
}

// Parse reads an entry back from a report entry's value.
func Parse(value string) (Entry, error) {
	var e Entry
	if err := json.Unmarshal([]byte(value), &e); err != nil {
		return e, fmt.Errorf("ledger entry %q: %w", value, err)
	}
	return e, nil
}
