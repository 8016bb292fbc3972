package netmatrix

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/internal/version"
)

// Symbols of the truth table, one character a cell.
const (
	SymReachable  = '.'
	SymBlocked    = 'X'
	SymWrong      = '?'
	SymFlaky      = '~'
	SymProbeError = '!'
	SymSkipped    = '-'
)

// legend explains the symbols, for the table's header and the Markdown.
var legend = fmt.Sprintf("%c reachable, %c blocked, %c wrong answer or unclassified error, %c flaky (the two probes disagreed), %c probe error, %c not probed; blank: not applicable",
	SymReachable, SymBlocked, SymWrong, SymFlaky, SymProbeError, SymSkipped)

// Symbol is a cell's character in the truth table.
func (c *Cell) Symbol() rune {
	if c == nil {
		return ' '
	}
	if c.Verdict == Flaky {
		return SymFlaky
	}
	switch c.Observed {
	case Reachable:
		return SymReachable
	case Blocked:
		return SymBlocked
	case WrongAnswer, Unclassified:
		return SymWrong
	case ProbeError:
		return SymProbeError
	}
	return SymSkipped
}

const nameWidth = 44

func (m *Matrix) header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "network matrix: %d sources x %d targets  (%s)\n", len(m.Sources), len(m.Targets), legend)
	for i, t := range m.Targets {
		fmt.Fprintf(&b, "  %3d %s\n", i+1, t.ID())
	}
	for _, digit := range []int{100, 10, 1} {
		if digit > len(m.Targets) && digit != 1 {
			continue
		}
		fmt.Fprintf(&b, "%-*s ", nameWidth, "")
		for i := range m.Targets {
			n := i + 1
			if n < digit && digit > 1 {
				b.WriteByte(' ')
				continue
			}
			fmt.Fprintf(&b, "%d", n/digit%10)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sourceLabel(p Peer) string {
	s := fmt.Sprintf("%s (%s", p.Name, strings.TrimSpace(p.OS+" "+string(p.Kind)))
	if p.Node != "" && p.Kind != Node {
		s += " @" + p.Node
	}
	s += ")"
	if len(s) > nameWidth {
		s = s[:nameWidth]
	}
	return s
}

// rowLine is the truth table's line for s; m.mu must be held.
func (m *Matrix) rowLine(s Source) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s ", nameWidth, sourceLabel(s.Peer()))
	for _, t := range m.Targets {
		b.WriteRune(m.cells[s.Peer().Name][t.ID()].Symbol())
	}
	b.WriteByte('\n')
	return b.String()
}

func (m *Matrix) footer() string {
	var b strings.Builder
	counts := map[Verdict]int{}
	var notable []*Cell
	for _, c := range m.Cells() {
		counts[c.Verdict]++
		if c.Verdict != OK && c.Verdict != Skipped {
			notable = append(notable, c)
		}
	}
	fmt.Fprintf(&b, "verdicts: %d ok, %d regression, %d wrong, %d flaky, %d drift, %d probe error, %d skipped",
		counts[OK], counts[Regression], counts[Wrong], counts[Flaky], counts[Drift], counts[Broken], counts[Skipped])
	if n := counts[Unobserved]; n > 0 {
		fmt.Fprintf(&b, ", %d unobserved (limitation cells of a source that reached nothing)", n)
	}
	b.WriteByte('\n')
	for _, c := range notable {
		fmt.Fprintf(&b, "  %s\n", c.Describe())
	}
	return b.String()
}

// Describe says what happened in a cell, for logs and failure messages.
func (c *Cell) Describe() string {
	s := fmt.Sprintf("%s: %s -> %s: expected %s, %s", c.Verdict, c.Source, c.Target, c.Expect.String(), c.Observed)
	if !c.Result.OK && c.Result.ErrorClass != "" {
		s += fmt.Sprintf(" (%s: %s)", c.Result.ErrorClass, c.Result.Error)
	}
	if c.Why != "" && c.Why != c.Result.Error {
		s += " (" + c.Why + ")"
	}
	if c.Reprobed && c.Verdict != Flaky && !strings.Contains(c.Why, "on the second") {
		s += ", also on the second probe"
	}
	return s + "; reproduce: " + c.Repro
}

// String is "reachable" or "unreachable: <reason> [<document>]".
func (e Expectation) String() string {
	if e.Reachable {
		return "reachable"
	}
	return fmt.Sprintf("unreachable (%s; %s)", e.Reason, e.Doc)
}

// Markdown renders the truth table and the cells that need a look.
func (m *Matrix) Markdown() string {
	var b strings.Builder
	b.WriteString("# Network matrix\n\n")
	fmt.Fprintf(&b, "Cluster: Kubernetes %s, CNI %s. Symbols: %s.\n\n", m.Profile.ServerVersion, m.Profile.CNI, legend)
	b.WriteString("| source |")
	for i := range m.Targets {
		fmt.Fprintf(&b, " %d |", i+1)
	}
	b.WriteString("\n|---|")
	for range m.Targets {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	m.mu.Lock()
	for _, s := range m.Sources {
		fmt.Fprintf(&b, "| %s |", sourceLabel(s.Peer()))
		for _, t := range m.Targets {
			fmt.Fprintf(&b, " `%c` |", m.cells[s.Peer().Name][t.ID()].Symbol())
		}
		b.WriteString("\n")
	}
	m.mu.Unlock()
	b.WriteString("\n| # | target | URL |\n|---|---|---|\n")
	for i, t := range m.Targets {
		fmt.Fprintf(&b, "| %d | %s | `%s` |\n", i+1, t.ID(), t.URL)
	}
	b.WriteString("\n## Cells that are not as expected\n\n")
	n := 0
	for _, c := range m.Cells() {
		if c.Verdict == OK || c.Verdict == Skipped {
			continue
		}
		n++
		fmt.Fprintf(&b, "- **%s** %s -> %s (claims %s): expected %s, observed %s", c.Verdict, c.Source, c.Target,
			strings.Join(c.Claims, ", "), c.Expect, c.Observed)
		if c.Result.Error != "" {
			fmt.Fprintf(&b, " (%s: %s)", c.Result.ErrorClass, c.Result.Error)
		}
		fmt.Fprintf(&b, "\n  ```\n  %s\n  ```\n", c.Repro)
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
	b.WriteString("\n## Documented limitations seen\n\n")
	n = 0
	for _, c := range m.Cells() {
		if !c.Expect.Reachable && c.Verdict == OK {
			n++
			fmt.Fprintf(&b, "- %s -> %s: blocked, as documented (%s; %s)\n", c.Source, c.Target, c.Expect.Reason, c.Expect.Doc)
		}
	}
	if n == 0 {
		b.WriteString("None on this cluster.\n")
	}
	return b.String()
}

// Report is the matrix as JSON.
type Report struct {
	// Stamp is the run's ID and the harness that wrote the table.
	version.Stamp
	ServerVersion string   `json:"serverVersion"`
	CNI           string   `json:"cni"`
	Sources       []Peer   `json:"sources"`
	Targets       []Target `json:"targets"`
	Cells         []*Cell  `json:"cells"`
}

// Report returns the matrix's JSON form.
func (m *Matrix) Report() Report {
	r := Report{ServerVersion: m.Profile.ServerVersion, CNI: m.Profile.CNI, Targets: m.Targets, Cells: m.Cells()}
	for _, s := range m.Sources {
		r.Sources = append(r.Sources, s.Peer())
	}
	return r
}

// Write puts network-matrix.md and network-matrix.json into dir; the JSON
// carries stamp (the run's ID and the harness). It returns what the run
// records of the file (record.AddMatrix), which binds it to the record.
func (m *Matrix) Write(dir string, stamp version.Stamp) (record.Matrix, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return record.Matrix{}, err
	}
	r := m.Report()
	r.Stamp = stamp
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return record.Matrix{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "network-matrix.json"), data, 0o644); err != nil {
		return record.Matrix{}, err
	}
	sum := sha256.Sum256(data)
	written := record.Matrix{Cells: len(r.Cells), SHA256: "sha256:" + hex.EncodeToString(sum[:])}
	return written, os.WriteFile(filepath.Join(dir, "network-matrix.md"), []byte(m.Markdown()), 0o644)
}
