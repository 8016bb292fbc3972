package windows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrDiskSpace: the machine's system drive has too little free space for a
// node.
var ErrDiskSpace = errors.New("too little free disk space")

// minFreePercent is the free share of the system drive a node needs: the
// kubelet on Windows evicts pods and garbage-collects images below 15% free
// on its image file system (imagefs.available<15%, nodefs.available<10%:
// k8s.io/kubernetes pkg/kubelet/eviction/defaults_windows.go), which on a
// Windows node is C:, where containerd keeps its images.
const minFreePercent = 15

// pendingReboot lists what preflight says makes a reboot pending.
func pendingReboot(st status) []string {
	var out []string
	list, _ := st.fields["pendingReboot"].([]any)
	for _, v := range list {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// settlePendingReboot reboots a machine on which Windows has a reboot
// pending (an update or feature installed, files to replace at the next
// boot), before anything is installed: an install on such a machine may ask
// for the same reboot, or fail until it is done. Preflight runs again after
// it, and a reboot still pending fails the join.
func (j *joinRun) settlePendingReboot(ctx context.Context, s step, sr *StepReport, st status) (status, error) {
	reasons := pendingReboot(st)
	if len(reasons) == 0 {
		return st, nil
	}
	j.logf("%s: a reboot is pending (%s)", StepPreflight, strings.Join(reasons, ", "))
	if err := j.reboot(ctx, StepPreflight); err != nil {
		return st, err
	}
	sr.Rebooted = true
	st, err := j.runPreflight(ctx, s, sr)
	if err == nil {
		err = j.checkPreflight(st)
	}
	if err == nil {
		if still := pendingReboot(st); len(still) > 0 {
			err = &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: ErrNotSettled,
				Detail: fmt.Sprintf("after a reboot, a reboot is still pending (%s): finish what asks for it on the machine (Windows Update, a feature install) and reboot it", strings.Join(still, ", "))}
		}
	}
	return st, err
}

// checkDisk fails when the system drive has less free space than a node
// needs (minFreePercent).
func (j *joinRun) checkDisk(st status) error {
	free, ferr := strconv.ParseInt(st.str("freeBytes"), 10, 64)
	size, serr := strconv.ParseInt(st.str("sizeBytes"), 10, 64)
	if ferr != nil || serr != nil || size <= 0 {
		return &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: ErrBadStatus,
			Detail: fmt.Sprintf("the machine reported no usable free and total bytes of its system drive (freeBytes %q, sizeBytes %q)", st.str("freeBytes"), st.str("sizeBytes"))}
	}
	if free*100 < size*minFreePercent {
		const gib = 1 << 30
		return &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: ErrDiskSpace,
			Detail: fmt.Sprintf("the system drive has %.1f GiB free of %.1f GiB (%d%%): a Windows node needs at least %d%% free, below which the kubelet evicts pods and removes images (imagefs.available<15%%); free some space or grow the disk",
				float64(free)/gib, float64(size)/gib, free*100/size, minFreePercent)}
	}
	return nil
}
