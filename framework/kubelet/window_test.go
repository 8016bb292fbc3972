package kubelet

import (
	"testing"
	"time"
)

// reads feeds w one read a second from at, each giving the sample stamped
// stamps[i] (zero: no sample), and returns the index of the first sample
// that covers a known window, or -1.
func reads(w *RateWindow, at time.Time, stamps []time.Time) int {
	for i, t := range stamps {
		w.Read(at.Add(time.Duration(i) * time.Second))
		if !t.IsZero() && w.Sample(t) {
			return i
		}
	}
	return -1
}

func TestRateWindow(t *testing.T) {
	start := time.Date(2026, 11, 25, 19, 8, 15, 0, time.UTC) // the container's start, whole seconds
	sec := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	repeat := func(t time.Time, n int) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = t
		}
		return out
	}
	cat := func(parts ...[]time.Time) []time.Time {
		var out []time.Time
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	// cAdvisor's samples of a pod, as read from a kind node: one when the
	// cgroup appeared, a second earlier than the container's start, then 11
	// and 14 s apart. The second's window began before the start; the third
	// is the first that counts.
	cadvisor := cat(repeat(sec(-1), 10), repeat(sec(10), 14), repeat(sec(24), 3))
	w := &RateWindow{Start: start, Min: 5 * time.Second}
	if i := reads(w, start, cadvisor); i != 24 {
		t.Errorf("cAdvisor's samples: the window counted at read %d, want 24 (the third sample); seen %v", i, w.Seen())
	}

	// A sample in the container's first second is not after it.
	w = &RateWindow{Start: start, Min: 5 * time.Second}
	if i := reads(w, start, cat(repeat(sec(0), 10), repeat(sec(10), 3))); i != -1 {
		t.Errorf("a window from the start's own second counted at read %d", i)
	}

	// The runtime's figures, stamped with each request: a second apart,
	// never a window of 5 s.
	w = &RateWindow{Start: start, Min: 5 * time.Second}
	var live []time.Time
	for i := 1; i <= 30; i++ {
		live = append(live, sec(i))
	}
	if i := reads(w, start, live); i != -1 {
		t.Errorf("samples a second apart counted at read %d as a window of 5 s or more", i)
	}

	// Reads that stop for longer than Min/2 may have missed a sample: the
	// next one does not count, the one after does.
	w = &RateWindow{Start: start, Min: 5 * time.Second}
	w.Read(sec(1))
	w.Sample(sec(1))
	w.Read(sec(12))
	if w.Sample(sec(12)) {
		t.Error("a sample after a 11 s pause in the reads counted: one may have come between unseen")
	}
	w.Read(sec(13))
	w.Read(sec(14))
	w.Read(sec(15))
	w.Read(sec(16))
	w.Read(sec(17))
	if !w.Sample(sec(17)) {
		t.Errorf("a sample 5 s after the one before, read every second, did not count; seen %v", w.Seen())
	}
}
