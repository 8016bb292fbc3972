package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/internal/atomicfile"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// The gate's decision as an in-toto Statement v1
// (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md):
// its subject is the run's manifest and record, by digest; its predicate
// is the decision. `cosign attest-blob --statement` signs it as it is.
const (
	StatementType = "https://in-toto.io/Statement/v1"
	PredicateType = "https://github.com/winconform/winconform/blob/main/docs/gate.md#the-statement"
)

// Statement is an in-toto Statement v1 of the gate's decision.
type Statement struct {
	Type          string      `json:"_type"`
	Subject       []Subject   `json:"subject"`
	PredicateType string      `json:"predicateType"`
	Predicate     Attestation `json:"predicate"`
}

// Subject is an in-toto resource descriptor: a file of the run by name
// and SHA-256 (hex).
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Attestation is the statement's predicate: what was decided, on what,
// under which policy, by which harness and catalogue, and when.
type Attestation struct {
	Decision string `json:"decision"` // ship or blocked
	RunID    string `json:"runID"`
	// DecidedAt is when the gate decided; KnownIssuesAsOf the day known
	// issues' expiry was read against.
	DecidedAt       time.Time    `json:"decidedAt"`
	KnownIssuesAsOf string       `json:"knownIssuesAsOf"`
	Harness         version.Info `json:"harness"`
	Catalogue       string       `json:"catalogue"`
	Policy          PolicyRef    `json:"policy"`
	// Required are the claims the policy requires, each with the run's
	// outcome, the evidence that showed it and what the gate decided.
	Required []RequiredClaim `json:"required"`
	Reasons  []string        `json:"reasons"`
	// Baseline is the baseline's manifest, when there was one.
	Baseline      *Subject `json:"baseline,omitempty"`
	WindowsBuilds []string `json:"windowsBuilds,omitempty"`
}

// PolicyRef names the policy the decision was made under: its name, its
// file, and the SHA-256 of the policy as decided on (PolicyDigest).
type PolicyRef struct {
	Name   string            `json:"name"`
	File   string            `json:"file"`
	Digest map[string]string `json:"digest"`
}

// RequiredClaim is one required claim in a statement.
type RequiredClaim struct {
	Claim    string   `json:"claim"`
	Outcome  string   `json:"outcome"`
	Evidence string   `json:"evidence"` // the levels (and builds) that showed it, "" when none
	Required string   `json:"required"` // what the policy asks
	Decision Decision `json:"decision"`
}

// PolicyDigest is the SHA-256 (hex) of policy p as decided on: its JSON,
// as gate.json's inputs carry it. `winconform gate --check` prints it for
// a policy file.
func PolicyDigest(p config.GatePolicy) string {
	data, _ := json.Marshal(p)
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Statement is r's statement about run, decided at at.
func (r Result) Statement(run *rundir.Run, at time.Time) Statement {
	st := Statement{Type: StatementType, PredicateType: PredicateType,
		Subject: []Subject{
			{Name: rundir.ManifestFile, Digest: map[string]string{"sha256": run.ManifestDigest()}},
			{Name: reports.GinkgoFile, Digest: map[string]string{"sha256": run.RecordDigest()}},
		},
		Predicate: Attestation{Decision: r.Decision, RunID: r.RunID, DecidedAt: at.UTC().Truncate(time.Second), KnownIssuesAsOf: r.Now,
			Harness: r.Harness, Catalogue: run.Record.Catalogue,
			Policy:        PolicyRef{Name: r.Policy, File: r.PolicyFile, Digest: map[string]string{"sha256": PolicyDigest(r.Inputs.Policy)}},
			Required:      requiredClaims(r, run),
			Reasons:       r.Reasons,
			WindowsBuilds: r.Inputs.WindowsBuilds},
	}
	if r.baselineManifest != "" {
		st.Predicate.Baseline = &Subject{Name: r.Inputs.Baseline, Digest: map[string]string{"sha256": r.baselineManifest}}
	}
	return st
}

func requiredClaims(r Result, run *rundir.Run) []RequiredClaim {
	byID := map[string]reports.Claim{}
	for _, c := range run.Summary.Claims {
		byID[c.ID] = c
	}
	out := []RequiredClaim{}
	for _, it := range r.Items {
		if it.Kind != KindRequired {
			continue
		}
		c := byID[it.Claim]
		out = append(out, RequiredClaim{Claim: it.Claim, Outcome: c.Outcome, Evidence: shownLevels(c), Required: it.Required, Decision: it.Decision})
	}
	slices.SortStableFunc(out, func(a, b RequiredClaim) int {
		switch {
		case a.Claim < b.Claim:
			return -1
		case a.Claim > b.Claim:
			return 1
		}
		return 0
	})
	return out
}

// WriteStatement writes r's statement about run, decided at at, beside
// gate.json in dir (rundir.StatementFile).
func (r Result) WriteStatement(dir string, run *rundir.Run, at time.Time) error {
	return atomicfile.WriteJSON(filepath.Join(dir, rundir.StatementFile), r.Statement(run, at))
}

// ReadStatement reads dir's statement; ok is false when there is none.
func ReadStatement(dir string) (st Statement, ok bool, err error) {
	path := filepath.Join(dir, rundir.StatementFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return st, false, nil
	} else if err != nil {
		return st, false, err
	}
	st, err = ParseStatement(data)
	if err != nil {
		return st, false, fmt.Errorf("%s: %v", path, err)
	}
	return st, true, nil
}

// ParseStatement decodes a statement of the gate (a signed statement's
// payload, or the file), refusing another type or predicate.
func ParseStatement(data []byte) (Statement, error) {
	var st Statement
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("not an in-toto statement: %v", err)
	}
	if st.Type != StatementType || st.PredicateType != PredicateType {
		return st, fmt.Errorf("a statement of type %q about %q, not the gate's (%s, %s)", st.Type, st.PredicateType, StatementType, PredicateType)
	}
	return st, nil
}

