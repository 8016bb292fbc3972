package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
)

// parse parses a policy written to a file named in a temporary directory.
func parse(t *testing.T, body string) (*config.GatePolicy, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	return p, path, err
}

// mustFail checks that body is refused with one error that names the file
// and contains every one of wants.
func mustFail(t *testing.T, body string, wants ...string) {
	t.Helper()
	_, path, err := parse(t, body)
	if err == nil {
		t.Fatalf("policy accepted:\n%s", body)
	}
	msg := err.Error()
	if !strings.Contains(msg, path) {
		t.Errorf("the error does not name the file %s:\n%s", path, msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("the error lacks %q:\n%s", w, msg)
		}
	}
}

func TestExamplePoliciesLoad(t *testing.T) {
	files, err := filepath.Glob("../../policies/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("example policies: %v %v", files, err)
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if p.Name == "" || len(p.Required) == 0 {
			t.Errorf("%s: no name or no requirement", f)
		}
	}
}

func TestDefaults(t *testing.T) {
	p, _, err := parse(t, "name: x\nrequired:\n- areas: [NET]\n")
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]config.Action{"inconclusive": p.Outcomes.Inconclusive, "blocked": p.Outcomes.Blocked, "interrupted": p.Outcomes.Interrupted,
		"notRun": p.Outcomes.NotRun, "skipped": p.Outcomes.Skipped, "notCovered": p.Outcomes.NotCovered, "otherFailures": p.OtherFailures, "baseline.newlyFailing": p.Baseline.NewlyFailing} {
		if a != config.Block {
			t.Errorf("%s defaults to %q, want block", name, a)
		}
	}
	if p.Cluster.AllowPreRelease {
		t.Error("a policy allows pre-releases by default")
	}
	if p, _, err := parse(t, "name: x\nrequired:\n- areas: [NET]\ncluster:\n  allowPreRelease: true\n"); err != nil || !p.Cluster.AllowPreRelease {
		t.Errorf("allowPreRelease: true: %v", err)
	}
	if p.Drift != config.Report || p.Baseline.LostShown != config.Report || p.Baseline.OtherShape != config.Report || p.Flakes.Tolerated != 0 {
		t.Errorf("defaults: drift %q, lostShown %q, otherShape %q, flakes %d", p.Drift, p.Baseline.LostShown, p.Baseline.OtherShape, p.Flakes.Tolerated)
	}
}

