package storage

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
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

// hostDir is a directory on a node that specs mount with hostPath volumes:
// the emptyDir of a pod (fixtures.HostDirPod), which the kubelet deletes
// with the pod, and so with the spec's namespace, also when the spec fails
// or the run is interrupted. Nothing is left on the node.
type hostDir struct {
	pod   *corev1.Pod // the pod whose emptyDir it is: it sees the node's files
	path  string      // the directory on the node
	mount string      // where pod sees it
}

func startHostDir(ctx context.Context, f *framework.Framework, t fixtures.Target, node facts.Node) hostDir {
	p, err := fixtures.HostDirPod(t, "host-dir")
	framework.ExpectNoError(err)
	ospod.OnNode(node)(p)
	pod := e2e.Start(ctx, f, p)
	h := hostDir{pod: pod, path: fixtures.KubeletVolumeDir(t.OS, pod.UID, fixtures.HostDirVolumeName), mount: mountPath(pod, fixtures.HostDirVolumeName)}
	framework.Logf("host directory %s on node %s (the emptyDir of pod %s, deleted with it)", h.path, node.Name, pod.Name)
	return h
}

// file is the path of name in the host directory, as its pod sees it.
func (h hostDir) file(name string) string { return fixtures.Join(h.mount, name) }
