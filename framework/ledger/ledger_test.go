package ledger

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/claims"
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		expected, observed Behaviour
		simulated          bool
		verdict            Verdict
		unexpected         bool
	}{
		{Limited, Limited, false, Holds, false},
		{Works, Works, false, Lifted, false},     // lifted by this version, as expected
		{Limited, Works, false, Lifted, true},    // drift the version does not explain
		{Works, Limited, false, Regressed, true}, // should work here, does not
		// Nothing observed, or observed on a simulated node: no verdict.
		{Limited, Unobserved, false, Inconclusive, false},
		{Works, "", false, Inconclusive, false},
		{Works, Works, true, Inconclusive, false},
		{Limited, Limited, true, Inconclusive, false},
	} {
		e := Entry{Expected: tc.expected, Observed: tc.observed, Simulated: tc.simulated}
		e.Decide()
		if e.Verdict != tc.verdict || e.Unexpected != tc.unexpected {
			t.Errorf("expected %s, observed %q, simulated %v: verdict %s unexpected %v, want %s %v", tc.expected, tc.observed, tc.simulated, e.Verdict, e.Unexpected, tc.verdict, tc.unexpected)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	if _, err := Parse("{"); err == nil {
		t.Error("a broken entry parsed")
	}
	e, err := Parse(`{"claim":"CFG-03","expected":"works","observed":"works","verdict":"lifted","simulated":true}`)
	if err != nil || e.Claim != "CFG-03" || e.Verdict != Lifted || !e.Simulated {
		t.Fatalf("Parse = %+v, %v", e, err)
	}
}

// The versions a limitation holds for, and the CNI it is tied to.
func TestExpectOf(t *testing.T) {
	lim := func(v claims.Versions, cni string) claims.Limitation {
		return claims.Limitation{Statement: "s", Era: "e", Why: "because", Holds: v, CNI: cni}
	}
	cases := []struct {
		name    string
		l       claims.Limitation
		cluster Cluster
		want    Behaviour
	}{
		{"no bounds", lim(claims.Versions{}, ""), Cluster{Server: "v1.2.3"}, Limited},
		{"no bounds, no version", lim(claims.Versions{}, ""), Cluster{}, Limited},
		{"since, older", lim(claims.Versions{Since: "1.20.0"}, ""), Cluster{Server: "v1.19.9"}, Works},
		{"since, equal", lim(claims.Versions{Since: "1.20.0"}, ""), Cluster{Server: "v1.20.0"}, Limited},
		{"since, newer", lim(claims.Versions{Since: "1.20"}, ""), Cluster{Server: "v1.30.0"}, Limited},
		{"until, older", lim(claims.Versions{Until: "1.20.0"}, ""), Cluster{Server: "v1.19.9"}, Limited},
		{"until, equal (exclusive)", lim(claims.Versions{Until: "1.20"}, ""), Cluster{Server: "v1.20.0"}, Works},
		{"window, inside", lim(claims.Versions{Since: "1.20", Until: "1.30"}, ""), Cluster{Server: "v1.25.3"}, Limited},
		{"window, after", lim(claims.Versions{Since: "1.20", Until: "1.30"}, ""), Cluster{Server: "v1.30.0"}, Works},
		{"build metadata", lim(claims.Versions{Until: "1.14"}, ""), Cluster{Server: "v1.13.5+k3s1"}, Limited},
		{"unparseable keeps the documents", lim(claims.Versions{Since: "1.20", Until: "1.30"}, ""), Cluster{Server: "main"}, Limited},
		{"never", lim(claims.Versions{Never: true}, ""), Cluster{Server: "v1.9.0"}, Works},
		{"cni matches", lim(claims.Versions{}, "flannel/host-gw"), Cluster{CNI: "flannel/host-gw"}, Limited},
		{"cni differs", lim(claims.Versions{}, "flannel/host-gw"), Cluster{CNI: "flannel/vxlan"}, Works},
		{"cni differs, version unknown", lim(claims.Versions{Until: "1.14"}, "flannel/host-gw"), Cluster{CNI: "calico", Server: "main"}, Works},
	}
	for _, c := range cases {
		got, why := ExpectOf(c.l, c.cluster)
		if got != c.want || why == "" {
			t.Errorf("%s: %s (%q), want %s with a reason", c.name, got, why, c.want)
		}
	}
}

// Expectations from the catalogue, as the suites and the matrix use them.
func TestExpectFromTheCatalogue(t *testing.T) {
	v137 := Cluster{Server: "v1.37.2", CNI: "flannel/vxlan"}
	v19 := Cluster{Server: "v1.9.3", CNI: "flannel/host-gw"}
	cases := []struct {
		id      string
		cluster Cluster
		want    Behaviour
	}{
		{"CFG-03", v137, Works}, {"CFG-03", v19, Limited},
		{"LIM-05", v137, Works}, {"LIM-05", v19, Limited},
		{"LIM-01", v137, Limited}, {"LIM-07", v137, Limited},
		{"NET-17", v19, Limited}, {"NET-17", v137, Works}, {"NET-17", Cluster{Server: "v1.9.3", CNI: "flannel/vxlan"}, Works},
		{"NET-21", v137, Limited}, {"SCH-02", v137, Works}, {"LIM-11", v137, Works},
		{"NOPE-01", v137, Limited},
	}
	for _, c := range cases {
		if got, why := Expect(c.id, c.cluster); got != c.want {
			t.Errorf("%s on %+v: %s (%s), want %s", c.id, c.cluster, got, why, c.want)
		}
	}
}

func TestNewFillsTheEntryFromTheCatalogue(t *testing.T) {
	e := New("CFG-03", Cluster{Server: "v1.37.2"})
	if e.Claim != "CFG-03" || e.Server != "v1.37.2" || e.Era != "Kubernetes 1.9" || e.Expected != Works ||
		!strings.Contains(e.Limitation, "Secrets cannot be mounted") || !strings.Contains(e.Document, "seed 000") || !strings.Contains(e.Why, "1.14") {
		t.Errorf("New = %+v", e)
	}
}

// An observation below the claim's level (a Linux twin of a Windows
// limitation) decides nothing: no lift, no drift.
func TestDecideBelowTheClaimsLevel(t *testing.T) {
	e := Entry{Expected: Limited, Observed: Works, Below: "linux twin"}
	e.Decide()
	if e.Verdict != Inconclusive || e.Unexpected {
		t.Errorf("a twin's lift: verdict %s unexpected %v, want inconclusive", e.Verdict, e.Unexpected)
	}
}
