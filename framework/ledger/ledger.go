// Package ledger records what the harness finds of the documented
// limitations of Windows nodes: for each, the document and the era it was
// written for, the behaviour expected of the running server version, the
// behaviour observed, and the verdict. Expectations come from the claims
// catalogue (framework/claims: each limitation's era and the server versions
// it is expected to hold for), for the suites' specs and the network matrix
// alike (Expect). Specs record entries; the suite's report writes the ledger
// (reports.Ledger) as Markdown and JSON.
//
// A verdict comes from an observation, never from a constant or a timeout:
// an entry with nothing observed is inconclusive.
//
// Entries travel as Ginkgo report entries, so they reach the report from
// every parallel process and survive an interrupted run.
package ledger

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/winconform/winconform/framework/claims"
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
	// Unobserved: the spec could not see which (no observation).
	Unobserved Behaviour = "unobserved"
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
	// Inconclusive: nothing was observed that decides (a simulated node,
	// a cluster without what the check needs, no positive signature).
	Inconclusive Verdict = "inconclusive"
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
	Evidence string    `json:"evidence"` // what the spec saw, or why it saw nothing
	Verdict  Verdict   `json:"verdict"`
	// Unexpected is set when the observation differs from the expectation
	// for this version (a regression, or drift the version did not explain).
	Unexpected bool `json:"unexpected"`
	// Simulated is set when the observation was made on a simulated node.
	Simulated bool `json:"simulated,omitempty"`
	// Below says what the observation was made on when that is below the
	// claim's evidence level ("linux twin", "partial: ..."): it says nothing
	// of the limitation, so the entry is inconclusive.
	Below string `json:"below,omitempty"`
	// Source is where the entry comes from when not a spec of its own
	// (the network matrix's cell, say).
	Source string `json:"source,omitempty"`
}

// Decide fills Verdict and Unexpected from Expected and Observed: the
// documents always describe the limitation (Limited). Nothing observed, or
// an observation on a simulated node or below the claim's level (a Linux
// twin), is inconclusive. A lift is Unexpected when this server version was
// expected to keep the limitation: that is drift; an expected lift is not.
func (e *Entry) Decide() {
	switch {
	case e.Observed != Limited && e.Observed != Works, e.Simulated, e.Below != "":
		e.Verdict, e.Unexpected = Inconclusive, false
		return
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

// Cluster is what a limitation's expectation depends on.
type Cluster struct {
	Server string // the server version, v1.37.2
	CNI    string // flannel/vxlan, ...
}

// Expect is the behaviour the catalogue expects of claim id's limitation on
// cluster c, and why: Limited within the versions (and CNI) it is
// documented to hold for, Works outside them. An unknown server version
// keeps the documented limitation.
func Expect(id string, c Cluster) (Behaviour, string) {
	cl, ok := claims.Get(id)
	if !ok || cl.Limitation == nil {
		return Limited, "no documented limitation for " + id + " in the catalogue: the documents are kept"
	}
	return ExpectOf(*cl.Limitation, c)
}

// ExpectOf is Expect for limitation l. The catalogue's limitations were
// checked through claims.CheckedThrough: on a server of a newer line the
// expectation is carried over, and the reason says it is unchecked there.
func ExpectOf(l claims.Limitation, c Cluster) (Behaviour, string) {
	b, why := expectOf(l, c)
	if v, err := version.ParseGeneric(c.Server); err == nil {
		read := version.MustParseGeneric(claims.CheckedThrough)
		if v.Major() > read.Major() || v.Major() == read.Major() && v.Minor() > read.Minor() {
			why += fmt.Sprintf(" (the catalogue's limitations were checked through %s; server %s is of a newer line: the expectation is carried over, unchecked)", claims.CheckedThrough, c.Server)
		}
	}
	return b, why
}

func expectOf(l claims.Limitation, c Cluster) (Behaviour, string) {
	if l.Holds.Never {
		return Works, l.Why
	}
	if l.CNI != "" && c.CNI != l.CNI {
		return Works, fmt.Sprintf("the documents tie it to %s; this cluster runs %s", l.CNI, c.CNI)
	}
	if l.Holds.Since == "" && l.Holds.Until == "" {
		return Limited, l.Why
	}
	v, err := version.ParseGeneric(c.Server)
	if err != nil {
		return Limited, fmt.Sprintf("server version %q unknown: the documented limitation is kept", c.Server)
	}
	if l.Holds.Since != "" && v.LessThan(version.MustParseGeneric(l.Holds.Since)) {
		return Works, fmt.Sprintf("server %s is older than %s, from which the limitation holds", c.Server, l.Holds.Since)
	}
	if l.Holds.Until != "" && !v.LessThan(version.MustParseGeneric(l.Holds.Until)) {
		return Works, fmt.Sprintf("%s; expected to work for server >= %s", l.Why, l.Holds.Until)
	}
	return Limited, fmt.Sprintf("server %s is within the versions the limitation holds for (%s)", c.Server, l.Holds.Describe())
}

// New starts the entry of claim id's limitation for cluster c: the
// statement, documents and era from the catalogue, the expectation from
// Expect. The spec adds what it observed.
func New(id string, c Cluster) Entry {
	cl := claims.MustGet(id)
	e := Entry{Claim: id, Server: c.Server, Document: cl.Cite()}
	if l := cl.Limitation; l != nil {
		e.Limitation, e.Era = l.Statement, l.Era
	}
	e.Expected, e.Why = Expect(id, c)
	return e
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
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields() // an entry is read as written: no key it lacks
	if err := dec.Decode(&e); err != nil {
		return e, fmt.Errorf("ledger entry %q: %w", value, err)
	}
	if dec.More() {
		return e, fmt.Errorf("ledger entry %q: more after the entry", value)
	}
	return e, nil
}
