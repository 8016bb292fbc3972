package kubelet

import "time"

// RateWindow follows the samples of a rate in a node's kubelet summary
// (a pod's CPU usageNanoCores, a rate over the time since the stats sample
// before it) as a spec reads them, and says when one covers a window it
// knows: one that began with a sample it saw, taken after Start, at least
// Min earlier, with reads no more than Min/2 apart in between, so that no
// sample came between unseen.
//
// On Linux a pod's figures are cAdvisor's samples of its cgroup, 10 to 20 s
// apart by default, 2 to 4 s on the nodes winconform makes; until cAdvisor has found the cgroup, the kubelet sums its
// containers' figures from the runtime instead, stamped with the time of
// the request, whose rate can cover a fraction of a second (and so exceed
// a CPU limit by the share of one CFS period). Those come a read apart and
// never make a window of Min. Summary times are whole seconds: a sample is
// after Start when its second is later than Start's.
type RateWindow struct {
	Start time.Time
	Min   time.Duration

	seen []time.Time
	read time.Time
	late bool // a read came more than Min/2 after the one before, since the last sample
}

// Read records a read of the summary at now, whether or not it gave a
// sample.
func (w *RateWindow) Read(now time.Time) {
	if !w.read.IsZero() && now.Sub(w.read) > w.Min/2 {
		w.late = true
	}
	w.read = now
}

// Sample records a sample stamped t, given by the latest Read, and says
// whether its rate covers a known window: at least Min long, after Start.
func (w *RateWindow) Sample(t time.Time) bool {
	if n := len(w.seen); n > 0 && !t.After(w.seen[n-1]) {
		return false // the sample already seen
	}
	w.seen = append(w.seen, t)
	late := w.late
	w.late = false
	if len(w.seen) < 2 || late {
		return false
	}
	prev := w.seen[len(w.seen)-2]
	return prev.After(w.Start) && t.Sub(prev) >= w.Min
}

// Seen lists the distinct samples recorded, oldest first.
func (w *RateWindow) Seen() []time.Time { return w.seen }