// VerifyStatement decides whether st states the decision on run that
// the gate makes again from the model: its subject must be this run's
// manifest and record, its policy the one stored (gate.json's inputs,
// by digest), and the decision made again from them (Verify) must be
// the one it states, claim by claim. It returns that decision, the only
// one a view shows. A signature is checked elsewhere (gate --verify):
// this binds a statement to a run, not to a signer.
func VerifyStatement(st Statement, stored Result, run *rundir.Run) (Result, error) {
	p := st.Predicate
	want := map[string]string{rundir.ManifestFile: run.ManifestDigest(), reports.GinkgoFile: run.RecordDigest()}
	for _, s := range st.Subject {
		if w, ok := want[s.Name]; ok && s.Digest["sha256"] == w {
			delete(want, s.Name)
		}
	}
	switch {
	case p.RunID != run.Record.RunID:
		return Result{}, fmt.Errorf("it states the decision on run %s, not on this run (%s)", orNone([]string{p.RunID}), orNone([]string{run.Record.RunID}))
	case len(want) > 0:
		return Result{}, fmt.Errorf("its subject is not this directory's manifest and record (%s, %s with sha256 %s): the directory changed since the decision, or the statement is of another copy", rundir.ManifestFile, reports.GinkgoFile, run.ManifestDigest())
	case p.Catalogue != run.Record.Catalogue:
		return Result{}, fmt.Errorf("it was decided under claim catalogue %s, the run recorded %s", p.Catalogue, run.Record.Catalogue)
	case p.Policy.Digest["sha256"] != PolicyDigest(stored.Inputs.Policy):
		return Result{}, fmt.Errorf("it was decided under another policy (sha256 %s) than %s holds (sha256 %s)", p.Policy.Digest["sha256"], JSONFile, PolicyDigest(stored.Inputs.Policy))
	case p.KnownIssuesAsOf != stored.Now:
		return Result{}, fmt.Errorf("it read known issues as of %s, %s as of %s", p.KnownIssuesAsOf, JSONFile, stored.Now)
	}
	again, err := Verify(stored, run)
	if err != nil {
		return Result{}, err
	}
	if p.Baseline != nil && p.Baseline.Digest["sha256"] != again.baselineManifest {
		return Result{}, fmt.Errorf("it was decided against baseline %s of manifest sha256 %s, which now holds %s", p.Baseline.Name, p.Baseline.Digest["sha256"], orNone([]string{again.baselineManifest}))
	}
	made := again.Statement(run, p.DecidedAt).Predicate
	if p.Decision != made.Decision || !slices.Equal(p.Required, made.Required) || !slices.Equal(p.Reasons, made.Reasons) {
		return Result{}, fmt.Errorf("it states %s, and the gate decides %s again from the run and the policy: it does not follow from this run", p.Decision, made.Decision)
	}
	return again, nil
}
