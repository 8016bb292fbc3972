package verdicts

import (
	"fmt"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// PodFigures lists what is missing from a pod's figures in the kubelet's
// summary (OBS-04): live CPU and memory figures for the pod, and the bytes
// of each of its containers' logs (every container of the spec's pods
// writes a line when it starts). None when every figure is there.
func PodFigures(ps statsv1alpha1.PodStats) []string {
	what := "pod " + ps.PodRef.Name
	var out []string
	switch {
	case ps.CPU == nil:
		out = append(out, what+" has no CPU figures")
	case !positive(ps.CPU.UsageCoreNanoSeconds):
		out = append(out, fmt.Sprintf("%s: usageCoreNanoSeconds %s", what, val(ps.CPU.UsageCoreNanoSeconds)))
	}
	switch {
	case ps.Memory == nil:
		out = append(out, what+" has no memory figures")
	case !positive(ps.Memory.WorkingSetBytes):
		out = append(out, fmt.Sprintf("%s: workingSetBytes %s", what, val(ps.Memory.WorkingSetBytes)))
	}
	if len(ps.Containers) == 0 {
		out = append(out, what+" has no container figures")
	}
	for _, c := range ps.Containers {
		switch {
		case c.Logs == nil:
			out = append(out, fmt.Sprintf("%s, container %s has no log figures", what, c.Name))
		case !positive(c.Logs.UsedBytes):
			// The bytes of the container's log files; AvailableBytes is
			// the free space of their file system, and says nothing of them.
			out = append(out, fmt.Sprintf("%s, container %s: logs usedBytes %s", what, c.Name, val(c.Logs.UsedBytes)))
		}
	}
	return out
}

func positive(v *uint64) bool { return v != nil && *v > 0 }

func val(v *uint64) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}
