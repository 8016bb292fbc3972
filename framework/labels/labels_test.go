package labels

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
)

func TestSuiteLabelsAndRegistersArea(t *testing.T) {
	l := Suite("zz-labels-test")
	if want := []string{"suite:zz-labels-test"}; !reflect.DeepEqual([]string(l), want) {
		t.Errorf("Suite() = %v, want %v", l, want)
	}
	Suite("aa-labels-test")
	Suite("zz-labels-test") // again: registered once
	areas := Areas()
	if !slices.IsSorted(areas) {
		t.Errorf("Areas() = %v, not sorted", areas)
	}
	n := 0
	for _, a := range areas {
		if a == "zz-labels-test" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("Areas() = %v: zz-labels-test appears %d times, want once", areas, n)
	}
	if !slices.Contains(areas, "aa-labels-test") {
		t.Errorf("Areas() = %v, lacks aa-labels-test", areas)
	}
}

func TestAreasReturnsACopy(t *testing.T) {
	Suite("copy-test")
	a := Areas()
	for i := range a {
		a[i] = "mangled"
	}
	if slices.Contains(Areas(), "mangled") {
		t.Error("changing the slice Areas() returned changed the registry")
	}
}

func TestLabelMakers(t *testing.T) {
	cases := []struct {
		name string
		got  []string
		want []string
	}{
		{"OS windows", OS(Windows), []string{"os:windows"}},
		{"OS linux", OS(Linux), []string{"os:linux"}},
	}
	for _, c := range cases {
		got := c.got
		if got == nil {
			got = []string{}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClaimsAndValues(t *testing.T) {
	l := []string{"suite:networking", "claim:NET-01", "os:windows", "claim:NET-05", "needs:inventory", "needs:ad", "claimNET-99"}
	if got, want := Claims(l), []string{"NET-01", "NET-05"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Claims() = %v, want %v", got, want)
	}
	if got, want := Values(l, NeedsPrefix), []string{"inventory", "ad"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Values(needs:) = %v, want %v", got, want)
	}
	if got, want := Values(l, SuitePrefix), []string{"networking"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Values(suite:) = %v, want %v", got, want)
	}
	if got := Claims([]string{"os:linux"}); len(got) != 0 {
		t.Errorf("Claims without claim labels = %v, want none", got)
	}
}

func TestCheckValid(t *testing.T) {
	for _, l := range [][]string{
		{"suite:networking", "claim:NET-01", "os:windows", "needs:windows-node"},
		{"suite:networking", "claim:NET-03", "claim:NET-05", "os:windows", "os:linux", "needs:windows-node"},
		{"os:linux", "claim:LIM-07", "suite:limitations", "unrelated"},
		{"suite:config", "claim:CFG-01", "os:linux", "twin"},
		{"suite:scheduling", "claim:SCH-01", "os:windows", "needs:kwok"},
		{"suite:limitations", "claim:LIM-05", "os:windows", "needs:kwok"}, // a Windows-node claim on simulated nodes: supported, not shown
		{"suite:limitations", "claim:LIM-01", "os:windows"},               // API level: nothing needed
	} {
		if p := Check(l); len(p) != 0 {
			t.Errorf("Check(%v) = %q, want no problems", l, p)
		}
	}
}

func TestCheckProblems(t *testing.T) {
	cases := []struct {
		name   string
		labels []string
		want   []string
	}{
		{"missing suite", []string{"claim:NET-07", "os:linux"}, []string{"needs exactly one suite: label"}},
		{"two suites", []string{"suite:a", "suite:b", "claim:NET-07", "os:linux"}, []string{"needs exactly one suite: label"}},
		{"no claim", []string{"suite:a", "os:linux"}, []string{"has no claim: label"}},
		{"unknown claim", []string{"suite:a", "claim:NET-07", "claim:NET-99", "os:linux"}, []string{"claim:NET-99 is not in the catalogue"}},
		{"lower-case claim", []string{"suite:a", "claim:net-01", "os:linux"}, []string{"claim:net-01 is not in the catalogue"}},
		{"no os", []string{"suite:a", "claim:NET-07"}, []string{"has no os: label"}},
		{"bad os", []string{"suite:a", "claim:NET-07", "os:darwin"}, []string{"os:darwin is neither linux nor windows"}},
		{"bad os among good", []string{"suite:a", "claim:NET-07", "os:linux", "os:Windows"}, []string{"os:Windows is neither linux nor windows"}},
		// Labels that contradict the claim's catalogue entry.
		{"Linux spec of a Windows claim, not a twin", []string{"suite:a", "claim:WEB-01", "os:linux"},
			[]string{"os:linux contradicts claim WEB-01, which is about [windows] (a Linux twin carries the twin label)"}},
		{"Windows spec of a Linux claim", []string{"suite:a", "claim:NET-07", "os:windows"},
			[]string{"os:windows contradicts claim NET-07, which is about [linux] (a Linux twin carries the twin label)"}},
		{"twin of a Linux claim", []string{"suite:a", "claim:NET-07", "os:linux", "twin"},
			[]string{"twin: a twin runs on Linux only, for a claim about Windows only, and NET-07 is about [linux]"}},
		{"Windows spec without its need", []string{"suite:a", "claim:WEB-01", "os:windows"},
			[]string{"lacks needs:windows-node, which claim WEB-01 needs on Windows (level windows-node)"}},
		{"gMSA without a domain", []string{"suite:a", "claim:ID-02", "os:windows", "needs:windows-node"},
			[]string{"lacks needs:active-directory, which claim ID-02 needs on Windows (level domain)"}},
		{"needs a Windows node, runs on Linux", []string{"suite:a", "claim:NET-07", "os:linux", "needs:windows-node"},
			[]string{"needs:windows-node on a spec that does not run on Windows (no os:windows)"}},
		{"unknown need", []string{"suite:a", "claim:NET-07", "os:linux", "needs:luck"},
			[]string{"needs:luck is not a known need ([windows-node kwok inventory active-directory load-balancer disruptive])"}},
		{"LoadBalancer twin without its need", []string{"suite:a", "claim:NET-26", "os:linux", "twin"},
			[]string{"lacks needs:load-balancer, which claim NET-26 always needs"}},
		{"everything", nil, []string{"needs exactly one suite: label", "has no claim: label", "has no os: label"}},
	}
	for _, c := range cases {
		if got := Check(c.labels); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Check(%v) = %q, want %q", c.name, c.labels, got, c.want)
		}
	}
}

func TestDerivedLabels(t *testing.T) {
	cases := []struct {
		name string
		got  []string
		want []string
	}{
		{"Windows entry", For("WEB-01", "windows"), []string{"claim:WEB-01", "os:windows", "needs:windows-node"}},
		{"Linux twin", For("WEB-01", "linux"), []string{"claim:WEB-01", "os:linux", "twin"}},
		{"Linux claim", For("NET-07", "linux"), []string{"claim:NET-07", "os:linux"}},
		{"scheduler level", For("SCH-01", "windows"), []string{"claim:SCH-01", "os:windows", "needs:kwok"}},
		{"domain", For("ID-02", "windows"), []string{"claim:ID-02", "os:windows", "needs:windows-node", "needs:active-directory"}},
		{"load balancer twin", For("NET-26", "linux"), []string{"claim:NET-26", "os:linux", "needs:load-balancer", "twin"}},
		{"simulated", ForSimulated("LIM-05"), []string{"claim:LIM-05", "os:windows", "needs:kwok"}},
		{"API only", APIOnly("LIM-09"), []string{"claim:LIM-09", "os:windows", "api-only"}},
		{"both OSes", ForClaim("NET-03"), []string{"claim:NET-03", "os:windows", "os:linux", "needs:windows-node"}},
		{"Linux only", ForClaim("NET-07"), []string{"claim:NET-07", "os:linux"}},
	}
	for _, c := range cases {
		if !reflect.DeepEqual([]string(c.got), c.want) {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
		if p := Check(append([]string{"suite:x"}, c.got...)); len(p) > 0 {
			t.Errorf("%s: the derived labels %q do not pass Check: %q", c.name, c.got, p)
		}
	}
}

// Every claim's derived labels pass Check, on each OS it is about and as a Linux twin.
func TestDerivedLabelsOfEveryClaimPassCheck(t *testing.T) {
	for _, c := range claims.All() {
		sets := [][]string{ForClaim(c.ID)}
		for _, os := range c.OSes {
			sets = append(sets, For(c.ID, os))
		}
		if !c.About("linux") {
			sets = append(sets, For(c.ID, "linux"))
		}
		for _, l := range sets {
			if p := Check(append([]string{"suite:x"}, l...)); len(p) > 0 {
				t.Errorf("%s: %q: %q", c.ID, l, p)
			}
		}
	}
}

func TestFilterUnknownSuiteListsKnownOnes(t *testing.T) {
	Suite("filter-alpha")
	Suite("filter-beta")
	_, err := Filter("filter-gamma", "", "")
	if err == nil {
		t.Fatal("Filter with an unknown suite returned no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, `unknown SUITE "filter-gamma"`) {
		t.Errorf("error %q does not name the unknown suite", msg)
	}
	if !strings.Contains(msg, strings.Join(Areas(), ", ")) || !strings.Contains(msg, "filter-alpha") || !strings.Contains(msg, "filter-beta") {
		t.Errorf("error %q does not list the known suites %v", msg, Areas())
	}
}

func TestFilterStrings(t *testing.T) {
	Suite("filter-net")
	cases := []struct {
		suite, claim, extra string
		want                string
	}{
		{"", "", "", ""},
		{"filter-net", "", "", "suite:filter-net"},
		{"", "NET-03", "", "(claim:NET-03)"},
		{"", "net-03, lim-07 ", "", "(claim:NET-03 || claim:LIM-07)"},
		{"", "", "os:windows", "(os:windows)"},
		{"filter-net", "NET-03,NET-04", "os:linux || os:windows", "suite:filter-net && (claim:NET-03 || claim:NET-04) && (os:linux || os:windows)"},
	}
	for _, c := range cases {
		got, err := Filter(c.suite, c.claim, c.extra)
		if err != nil {
			t.Errorf("Filter(%q, %q, %q): %v", c.suite, c.claim, c.extra, err)
			continue
		}
		if got != c.want {
			t.Errorf("Filter(%q, %q, %q) = %q, want %q", c.suite, c.claim, c.extra, got, c.want)
		}
	}
}

func TestFilterRejectsUnknownClaims(t *testing.T) {
	for _, claim := range []string{"NET-99", "net-3", "NET-03,XYZ-01", "NET-03,"} {
		f, err := Filter("", claim, "")
		if err == nil {
			t.Errorf("Filter(claim %q) = %q, want an error", claim, f)
			continue
		}
		if !strings.Contains(err.Error(), "unknown claim") || !strings.Contains(err.Error(), "CLAIM") {
			t.Errorf("Filter(claim %q) error %q does not explain the unknown claim", claim, err)
		}
	}
	_, err := Filter("", "net-99", "")
	if err == nil || !strings.Contains(err.Error(), `"NET-99"`) {
		t.Errorf("error %v should name the upper-cased ID NET-99", err)
	}
}

// The filter Ginkgo gets must select what the run asks for: the parentheses
// keep an || in the free filter from escaping the suite and claim terms.
func TestFilterSemanticsUnderGinkgo(t *testing.T) {
	Suite("filter-sem")
	f, err := Filter("filter-sem", "net-03,net-05", "os:linux || os:windows")
	if err != nil {
		t.Fatal(err)
	}
	match, err := types.ParseLabelFilter(f)
	if err != nil {
		t.Fatalf("Ginkgo cannot parse %q: %v", f, err)
	}
	cases := []struct {
		labels []string
		want   bool
	}{
		{[]string{"suite:filter-sem", "claim:NET-03", "os:windows"}, true},
		{[]string{"suite:filter-sem", "claim:NET-05", "os:linux"}, true},
		{[]string{"suite:other", "claim:NET-03", "os:linux"}, false},      // wrong suite
		{[]string{"suite:filter-sem", "claim:NET-04", "os:linux"}, false}, // claim not asked for
		{[]string{"suite:filter-sem", "claim:NET-03"}, false},             // no os
		{[]string{"suite:other", "os:windows"}, false},
	}
	for _, c := range cases {
		if got := match(c.labels); got != c.want {
			t.Errorf("filter %q on %v = %v, want %v", f, c.labels, got, c.want)
		}
	}
}
