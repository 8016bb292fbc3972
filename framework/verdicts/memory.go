package verdicts

import "fmt"

// MemoryFill is what a spec saw when it wrote into an emptyDir of medium
// Memory (VOL-05): whether the pod started, and its working set in the
// kubelet's summary before and after the write.
type MemoryFill struct {
	// Start is why the pod did not start; nil when it ran.
	Start   error
	Mount   string
	FillMiB uint64
	// Before and After are the pod's working set, in bytes.
	Before, After uint64
	// ReadErr is why the last reading of the working set after the write
	// failed (After is then not a reading).
	ReadErr error
}

// MemoryMedium decides whether the volume is memory-backed: writing into
// it raised the pod's working set by about what was written (Works), or
// did not raise it at all (Limited: a directory on the node's disk). Only
// that measurement decides: a pod that never started, or a reading that
// failed, is Unobserved.
func MemoryMedium(m MemoryFill) Observation {
	if m.Start != nil {
		return Unobserved("the pod with a memory-backed emptyDir did not start, so nothing was measured: %v", m.Start)
	}
	if m.ReadErr != nil {
		return Unobserved("after writing %d MiB into %s, the pod's working set could not be read: %v", m.FillMiB, m.Mount, m.ReadErr)
	}
	grew := int64(m.After) - int64(m.Before)
	detail := fmt.Sprintf("writing %d MiB into %s moved the pod's working set from %d MiB to %d MiB (%+d MiB) in the kubelet's summary",
		m.FillMiB, m.Mount, m.Before>>20, m.After>>20, grew>>20)
	switch {
	case grew >= int64(m.FillMiB*3/4<<20):
		return Works("%s: the volume is memory-backed", detail)
	case grew < int64(m.FillMiB/4<<20):
		return Limited("%s: the volume is not memory-backed (a directory on the node's disk)", detail)
	}
	return Unobserved("%s: neither memory-backed nor clearly not", detail)
}
