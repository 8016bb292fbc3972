package verdicts

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// EndedPod is a pod the kubelet ended for a node shutdown (NODE-01): when
// the spec saw it ended, and when its container ended, as the kubelet
// reported (zero when it reported no end).
type EndedPod struct {
	Name     string
	Critical bool
	Seen     time.Time
	Finished time.Time
}

// ShutdownOrder checks a graceful node shutdown: every non-critical pod
// ended before every critical one, as seen and by its container's end, and
// all within the node's grace period (grace, with slack for the reports).
// Every pod must have reported when its container ended: a zero time
// orders nothing. The error names what broke the order, with the timeline.
func ShutdownOrder(pods []EndedPod, grace, slack time.Duration) error {
	if len(pods) == 0 {
		return fmt.Errorf("no pod was ended by the shutdown")
	}
	var noEnd []string
	for _, p := range pods {
		if p.Seen.IsZero() || p.Finished.IsZero() {
			noEnd = append(noEnd, p.Name)
		}
	}
	if len(noEnd) > 0 {
		sort.Strings(noEnd)
		return fmt.Errorf("the kubelet reported no end time for the container of %s: the order of the ends cannot be checked", strings.Join(noEnd, ", "))
	}
	order := append([]EndedPod(nil), pods...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Seen.Before(order[j].Seen) })
	first := order[0].Seen
	var timeline []string
	for _, p := range order {
		timeline = append(timeline, fmt.Sprintf("%s (critical %v) +%s, container ended %s", p.Name, p.Critical, p.Seen.Sub(first).Round(time.Second), p.Finished.Format(time.TimeOnly)))
	}
	tl := strings.Join(timeline, "; ")
	for _, a := range order {
		for _, b := range order {
			if a.Critical || !b.Critical {
				continue
			}
			if a.Seen.After(b.Seen) {
				return fmt.Errorf("non-critical pod %s was seen ended after critical pod %s: %s", a.Name, b.Name, tl)
			}
			if a.Finished.After(b.Finished) {
				return fmt.Errorf("the container of non-critical pod %s ended at %s, after that of critical pod %s at %s", a.Name, a.Finished, b.Name, b.Finished)
			}
		}
	}
	if took := order[len(order)-1].Seen.Sub(first); took > grace+slack {
		return fmt.Errorf("the pods took %s to end, longer than the shutdown grace period %s: %s", took, grace, tl)
	}
	return nil
}
