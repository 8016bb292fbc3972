package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// gated gates a run written by r under the Windows node build policy and
// returns its directory, its decision and its statement as written.
func gated(t *testing.T, r *reporttest.Run) (string, Result, Statement) {
	t.Helper()
	dir := r.Write(t)
	res, err := Evaluate(Options{Report: dir, Policy: filepath.Join("..", "..", "policies", "windows-node-build.yaml"), Clock: func() time.Time { return today.Add(3 * time.Hour) }})
	must(t, err)
	must(t, res.Write(dir))
	st, ok, err := ReadStatement(dir)
	if err != nil || !ok {
		t.Fatalf("no statement beside %s: %v", JSONFile, err)
	}
	return dir, res, st
}

// The gate writes its decision as an in-toto Statement v1 beside
// gate.json: the run's manifest and record as its subject, the decision,
// each required claim's outcome and evidence, the policy's digest, the
// catalogue, the harness and the time of the decision as its predicate.
func TestTheGateWritesItsStatement(t *testing.T) {
	r := reporttest.IdealHybrid()
	r.Fail("WEB-01", "it failed")
	dir, res, st := gated(t, r)
	run, err := rundir.Load(dir)
	must(t, err)
	if st.Type != "https://in-toto.io/Statement/v1" || st.PredicateType != PredicateType {
		t.Errorf("type %s, predicate %s", st.Type, st.PredicateType)
	}
	want := map[string]string{rundir.ManifestFile: run.ManifestDigest(), reports.GinkgoFile: run.RecordDigest()}
	if len(st.Subject) != 2 {
		t.Errorf("subject %+v", st.Subject)
	}
	for _, s := range st.Subject {
		if want[s.Name] == "" || s.Digest["sha256"] != want[s.Name] {
			t.Errorf("subject %s %v, want %v", s.Name, s.Digest, want)
		}
	}
	p := st.Predicate
	if p.Decision != Blocked || p.Decision != res.Decision || p.RunID != r.ID || p.Catalogue != claims.Version() || p.Harness.Version == "" {
		t.Errorf("predicate %+v", p)
	}
	if !p.DecidedAt.Equal(today.Add(3*time.Hour)) || p.KnownIssuesAsOf != res.Now {
		t.Errorf("decided at %s, known issues as of %s", p.DecidedAt, p.KnownIssuesAsOf)
	}
	file, err := policy.Load(filepath.Join("..", "..", "policies", "windows-node-build.yaml"))
	must(t, err)
	if p.Policy.Digest["sha256"] != PolicyDigest(res.Inputs.Policy) || p.Policy.Digest["sha256"] != PolicyDigest(*file) || p.Policy.Name != "windows-node-build" {
		t.Errorf("policy %+v, the file's digest %s", p.Policy, PolicyDigest(*file))
	}
	var web *RequiredClaim
	for i, c := range p.Required {
		if c.Claim == "WEB-01" {
			web = &p.Required[i]
		}
	}
	if len(p.Required) != res.Required || web == nil || web.Outcome != reports.Failed || web.Decision != Block {
		t.Errorf("required claims %d of %d; WEB-01 %+v", len(p.Required), res.Required, web)
	}
	if _, err := VerifyStatement(st, res, run); err != nil {
		t.Errorf("the gate's own statement: %v", err)
	}
}

// A statement binds its decision to one run as it was: one whose run
// directory changed since (and was sealed again), one of another run, one
// whose decision, required claims or policy were edited, is refused,
// saying why.
func TestAStatementIsBoundToItsRun(t *testing.T) {
	dir, res, st := gated(t, reporttest.IdealHybrid())
	other, _, otherSt := gated(t, reporttest.IdealHybrid())
	cases := []struct {
		name string
		edit func(t *testing.T) (Statement, Result, string)
		want string
	}{
		{"the record edited and the manifest written again", func(t *testing.T) (Statement, Result, string) {
			d, r, s := gated(t, reporttest.IdealHybrid())
			reporttest.EditRecord(t, d, func(g map[string]any) { g["SuiteDescription"] = "edited" })
			return s, r, d
		}, "its subject is not this directory's manifest"},
		{"a statement of another run", func(t *testing.T) (Statement, Result, string) {
			return otherSt, res, dir
		}, "not on this run"},
		{"this run's statement beside another run", func(t *testing.T) (Statement, Result, string) {
			return st, res, other
		}, "not on this run"},
		{"SHIP written over a blocked decision", func(t *testing.T) (Statement, Result, string) {
			d, r, s := gated(t, func() *reporttest.Run { x := reporttest.IdealHybrid(); x.Fail("WEB-01", "no"); return x }())
			s.Predicate.Decision, s.Predicate.Reasons = Ship, nil
			return s, r, d
		}, "it states ship, and the gate decides blocked"},
		{"a required claim's outcome edited", func(t *testing.T) (Statement, Result, string) {
			s := st
			s.Predicate.Required = append([]RequiredClaim{}, st.Predicate.Required...)
			s.Predicate.Required[0].Outcome = "shown on Mars"
			return s, res, dir
		}, "does not follow from this run"},
		{"another policy than gate.json holds", func(t *testing.T) (Statement, Result, string) {
			r := res
			r.Inputs.Policy.OtherFailures = "report"
			return st, r, dir
		}, "under another policy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, r, d := c.edit(t)
			run, err := rundir.Load(d)
			must(t, err)
			if _, err := VerifyStatement(s, r, run); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("verified (%v), want it refused saying %q", err, c.want)
			}
		})
	}
}

// A statement of another type is no statement of the gate.
func TestParseStatementRefusesOtherStatements(t *testing.T) {
	dir, _, _ := gated(t, reporttest.IdealHybrid())
	path := filepath.Join(dir, rundir.StatementFile)
	data, err := os.ReadFile(path)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(data, &m))
	m["predicateType"] = "https://slsa.dev/provenance/v1"
	data, _ = json.Marshal(m)
	must(t, os.WriteFile(path, data, 0o644))
	if _, _, err := ReadStatement(dir); err == nil || !strings.Contains(err.Error(), "not the gate's") {
		t.Errorf("read a statement of another predicate: %v", err)
	}
}
