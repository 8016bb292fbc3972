package verdicts

import (
	"testing"
	"time"
)

// NODE-01 orders the pods by when their containers ended, as the kubelet
// reported; a pod that reported no end (a zero time) cannot be ordered,
// and must not pass for ordered.
func TestShutdownOrderNeedsTheEndTimes(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	good := []EndedPod{
		{"period-20", false, at(0), at(0)}, {"period-25", false, at(1), at(1)},
		{"critical-5", true, at(22), at(21)}, {"critical-10", true, at(24), at(23)},
	}
	if err := ShutdownOrder(good, 30*time.Second, 10*time.Second); err != nil {
		t.Errorf("in order: %v", err)
	}
	zero := append([]EndedPod(nil), good...)
	zero[3].Finished = time.Time{}
	if err := ShutdownOrder(zero, 30*time.Second, 10*time.Second); err == nil {
		t.Error("critical-10 reported no end time: no error")
	}
	late := append([]EndedPod(nil), good...)
	late[1].Finished = at(23)
	if err := ShutdownOrder(late, 30*time.Second, 10*time.Second); err == nil {
		t.Error("period-25's container ended after critical-5's: no error")
	}
	if err := ShutdownOrder(good, 10*time.Second, 5*time.Second); err == nil {
		t.Error("24 s of ends within a 10 s grace period: no error")
	}
}
