// Package html renders a run's report directory as one self-contained HTML
// page (report.html) for release managers: the run's status and headline,
// the gate's verdict when there is one, claims by area with their outcome
// and evidence, the network matrix as a coloured grid (every cell's
// expectation, observation and reproducing command on hover and on click),
// the limitation ledger, the gate's decisions, the baseline diff, and each
// failure with its message and a link to its artifacts.
//
// The page loads nothing: its CSS and its small script are inline, it has
// no external reference, and every text from the run goes through
// html/template's escaping. Screenshot renders it in headless Chromium.
package html

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/winconform/winconform/framework/artifacts"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/diff"
	"github.com/winconform/winconform/reports/gate"
	"github.com/winconform/winconform/reports/rundir"
)

// File is the page's name in the report directory.
const File = "report.html"

//go:embed report.html.tmpl
var templates embed.FS

var page = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"first":   text.FirstLine,
	"class":   class,
	"join":    strings.Join,
	"levels":  evidenceText,
	"inc":     func(i int) int { return i + 1 },
	"symbol":  func(c *netmatrix.Cell) string { return string(c.Symbol()) },
	"percent": percent,
	"title":   cellTitle,
}).ParseFS(templates, "report.html.tmpl"))

// WriteHTML renders the report directory dir into dir/report.html. It
// reads the run's record (rundir.Load: which must be there) and, when
// present, gate.json and diff.json. A
// screenshot of the page (report.png) there is taken again, so that it
// never shows an older page; where it cannot be, it is removed, and the
// error says so (report.html is written all the same).
func WriteHTML(dir string) error {
	data, err := Render(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, File), data, 0o644); err != nil {
		return err
	}
	return refresh(dir)
}

// Render returns the page for report directory dir.
func Render(dir string) ([]byte, error) {
	run, err := rundir.Load(dir)
	if err != nil {
		return nil, err
	}
	v := view{Run: run, S: run.Summary, Generated: time.Now().UTC().Format(time.RFC3339)}
	// The gate and the diff are shown only as made again from this run's
	// record (gate.VerifyStatement, diff.Verify): a verdict only from the
	// gate's statement whose subject is this run's manifest and record,
	// and whose decision the gate makes again. A reused directory, a file
	// edited or written by hand, never shows a verdict this run does not give.
	if g, ok, err := gate.Read(dir); err != nil {
		return nil, err
	} else if ok {
		if again, err := boundGate(dir, g, run); err == nil {
			v.Gate = &again
		} else {
			v.Others = append(v.Others, fmt.Sprintf("%s is not shown: %v; gate this run with `winconform gate --report %s --policy FILE`", gate.JSONFile, err, dir))
		}
	}
	if d, ok, err := diff.Read(dir); err != nil {
		return nil, err
	} else if ok {
		if again, err := diff.Verify(d, run); err == nil {
			v.Diff = &again
		} else {
			v.Others = append(v.Others, fmt.Sprintf("%s is not shown: %v; compare this run with `winconform diff --report %s --baseline DIR`", diff.JSONFile, err, dir))
		}
	}
	v.build()
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", filepath.Join(dir, File), err)
	}
	return b.Bytes(), nil
}

// boundGate is the gate's decision g on run as its statement in dir binds
// it (gate.VerifyStatement); an error says why it is not shown.
func boundGate(dir string, g gate.Result, run *rundir.Run) (gate.Result, error) {
	st, ok, err := gate.ReadStatement(dir)
	switch {
	case err != nil:
		return gate.Result{}, err
	case !ok:
		return gate.Result{}, fmt.Errorf("no statement of the gate (%s) binds it to this run (written by hand, or by a winconform before statements)", rundir.StatementFile)
	}
	return gate.VerifyStatement(st, g, run)
}

// view is what the template reads.
type view struct {
	Run       *rundir.Run
	S         reports.Summary
	Gate      *gate.Result
	Diff      *diff.Diff
	Generated string
	// Others says which files of another run the directory holds, not shown.
	Others []string

	Areas    []area
	Outcomes []count
	Failures []failure
	// Flaky are the specs that passed only on a retry, with their first
	// failure (the summary's Flaky).
	Flaky  []reports.Flake
	Matrix *grid
	Gated  []gate.Item // the gate's items, blocking first
	// NodeLogs links the cluster's node logs, kept once per run on a failure.
	NodeLogs string
}

type count struct {
	Outcome string
	N       int
}

type area struct {
	Name   string
	Claims []reports.Claim
	Counts []count
}

type failure struct {
	reports.Spec
	// Artifacts is the relative link to the spec's artifacts, when they exist.
	Artifacts string
}

type grid struct {
	R       *netmatrix.Report
	Rows    []row
	Targets []netmatrix.Target
	Counts  []count
	Notable []*netmatrix.Cell
}

