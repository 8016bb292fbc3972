package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/internal/version"
)

// LedgerEntry is a ledger entry with the spec that recorded it.
type LedgerEntry struct {
	ledger.Entry
	Spec string `json:"spec"`
}

// Ledger collects the limitation ledger from a run's report entries.
func Ledger(r types.Report) ([]LedgerEntry, error) {
	var out []LedgerEntry
	for _, sr := range r.SpecReports {
		recorded := Spec{Evidence: evidence.FromEntries(sr.ReportEntries)}
		for _, e := range sr.ReportEntries {
			if e.Name != ledger.EntryName {
				continue
			}
			le, err := ledger.Parse(e.StringRepresentation())
			if err != nil {
				return nil, err
			}
			if below := belowLevel(recorded, le.Claim); below != "" {
				le.Below = below
				le.Decide()
			}
			out = append(out, LedgerEntry{Entry: le, Spec: sr.FullText()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return claims.Less(out[i].Claim, out[j].Claim) })
	return out, nil
}

// belowLevel says what a spec's evidence was, when it does not show claim
// id (a Linux twin, simulated nodes, a partial look): a verdict on the
// limitation is decided from evidence at the claim's level only. A spec
// that recorded no evidence is taken at its word.
func belowLevel(sp Spec, id string) string {
	c, ok := claims.Get(id)
	if !ok || len(sp.Evidence) == 0 {
		return ""
	}
	level, shows := sp.Level(c)
	if shows {
		return ""
	}
	for _, r := range sp.Evidence {
		if r.Partial != "" {
			return "partial: " + r.Partial
		}
	}
	return c.Level.Below(level)
}

// LedgerMarkdown renders the ledger.
func LedgerMarkdown(entries []LedgerEntry) string {
	var b strings.Builder
	b.WriteString("# Limitation ledger\n\n")
	b.WriteString("Each documented limitation of Windows nodes, checked: what the documents say and for which era, what this server version is expected to do, what was observed, and the verdict (`holds`, `lifted`: the documents no longer describe the cluster, `regressed`, `inconclusive`: nothing was observed that decides, such as a simulated node or a cluster without what the check needs). *Unexpected* marks an observation this server version does not explain.\n\n")
	if len(entries) == 0 {
		b.WriteString("No limitation was checked in this run.\n")
		return b.String()
	}
	b.WriteString("| claim | limitation (document, era) | server | expected | observed | verdict | evidence |\n|---|---|---|---|---|---|---|\n")
	for _, e := range entries {
		verdict := string(e.Verdict)
		if e.Unexpected {
			verdict = "**" + verdict + " (unexpected)**"
		}
		seen := e.Evidence
		if e.Simulated {
			seen += " (on a simulated node)"
		}
		if e.Below != "" {
			seen += " (below the claim's level: " + e.Below + ")"
		}
		if e.Source != "" {
			seen += " [" + e.Source + "]"
		}
		fmt.Fprintf(&b, "| %s | %s (%s, %s) | %s | %s%s | %s | %s | %s |\n", e.Claim, e.Limitation, e.Document, e.Era, e.Server,
			e.Expected, why(e.Why), e.Observed, verdict, strings.ReplaceAll(seen, "|", "\\|"))
	}
	return b.String()
}

func why(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// LedgerFile is limitations.json: the run's stamp (its ID and the harness
// that wrote it) and the entries.
type LedgerFile struct {
	version.Stamp
	Entries []LedgerEntry `json:"entries"`
}

// WriteLedger puts limitations.md and limitations.json into dir, stamped
// with the run's ID and the harness.
func WriteLedger(dir string, stamp version.Stamp, entries []LedgerEntry) error {
	if entries == nil {
		entries = []LedgerEntry{}
	}
	return WriteFiles(dir, "limitations.json", "limitations.md", LedgerFile{Stamp: stamp, Entries: entries}, LedgerMarkdown(entries))
}
