package ledger

import "testing"

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		expected, observed Behaviour
		verdict            Verdict
		unexpected         bool
	}{
		{Limited, Limited, Holds, false},
		{Works, Works, Lifted, false},     // lifted by this version, as expected
		{Limited, Works, Lifted, true},    // drift the version does not explain
		{Works, Limited, Regressed, true}, // should work here, does not
	} {
		e := Entry{Expected: tc.expected, Observed: tc.observed}
		e.Decide()
		if e.Verdict != tc.verdict || e.Unexpected != tc.unexpected {
			t.Errorf("expected %s, observed %s: verdict %s unexpected %v, want %s %v", tc.expected, tc.observed, e.Verdict, e.Unexpected, tc.verdict, tc.unexpected)
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
