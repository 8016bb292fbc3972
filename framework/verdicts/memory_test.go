package verdicts

import (
	"errors"
	"testing"

	"github.com/winconform/winconform/framework/ledger"
)

// VOL-05 is decided by a measurement on a running pod: writing 64 MiB into
// the volume raises the pod's working set in the kubelet's summary by
// about that much (memory-backed, as a Linux tmpfs) or not at all (on
// Windows the kubelet makes the volume a directory on the node's disk: the
// catalogue's VOL-05, kubernetes.io's Windows storage page). A pod that
// never started, or a reading of the working set that failed, shows
// neither: nothing was measured.
func TestMemoryMediumDecidedByAMeasurement(t *testing.T) {
	const mib = 1 << 20
	fill := func(before, after uint64, readErr error) MemoryFill {
		return MemoryFill{Mount: `C:\cache`, FillMiB: 64, Before: before * mib, After: after * mib, ReadErr: readErr}
	}
	timeout := errors.New("pod memory did not turn Ready (phase Pending): timed out waiting for the condition")
	want(t, "a pod that never started", MemoryMedium(MemoryFill{Start: timeout}), ledger.Unobserved, "did not start")
	want(t, "the working set could not be read after the write",
		MemoryMedium(fill(40, 0, errors.New(`pod memory has no memory figures in the summary of node win-1: context deadline exceeded`))), ledger.Unobserved, "could not be read")
	want(t, "the working set grew by what was written", MemoryMedium(fill(40, 104, nil)), ledger.Works, "memory-backed")
	want(t, "the working set did not move", MemoryMedium(fill(40, 41, nil)), ledger.Limited, "not memory-backed")
	want(t, "the working set grew by a third of it", MemoryMedium(fill(40, 61, nil)), ledger.Unobserved, "neither")
}
