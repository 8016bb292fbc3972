package config

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/labels"
)

const (
	linux   = labels.Linux
	windows = labels.Windows
)

// mountPath is where the first container of p mounts volume.
func mountPath(p *corev1.Pod, volume string) string {
	m, err := fixtures.MountPath(p, "", volume)
	framework.ExpectNoError(err)
	return m
}
