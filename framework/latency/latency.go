// Package latency summarizes a batch of measured durations (pod start-up
// latencies, say) by percentiles, as the upstream density specs report them.
package latency

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds: the
// smallest value at least p% of ds are less than or equal to; 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 || p <= 0 || p > 100 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// Summary is a batch's percentiles.
type Summary struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

// Summarize computes a batch's percentiles.
func Summarize(ds []time.Duration) Summary {
	return Summary{N: len(ds), P50: Percentile(ds, 50), P90: Percentile(ds, 90), P99: Percentile(ds, 99), Max: Percentile(ds, 100)}
}

// Limits are the most each percentile may be.
type Limits struct {
	P50, P90, P99 time.Duration
}

// Exceeded lists the percentiles of s above their limit, in words; none
// when s is within l.
func (s Summary) Exceeded(l Limits) []string {
	var out []string
	for _, c := range []struct {
		name       string
		got, limit time.Duration
	}{{"p50", s.P50, l.P50}, {"p90", s.P90, l.P90}, {"p99", s.P99, l.P99}} {
		if c.got > c.limit {
			out = append(out, fmt.Sprintf("%s %s > %s", c.name, c.got, c.limit))
		}
	}
	return out
}

func (s Summary) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("%d samples: p50 %s, p90 %s, p99 %s, max %s", s.N, r(s.P50), r(s.P90), r(s.P99), r(s.Max))
}
