package kubelet

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const mi = int64(1) << 20

func memPod(phase corev1.PodPhase, overhead string, requests ...string) corev1.Pod {
	p := corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
	for _, r := range requests {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(r)}}})
	}
	if overhead != "" {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(overhead)}
	}
	return p
}

// What the scheduler counts against a node's allocatable memory: every pod
// not yet finished, its containers' requests and its overhead (KEP-688,
// which upstream's Windows specs subtract from 1.37, test/e2e/windows
// utils.go sumExistingPodMemoryReservation).
func TestReservedMemory(t *testing.T) {
	pods := []corev1.Pod{
		memPod(corev1.PodRunning, "", "100Mi", "50Mi"),
		memPod(corev1.PodPending, "400Mi", "10Mi"),
		memPod(corev1.PodRunning, "120Mi"),                         // a pause pod under a RuntimeClass with overhead
		memPod(corev1.PodSucceeded, "400Mi", "1Gi"),                // done: no longer counted
		memPod(corev1.PodFailed, "", "1Gi"),                        // done: no longer counted
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{}}}}, // no requests
	}
	if got, want := ReservedMemory(pods), (100+50+400+10+120)*mi; got != want {
		t.Errorf("ReservedMemory = %d MiB, want %d MiB", got/mi, want/mi)
	}
}

// Upstream's kubelet stats spec (test/e2e/windows/kubelet_stats.go, 1.37):
// ten pods, or as many as fit when the cluster adds a per-pod memory
// overhead, with 256 MiB kept free; fewer than three is a cluster too small.
func TestRoom(t *testing.T) {
	cases := []struct {
		name                          string
		allocatable, reserved, perPod int64
		want                          int
		err                           string
	}{
		{"no overhead: ten", 4096 * mi, 4000 * mi, 0, 10, ""},
		{"room for more than ten", 8192 * mi, 1024 * mi, 200 * mi, 10, ""},
		{"room for six", 2048 * mi, 512 * mi, 200 * mi, 6, ""}, // (2048-512-256)/200 = 6.4
		{"room for exactly three", (3*300 + 256 + 100) * mi, 100 * mi, 300 * mi, 3, ""},
		{"room for two", (2*300 + 256 + 100) * mi, 100 * mi, 300 * mi, 0, "room for 2 pods"},
		{"nothing free", 1024 * mi, 1024 * mi, 100 * mi, 0, "room for 0 pods"},
	}
	for _, c := range cases {
		got, err := Room(10, 3, c.allocatable, c.reserved, c.perPod)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: Room = %d, %v; want %d", c.name, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: Room = %d, %v; want an error saying %q", c.name, got, err, c.err)
			continue
		}
		for _, fig := range []string{"allocatable", "reserved", "per pod", "256Mi"} {
			if !strings.Contains(err.Error(), fig) {
				t.Errorf("%s: the error does not name %s: %v", c.name, fig, err)
			}
		}
	}
}
