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
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

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
	// Build is the Windows build (the node's node.kubernetes.io/windows-build
	// label, 10.0.20348) of the node or machine a result on Windows was
	// obtained on; empty when the spec did not say. A release gate for a
	// build counts only the results obtained on that build.
	Build string `json:"build,omitempty"`
	// Nodes name the cluster's nodes the result was obtained on, Machines
	// the machines of the inventory (reached over WinRM). A record on a
	// Windows node names its nodes, which the gate holds against the run's
	// cluster facts: real Windows nodes of that build.
	Nodes    []string `json:"nodes,omitempty"`
	Machines []string `json:"machines,omitempty"`
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
	if err := r.Check(); err != nil {
		panic("evidence: " + err.Error())
	}
	data, err := json.Marshal(r)
	if err != nil {
		panic(err) // strings only
	}
	ginkgo.AddReportEntry(EntryName, string(data), ginkgo.ReportEntryVisibilityNever)
}

// buildPattern is a Windows build as node.kubernetes.io/windows-build has
// it (major.minor.build), optionally with the revision a machine reports.
var buildPattern = regexp.MustCompile(`^10\.0\.[0-9]{5}(\.[0-9]+)?$`)

// Check says what is wrong with a record: an unknown level, or a build
// that is not one, or a build on a result not obtained on Windows.
func (r Record) Check() error {
	switch {
	case !r.Level.Valid():
		return fmt.Errorf("unknown level %q", r.Level)
	case r.Build != "" && !r.Level.OnWindows():
		return fmt.Errorf("a Windows build (%s) on a result at %s, which was not obtained on Windows", r.Build, r.Level)
	case r.Build != "" && !buildPattern.MatchString(r.Build):
		return fmt.Errorf("%q is not a Windows build (10.0.NNNNN, as node.kubernetes.io/windows-build has it)", r.Build)
	}
	return nil
}

// OnWindowsBuild is the build a record's result was obtained on, when it
// was obtained on Windows: "" for a record of another level, Unrecorded for
// one on Windows that did not say.
func (r Record) OnWindowsBuild() string {
	switch {
	case !r.Level.OnWindows():
		return ""
	case r.Build == "":
		return Unrecorded
	}
	return BuildOf(r.Build)
}

// Unrecorded is the build of a result on Windows whose spec did not record it.
const Unrecorded = "unrecorded"

// BuildOf is a build without its revision: 10.0.20348.2700 is 10.0.20348.
func BuildOf(b string) string {
	if parts := strings.Split(b, "."); len(parts) > 3 {
		return strings.Join(parts[:3], ".")
	}
	return b
}

// Parse reads a record back from a report entry's value.
func Parse(value string) (Record, error) {
	var r Record
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields() // a record is read as written: no key it lacks
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("evidence entry %q: %w", value, err)
	}
	if dec.More() {
		return r, fmt.Errorf("evidence entry %q: more after the record", value)
	}
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("evidence entry %q: %w", value, err)
	}
	return r, nil
}

// Inconclusive ends the current spec without a verdict: it ran, but could
// not observe what it needed (why says what). Reports count it apart from
// passed, failed and skipped.
func Inconclusive(why string) {
	skips.Skip(skips.Inconclusive, why)
}

// Showing returns the records of a spec by which it shows claim c: those
// at a level that shows c. A spec with a partial record shows nothing.
func Showing(recs []Record, c claims.Claim) []Record {
	var out []Record
	for _, r := range recs {
		if r.Partial != "" {
			return nil
		}
		if c.Level.Shows(r.Level) {
			out = append(out, r)
		}
	}
	return out
}

// ShowsAny says whether a spec that passed with records recs, labelled
// with claims ids, showed any of them: else it only supported them (a
// Linux twin, simulated nodes, the API alone, a partial look), and no
// count of passes may take it for one.
func ShowsAny(recs []Record, ids []string) bool {
	for _, id := range ids {
		if c, ok := claims.Get(id); ok && len(Showing(recs, c)) > 0 {
			return true
		}
	}
	return false
}

// FromEntries reads the records among a spec's report entries (those it
// cannot read are left out: reports say what recorded nothing).
func FromEntries(entries types.ReportEntries) []Record {
	var out []Record
	for _, e := range entries {
		if e.Name == EntryName {
			if r, err := Parse(e.StringRepresentation()); err == nil {
				out = append(out, r)
			}
		}
	}
	return out
}
