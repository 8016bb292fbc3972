package kubelet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// SafetyBuffer is the memory upstream's Windows specs keep free on a node
// above what its pods reserve when they size a load to the node (256 MiB,
// windowsTestMemorySafetyBuffer in test/e2e/windows/utils.go, from 1.37):
// headroom for the kubelet's memory accounting.
const SafetyBuffer = 256 << 20

// PodMemory is the memory the scheduler counts for pod: its requests
// (containers, init containers, pod-level) and its overhead, as
// k8s.io/component-helpers computes them for the scheduler.
func PodMemory(pod *corev1.Pod) int64 {
	q := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[corev1.ResourceMemory]
	return q.Value()
}

// ReservedMemory is the memory the pods of a node reserve: PodMemory of
// each pod not yet Succeeded or Failed.
func ReservedMemory(pods []corev1.Pod) int64 {
	var total int64
	for i := range pods {
		if p := pods[i].Status.Phase; p == corev1.PodSucceeded || p == corev1.PodFailed {
			continue
		}
		total += PodMemory(&pods[i])
	}
	return total
}

// Room says how many pods, each reserving perPod bytes of memory, to put
// on a node with allocatable bytes of which reserved are taken, keeping
// SafetyBuffer free: want, or fewer when fewer fit; an error naming the
// figures when fewer than least fit. Pods that reserve nothing always fit.
func Room(want, least int, allocatable, reserved, perPod int64) (int, error) {
	if perPod <= 0 {
		return want, nil
	}
	free := allocatable - reserved - SafetyBuffer
	fit := max(free/perPod, 0)
	if fit < int64(least) {
		return 0, fmt.Errorf("the node has room for %d pods, fewer than %d: allocatable %s, reserved %s by its pods, %s per pod, %s kept free",
			fit, least, binary(allocatable), binary(reserved), binary(perPod), binary(SafetyBuffer))
	}
	return int(min(fit, int64(want))), nil
}

func binary(b int64) string { return resource.NewQuantity(b, resource.BinarySI).String() }
