package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/flakerun"
)

func TestFlakeChild(t *testing.T) { flakerun.Child(t) }

// `winconform results` and `winconform gate` on a real Ginkgo run with a
// flake: each shows the flake's first failure beside its pass, the gate
// also when it tolerates the flake.
func TestResultsAndGateShowARealFlakesFirstFailure(t *testing.T) {
	dir := flakerun.Run(t, "TestFlakeChild")
	first := regexp.MustCompile(`passed on attempt 2; attempt 1 failed at \S*testing/flakerun/flakerun\.go:\d+: dial tcp 10\.0\.0\.7:80: i/o timeout`)
	code, out, stderr := runCLI(t, "results", dir)
	if code != 0 || !regexp.MustCompile(`NET-07\s+shown\s+linux\s+linux\s+passed only on a retry: `+regexp.QuoteMeta(flakerun.Flaky)).MatchString(out) ||
		!regexp.MustCompile(`passed \(flaky\)\s.*`+regexp.QuoteMeta(flakerun.Flaky)+`\s+`+first.String()).MatchString(out) {
		t.Errorf("results: exit %d:\n%s%s", code, out, stderr)
	}
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("name: flake\nrequired:\n- claims: [NET-07]\n  level: linux\nflakes:\n  tolerated: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runCLI(t, "gate", "--report", dir, "--policy", policy, "--out", t.TempDir())
	if !regexp.MustCompile(`flaky \(1\), each with its first failure:\n  - spec ` + regexp.QuoteMeta(flakerun.Flaky) + `: ` + first.String()).MatchString(out) {
		t.Errorf("gate: exit %d:\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "required claims met: 1 of 1") {
		t.Errorf("gate: NET-07 passed on a retry, the flake tolerated, is not met:\n%s", out)
	}
}
