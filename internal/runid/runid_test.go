package runid_test

import (
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/internal/runid"
)

func TestBeginMakesOneThatPassesCheckAndIsMade(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		id, err := runid.Begin("")
		if err != nil {
			t.Fatal(err)
		}
		if err := runid.Check(id); err != nil || !runid.Made(id) || len(id) != runid.Max {
			t.Fatalf("Begin(\"\") = %q: check %v, made %t, %d characters", id, err, runid.Made(id), len(id))
		}
		seen[id] = true
	}
	if len(seen) < 150 {
		t.Errorf("200 run IDs, %d distinct", len(seen))
	}
	if got := runid.At(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 0xab); got != "wc-260301120000-00ab" {
		t.Errorf("At = %q", got)
	}
}

func TestBeginTakesAGivenIDOrRefusesIt(t *testing.T) {
	if id, err := runid.Begin("nightly-42"); id != "nightly-42" || err != nil {
		t.Errorf("Begin(nightly-42) = %q, %v", id, err)
	}
	if id, err := runid.Begin("Nightly_42"); id != "" || err == nil || !strings.Contains(err.Error(), "such as nightly-42") {
		t.Errorf("Begin(Nightly_42) = %q, %v: want the refusal with its fix", id, err)
	}
}

func TestCheck(t *testing.T) {
	for _, good := range []string{"a", "nightly-42", "ci-1234567", strings.Repeat("a", runid.Max), "0"} {
		if err := runid.Check(good); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
	for _, bad := range []string{"", "Wc-1", "wc_1", "-wc", "wc-", "a.b", "a b", "é", strings.Repeat("a", runid.Max+1),
		"0b7e4d6a-7d1c-4c55-9a3f-3f1c5c1a0a77", "wc-20260301t120000-0000000a"} {
		err := runid.Check(bad)
		if err == nil || !strings.Contains(err.Error(), "such as nightly-42") {
			t.Errorf("%q: %v, want a refusal naming the rule", bad, err)
		}
	}
}

func TestMade(t *testing.T) {
	for id, want := range map[string]bool{
		"wc-260301120000-00ab":                 true,
		"wc-20260301t120000-0000000a":          true, // an earlier version's
		"nightly-42":                           false,
		"0b7e4d6a-7d1c-4c55-9a3f-3f1c5c1a0a77": false,
		"wc-260301120000-00ABx":                false,
	} {
		if got := runid.Made(id); got != want {
			t.Errorf("Made(%q) = %t", id, got)
		}
	}
}
