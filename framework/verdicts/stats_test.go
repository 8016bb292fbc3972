package verdicts

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func u(v uint64) *uint64 { return &v }

// OBS-04 wants the log bytes of each container: on Windows the kubelet
// fills a container's Logs.UsedBytes with the size of its log files, and
// AvailableBytes with the free space of the file system they are on
// (kubernetes pkg/kubelet/stats, cri_stats_provider_windows.go and
// host_stats_provider.go at v1.37.2). Free space says nothing of the logs.
func TestPodFiguresWantLogBytes(t *testing.T) {
	ps := statsv1alpha1.PodStats{
		PodRef: statsv1alpha1.PodReference{Name: "stats-0"},
		CPU:    &statsv1alpha1.CPUStats{Time: metav1.Now(), UsageCoreNanoSeconds: u(1e9)},
		Memory: &statsv1alpha1.MemoryStats{Time: metav1.Now(), WorkingSetBytes: u(30 << 20)},
		Containers: []statsv1alpha1.ContainerStats{{Name: "probe",
			Logs: &statsv1alpha1.FsStats{AvailableBytes: u(80 << 30), CapacityBytes: u(127 << 30), UsedBytes: u(0)}}},
	}
	got := PodFigures(ps)
	if len(got) != 1 || !strings.Contains(got[0], "usedBytes") {
		t.Errorf("a container with no log bytes on a roomy disk: %q, want its usedBytes named", got)
	}
	ps.Containers[0].Logs.UsedBytes = u(213)
	if got := PodFigures(ps); len(got) != 0 {
		t.Errorf("every figure there: %q", got)
	}
}