type row struct {
	Source netmatrix.Peer
	Cells  []*netmatrix.Cell // nil where the pair does not apply
}

func (v *view) build() {
	byArea := map[string]*area{}
	var names []string
	for _, c := range v.S.Claims {
		a := strings.SplitN(c.ID, "-", 2)[0]
		if byArea[a] == nil {
			byArea[a] = &area{Name: a}
			names = append(names, a)
		}
		byArea[a].Claims = append(byArea[a].Claims, c)
	}
	sort.Strings(names)
	for _, n := range names {
		a := byArea[n]
		m := map[string]int{}
		for _, c := range a.Claims {
			m[c.Outcome]++
		}
		a.Counts = ordered(m)
		v.Areas = append(v.Areas, *a)
	}
	v.Outcomes = ordered(v.S.Outcomes)
	v.Flaky = v.S.Flaky
	for _, sp := range v.S.Specs {
		if sp.Result != reports.SpecFailed && sp.Result != reports.SpecBlocked && sp.Result != reports.SpecInterrupted {
			continue
		}
		f := failure{Spec: sp}
		rel := sp.Artifacts
		if rel == "" {
			rel = path.Join(artifacts.Dir, artifacts.Slug(sp.Name))
		}
		if v.Run.Exists(rel) {
			f.Artifacts = strings.TrimSuffix(rel, "/") + "/"
		}
		v.Failures = append(v.Failures, f)
	}
	if rel := artifacts.Dir + "/nodes"; v.Run.Exists(rel) {
		v.NodeLogs = rel + "/"
	}
	if m := v.Run.Matrix; m != nil {
		g := &grid{R: m, Targets: m.Targets}
		cells := map[string]*netmatrix.Cell{}
		counts := map[string]int{}
		for _, c := range m.Cells {
			cells[c.Source+"\x00"+c.Target] = c
			counts[string(c.Verdict)]++
			if c.Verdict != netmatrix.OK && c.Verdict != netmatrix.Skipped {
				g.Notable = append(g.Notable, c)
			}
		}
		for _, s := range m.Sources {
			r := row{Source: s}
			for _, t := range m.Targets {
				r.Cells = append(r.Cells, cells[s.Name+"\x00"+t.ID()])
			}
			g.Rows = append(g.Rows, r)
		}
		for _, k := range []netmatrix.Verdict{netmatrix.OK, netmatrix.Regression, netmatrix.Wrong, netmatrix.Flaky, netmatrix.Drift, netmatrix.Broken, netmatrix.Unobserved, netmatrix.Skipped} {
			if counts[string(k)] > 0 {
				g.Counts = append(g.Counts, count{string(k), counts[string(k)]})
			}
		}
		v.Matrix = g
	}
	if v.Gate != nil {
		for _, d := range []gate.Decision{gate.Block, gate.Waived, gate.Report, gate.Pass} {
			for _, it := range v.Gate.Items {
				if it.Decision == d {
					v.Gated = append(v.Gated, it)
				}
			}
		}
	}
}

// ordered lists the counts of m in the order claims take outcomes, then
// any other key.
func ordered(m map[string]int) []count {
	var out []count
	for _, o := range reports.Outcomes {
		if m[o] > 0 {
			out = append(out, count{o, m[o]})
		}
	}
	var rest []string
	for k, n := range m {
		if n > 0 && !contains(reports.Outcomes, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, count{k, m[k]})
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func percent(a, b int) int {
	if b == 0 {
		return 0
	}
	return a * 100 / b
}

// class makes a CSS class name of an outcome, verdict or decision.
func class(s any) string {
	return "k-" + strings.ReplaceAll(fmt.Sprint(s), " ", "-")
}

func evidenceText(m map[claims.Level]int) string {
	var out []string
	for _, l := range claims.Levels {
		if n := m[l]; n > 0 {
			out = append(out, fmt.Sprintf("%s %d", l, n))
		}
	}
	return strings.Join(out, ", ")
}

// cellTitle is a matrix cell's tooltip: what was expected, observed,
// decided, and the command that reproduces it.
func cellTitle(c *netmatrix.Cell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s -> %s\nexpected: %s\nobserved: %s\nverdict: %s", c.Source, c.Target, c.Expect.String(), c.Observed, c.Verdict)
	if len(c.Claims) > 0 {
		fmt.Fprintf(&b, "\nclaims: %s", strings.Join(c.Claims, ", "))
	}
	if c.Result.Error != "" {
		fmt.Fprintf(&b, "\nerror: %s: %s", c.Result.ErrorClass, c.Result.Error)
	}
	if c.Why != "" {
		fmt.Fprintf(&b, "\nwhy: %s", c.Why)
	}
	fmt.Fprintf(&b, "\nreproduce: %s", c.Repro)
	return b.String()
}