func TestBadPolicies(t *testing.T) {
	cases := []struct {
		name, body string
		wants      []string
	}{
		{"unknown claim", "name: x\nrequired:\n- claims: [NET-01, NET-99]\n", []string{"required[0].claims[1]", `"NET-99"`, "winconform list"}},
		{"unknown area", "name: x\nrequired:\n- areas: [NETWORK]\n", []string{"required[0].areas[0]", `"NETWORK"`, "NET,"}},
		{"unknown evidence level", "name: x\nrequired:\n- areas: [WEB]\n  level: windows\n", []string{"required[0].level", `"windows"`, "windows-node"}},
		{"unknown label", "name: x\nrequired:\n- labels: [os:macos]\n", []string{"required[0].labels[0]", "os:macos", "linux, windows"}},
		{"unknown label prefix", "name: x\nrequired:\n- labels: [team:sig-windows]\n", []string{"required[0].labels[0]", "unknown label"}},
		{"unknown except", "name: x\nrequired:\n- areas: [NET]\n  except: [NET-00]\n", []string{"required[0].except[0]", "NET-00"}},
		{"nothing selected", "name: x\nrequired:\n- level: linux\n", []string{"required[0]", "claims:", "areas:", "labels:"}},
		{"level never reachable", "name: x\nrequired:\n- claims: [NET-07]\n  level: windows-node\n", []string{"required[0].level", "NET-07 can never be shown at windows-node", "except"}},
		{"known issue without expiry", "name: x\nknownIssues:\n- claim: NET-21\n  reason: flannel\n  link: https://example.com/issues/1\n",
			[]string{"knownIssues[0].expires: is missing", "YYYY-MM-DD"}},
		{"known issue date format", "name: x\nknownIssues:\n- claim: NET-21\n  reason: flannel\n  link: https://example.com/issues/1\n  expires: 31/12/2026\n",
			[]string{"knownIssues[0].expires", "31/12/2026", "YYYY-MM-DD"}},
		{"known issue date not a day", "name: x\nknownIssues:\n- claim: NET-21\n  reason: r\n  link: https://example.com/1\n  expires: 2026-02-30\n",
			[]string{"knownIssues[0].expires", "2026-02-30"}},
		{"known issue unknown claim", "name: x\nknownIssues:\n- claim: XYZ-01\n  reason: r\n  link: https://example.com/1\n  expires: 2026-01-01\n",
			[]string{"knownIssues[0].claim", "XYZ-01"}},
		{"known issue names nothing", "name: x\nknownIssues:\n- reason: r\n  link: https://example.com/1\n  expires: 2026-01-01\n",
			[]string{"knownIssues[0].claim", "spec"}},
		{"known issue without link", "name: x\nknownIssues:\n- claim: NET-21\n  reason: r\n  expires: 2026-01-01\n", []string{"knownIssues[0].link", "https://"}},
		{"known issue link not a URL", "name: x\nknownIssues:\n- claim: NET-21\n  reason: r\n  link: issue 42\n  expires: 2026-01-01\n", []string{"knownIssues[0].link", "issue 42"}},
		{"bad action", "name: x\ndrift: warn\n", []string{"drift", `"warn"`, "block or report"}},
		{"bad outcome action", "name: x\noutcomes:\n  notRun: ignore\n", []string{"outcomes.notRun", `"ignore"`}},
		{"bad shape action", "name: x\nbaseline:\n  otherShape: block\n", []string{"baseline.otherShape", "report or refuse"}},
		// A required claim that is not shown never lets a release ship.
		{"outcome reported", "name: x\nrequired:\n- claims: [NET-03]\noutcomes:\n  skipped: report\n",
			[]string{"outcomes.skipped", "never ships with a required claim unmet", "except:", "known issue naming its claim"}},
		// A known issue names one spec: never a blank or a letter.
		{"known issue blank spec", "name: x\nknownIssues:\n- spec: \" \"\n  reason: r\n  link: https://example.com/1\n  expires: 2026-01-01\n",
			[]string{"knownIssues[0].spec", "too short to name one spec", "full name"}},
		{"known issue one-letter spec", "name: x\nknownIssues:\n- spec: W\n  reason: r\n  link: https://example.com/1\n  expires: 2026-01-01\n",
			[]string{"knownIssues[0].spec", `"W"`, "too short"}},
		{"known issue spec with spaces", "name: x\nknownIssues:\n- spec: \" networking NET-21 a node's host \"\n  reason: r\n  link: https://example.com/1\n  expires: 2026-01-01\n",
			[]string{"knownIssues[0].spec", "spaces"}},
		{"negative flakes", "name: x\nflakes:\n  tolerated: -1\n", []string{"flakes.tolerated", "0 or more"}},
		{"bad build", "name: x\ncluster:\n  windowsBuilds: [ltsc2022]\n", []string{"cluster.windowsBuilds[0]", "10.0.20348"}},
		{"pre-release not a bool", "name: x\nrequired:\n- areas: [NET]\ncluster:\n  allowPreRelease: \"yes\"\n", []string{`.yaml:5: cluster.allowPreRelease: is the string "yes", not`}},
		{"pre-release misspelt", "name: x\nrequired:\n- areas: [NET]\ncluster:\n  allowPrerelease: true\n", []string{`.yaml:5: cluster.allowPrerelease: is not a field`, `did you mean "allowPreRelease"?`}},
		{"pre-release at the top", "name: x\nrequired:\n- areas: [NET]\nallowPreRelease: true\n", []string{`.yaml:4: allowPreRelease: is not a field of GatePolicy`}},
		{"no name", "required:\n- areas: [NET]\n", []string{"name: is missing"}},
		{"unknown field", "name: x\nrequire:\n- areas: [NET]\n", []string{`.yaml:2: require: is not a field of GatePolicy; did you mean "required"?`}},
		{"unknown nested field", "name: x\nrequired:\n- area: [NET]\n", []string{`.yaml:3: required[0].area: is not a field of required; did you mean "areas"?`}},
		{"wrong type", "name: x\nflakes:\n  tolerated: many\n", []string{`.yaml:3: flakes.tolerated: is the string "many", not a whole number`}},
		{"duplicate", "name: x\nname: y\n", []string{".yaml:2: name: is written twice (first at line 1)"}},
		{"two decoding problems", "name: x\nrequire: []\nflakes:\n  tolerated: many\n", []string{".yaml:2: require:", ".yaml:4: flakes.tolerated:"}},
		{"empty", "", []string{"name: is missing", "required: is missing"}},
		{"not YAML", "name: [x\n", []string{"policy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { mustFail(t, c.body, c.wants...) })
	}
}

func TestEveryProblemAtOnce(t *testing.T) {
	_, _, err := parse(t, "name: x\nrequired:\n- claims: [NET-99]\n  level: windows\n- areas: [FOO]\nknownIssues:\n- claim: NET-21\n  reason: r\n  link: https://example.com/1\n")
	if err == nil {
		t.Fatal("accepted")
	}
	// Each problem with its line (a missing field, at its parent's).
	if n := strings.Count(err.Error(), "\n") + 1; n != 4 {
		t.Errorf("%d problems, want 4:\n%v", n, err)
	}
	for _, w := range []string{".yaml:3: required[0].claims[0]", ".yaml:4: required[0].level", ".yaml:5: required[1].areas[0]", ".yaml:7: knownIssues[0].expires"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("lacks %q:\n%v", w, err)
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: the file does not exist") {
		t.Fatalf("got %v", err)
	}
}

func TestSelects(t *testing.T) {
	ids := func(r config.Requirement) []string {
		var out []string
		for _, c := range claims.All() {
			if Selects(r, c) {
				out = append(out, c.ID)
			}
		}
		return out
	}
	linuxOnly := ids(config.Requirement{Labels: []string{"os:linux", "!os:windows"}})
	if strings.Join(linuxOnly, ",") != "INF-01,INF-10,LIM-07,NET-07,NET-08,NET-15,NET-16" {
		t.Errorf("os:linux without os:windows selects %v", linuxOnly)
	}
	net := ids(config.Requirement{Areas: []string{"NET"}, Labels: []string{"kind:limit"}, Except: []string{"NET-27"}})
	if strings.Join(net, ",") != "NET-21" {
		t.Errorf("NET limits but NET-27 selects %v", net)
	}
	if got := ids(config.Requirement{Claims: []string{"WEB-01", "WEB-02"}, Areas: []string{"WEB", "NET"}}); strings.Join(got, ",") != "WEB-01,WEB-02" {
		t.Errorf("claims and areas select %v", got)
	}
	for _, id := range ids(config.Requirement{Labels: []string{"os:windows"}}) {
		if !claims.MustGet(id).About("windows") {
			t.Errorf("os:windows selects %s, which is not about Windows", id)
		}
	}
	if lb := Labels(claims.MustGet("NET-26")); !contains(lb, "needs:load-balancer") || !contains(lb, "level:windows-node") || !contains(lb, "kind:path") {
		t.Errorf("NET-26 labels %v", lb)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestExpiry(t *testing.T) {
	k := config.KnownIssue{Claim: "NET-21", Expires: "2026-03-31"}
	day := func(s string) time.Time {
		d, err := time.Parse(config.DateLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if k.Expired(day("2026-03-31")) || k.Expired(day("2026-03-31").Add(23*time.Hour)) {
		t.Error("expired on its last day")
	}
	if !k.Expired(day("2026-04-01")) {
		t.Error("not expired the day after")
	}
}

func TestReachable(t *testing.T) {
	if !Reachable(claims.API, claims.WindowsNode) || !Reachable(claims.Scheduler, claims.WindowsNode) || !Reachable(claims.WindowsMachine, claims.WindowsNode) {
		t.Error("a Windows node shows API, scheduler claims, and a machine a node")
	}
	if Reachable(claims.Linux, claims.WindowsNode) {
		t.Error("a Linux claim is shown at windows-node")
	}
}

// TestREADMEPolicy parses the policy the README documents, so that the
// documentation and the format do not drift apart.
func TestREADMEPolicy(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "A policy is YAML")
	if !ok {
		t.Fatal("README has no policy format")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README's policy block is not closed")
	}
	p, err := Parse("README.md", []byte(body))
	if err != nil {
		t.Fatalf("the README's policy: %v", err)
	}
	if len(p.Required) == 0 || len(p.KnownIssues) == 0 || p.Cluster.WindowsNodes != 2 {
		t.Errorf("the README's policy read as %+v", p)
	}
}
