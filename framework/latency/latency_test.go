package latency

import (
	"strings"
	"testing"
	"time"
)

func secs(ns ...int) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n) * time.Second
	}
	return out
}

func TestPercentile(t *testing.T) {
	ten := secs(10, 1, 9, 2, 8, 3, 7, 4, 6, 5) // 1..10, shuffled
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 5 * time.Second}, {90, 9 * time.Second}, {99, 10 * time.Second}, {100, 10 * time.Second}, {1, time.Second}, {10, time.Second}, {11, 2 * time.Second}} {
		if got := Percentile(ten, c.p); got != c.want {
			t.Errorf("p%v of 1..10 s = %s, want %s", c.p, got, c.want)
		}
	}
	if ten[0] != 10*time.Second {
		t.Error("Percentile sorted its argument in place")
	}
	for _, c := range []struct {
		ds []time.Duration
		p  float64
	}{{nil, 50}, {ten, 0}, {ten, 101}, {ten, -5}} {
		if got := Percentile(c.ds, c.p); got != 0 {
			t.Errorf("Percentile(%v, %v) = %s, want 0", c.ds, c.p, got)
		}
	}
	if got := Percentile(secs(7), 50); got != 7*time.Second {
		t.Errorf("one sample: %s", got)
	}
}

func TestSummaryExceeded(t *testing.T) {
	limits := Limits{P50: 30 * time.Second, P90: 54 * time.Second, P99: 59 * time.Second}
	ok := Summarize(secs(3, 4, 5, 6, 7, 8, 9, 10, 11, 12))
	if e := ok.Exceeded(limits); len(e) != 0 {
		t.Errorf("within limits, yet %v", e)
	}
	// One straggler among ten is the p99 (and the p100), not the p90.
	slow := Summarize(secs(3, 4, 5, 6, 7, 8, 9, 10, 11, 60))
	e := slow.Exceeded(limits)
	if len(e) != 1 || !strings.HasPrefix(e[0], "p99 1m0s > 59s") {
		t.Errorf("one straggler: %v (%s)", e, slow)
	}
	all := Summarize(secs(31, 55, 60, 61, 62, 63, 64, 65, 66, 67))
	if e := all.Exceeded(limits); len(e) != 3 {
		t.Errorf("all slow: %v (%s)", e, all)
	}
	if s := ok.String(); !strings.Contains(s, "10 samples: p50 7s, p90 11s, p99 12s, max 12s") {
		t.Errorf("String() = %q", s)
	}
}
