package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
)

// What the upstream Windows specs (test/e2e/windows: volumes.go,
// subpath_cleanup.go, read at v1.37.2) check of volumes. VOL-09 is
// subpath_cleanup.go's spec, new in 1.37, mount for mount (the same
// ConfigMap, Secret, projected and downward API subPaths, the nested
// hostPaths mounted out of order, two disk and two memory emptyDirs, a
// 30 s grace period and 5 minutes for the pod to be gone); ours also reads
// every subPath back and writes through the innermost hostPath. The
// Kubernetes storage page still lists subPath mounts (of Secrets too) among
// what Windows nodes do not support; upstream has checked them since 1.37.

// What a write into a read-only mount fails with, per OS.
var readOnlyError = map[string]string{
	windows: "Access is denied.",
	linux:   "read-only file system",
}

// subPathTeardown bounds the deletion of a pod with many subPath mounts
// (upstream: 5 minutes, with a 30 s grace period).
const (
	subPathTeardown    = 5 * time.Minute
	subPathGracePeriod = 30
)

// osPath is a path on os from its parts: C:\a\b on Windows, /a/b on Linux.
func osPath(os string, parts ...string) string {
	if os == windows {
		return `C:\` + strings.Join(parts, `\`)
	}
	return "/" + strings.Join(parts, "/")
}

// withReadOnlyTwin adds to p a second container, "ro", that mounts the
// volume the first ("rw") mounts at the same path, read-only, and serves
// on other ports.
func withReadOnlyTwin(p *corev1.Pod, os, volume, path string) {
	rw := &p.Spec.Containers[0]
	rw.Name = "rw"
	rw.VolumeMounts = append(rw.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: path})
	ro := *rw.DeepCopy()
	ro.Name = "ro"
	ro.Command = ospod.ProbeCommand(os, "serve", "--name", "ro", "--http-port", "9090", "--tcp-port", "0", "--udp-port", "0")
	ro.Ports = nil
	ro.ReadinessProbe.HTTPGet.Port = intstr.FromInt32(9090)
	ro.VolumeMounts = []corev1.VolumeMount{{Name: volume, MountPath: path, ReadOnly: true}}
	p.Spec.Containers = append(p.Spec.Containers, ro)
}

var _ = ginkgo.Describe("volumes (upstream Windows specs)", labels.Suite("storage"), func() {
	f := e2e.NewFramework("storage-upstream")
	// hostPath volumes are refused below the privileged pod security level.
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.DescribeTable("a read-only emptyDir or hostPath mount refuses writes while a read-write container of the same pod writes", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		host := startHostDir(ctx, f, fixtures.For(node), node)
		mount := osPath(os, "test-volume")
		sources := []struct {
			name   string
			source corev1.VolumeSource
		}{
			{"emptydir", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{"hostpath", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host.path, Type: ptr.To(corev1.HostPathDirectory)}}},
		}
		for _, s := range sources {
			ginkgo.By(fmt.Sprintf("a %s volume at %s, read-write in container rw and read-only in container ro", s.name, mount))
			p := ospod.Probe("ro-"+s.name, os, ospod.OnNode(node))
			p.Spec.Volumes = []corev1.Volume{{Name: "test-volume", VolumeSource: s.source}}
			withReadOnlyTwin(p, os, "test-volume", mount)
			pod := startOnHost(ctx, f, p)
			file := fixtures.Join(mount, "from-rw.txt")
			content := fmt.Sprintf("written by container rw of %s (%s)", pod.Name, s.name)
			e2e.MustTool(ctx, f, pod, "rw", "write", file, content)

			_, stderr, err := e2e.Tool(ctx, f, pod, "ro", "write", fixtures.Join(mount, "from-ro.txt"), "should not land")
			gomega.Expect(err).To(gomega.HaveOccurred(), "container ro wrote into its read-only %s mount", s.name)
			gomega.Expect(e2e.ExitStatus(err)).To(gomega.Equal(1), "the probe did not run to its write error: %v", err)
			gomega.Expect(stderr).To(gomega.HavePrefix("probe write: "))
			gomega.Expect(stderr).To(gomega.ContainSubstring(readOnlyError[os]), "the write into the read-only %s mount failed otherwise than documented", s.name)
			framework.Logf("%s: the write into the read-only mount was refused: %s", s.name, strings.TrimSpace(stderr))

			gomega.Expect(e2e.MustTool(ctx, f, pod, "ro", "cat", file)).To(gomega.Equal(content), "container ro does not read what rw wrote")
			_, stderr, err = e2e.Tool(ctx, f, pod, "rw", "cat", fixtures.Join(mount, "from-ro.txt"))
			gomega.Expect(err).To(gomega.HaveOccurred(), "the refused write landed in the %s volume", s.name)
			gomega.Expect(stderr).To(gomega.ContainSubstring(notFound[os]))
			if s.source.HostPath != nil {
				gomega.Expect(e2e.MustTool(ctx, f, host.pod, "", "cat", host.file("from-rw.txt"))).To(gomega.Equal(content),
					"the write of container rw did not reach the node's directory %s", host.path)
			}
		}
	},
		e2e.OSEntries("VOL-08"),
	)

	ginkgo.DescribeTable("a pod with many subPath mounts is deleted within 5 minutes", func(ctx context.Context, os string) {
		node := e2e.Nodes(e2e.Facts(ctx, f), os, 1)[0]
		cs, ns := f.ClientSet, f.Namespace.Name
		host := startHostDir(ctx, f, fixtures.For(node), node)
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "subpath-config"},
			Data:       map[string]string{"key1": "value1", "key2": "value2", "key3": "value3"},
		}, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		secret, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "subpath-secret"},
			StringData: map[string]string{"secret1": "secretvalue1", "secret2": "secretvalue2"},
		}, metav1.CreateOptions{})
		framework.ExpectNoError(err)

		p := ospod.Probe("subpaths", os, ospod.OnNode(node))
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		dirOrCreate := ptr.To(corev1.HostPathDirectoryOrCreate)
		hostPath := func(name string) corev1.VolumeSource {
			return corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: fixtures.Join(host.path, name), Type: dirOrCreate}}
		}
		memory := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}
		p.Spec.Volumes = []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret.Name}}},
			{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}}},
			}}}},
			{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			}}}},
			{Name: "host-outer", VolumeSource: hostPath("outer")},
			{Name: "host-middle", VolumeSource: hostPath("middle")},
			{Name: "host-inner", VolumeSource: hostPath("inner")},
			{Name: "scratch-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "scratch-2", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "memory-1", VolumeSource: memory},
			{Name: "memory-2", VolumeSource: memory},
		}
		mount := func(volume, subPath string, path ...string) corev1.VolumeMount {
			return corev1.VolumeMount{Name: volume, SubPath: subPath, MountPath: osPath(os, path...)}
		}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
			mount("config", "key1", "etc", "config", "key1"),
			mount("config", "key2", "etc", "config", "key2"),
			mount("config", "key3", "etc", "config", "key3"),
			// Nested hostPaths, the innermost before the one between, so
			// that a mount lands inside one already made.
			mount("host-outer", "", "data"),
			mount("host-inner", "", "data", "nested", "deep"),
			mount("host-middle", "", "data", "nested"),
			mount("scratch-1", "", "scratch", "dir1"),
			mount("scratch-2", "", "scratch", "dir2"),
			mount("memory-1", "", "scratch", "mem1"),
			mount("memory-2", "", "scratch", "mem2"),
			mount("secret", "secret1", "etc", "secret", "secret1"),
			mount("secret", "secret2", "etc", "secret", "secret2"),
			mount("projected", "key1", "etc", "projected", "key1"),
			mount("projected", "secret1", "etc", "projected", "secret1"),
			mount("podinfo", "labels", "etc", "podinfo", "labels"),
			mount("podinfo", "name", "etc", "podinfo", "name"),
		}
		pod := startOnHost(ctx, f, p)
		subPaths := 0
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			if m.SubPath != "" {
				subPaths++
			}
		}
		for path, want := range map[string]string{
			osPath(os, "etc", "config", "key1"):       "value1",
			osPath(os, "etc", "config", "key2"):       "value2",
			osPath(os, "etc", "config", "key3"):       "value3",
			osPath(os, "etc", "secret", "secret1"):    "secretvalue1",
			osPath(os, "etc", "secret", "secret2"):    "secretvalue2",
			osPath(os, "etc", "projected", "key1"):    "value1",
			osPath(os, "etc", "projected", "secret1"): "secretvalue1",
			osPath(os, "etc", "podinfo", "name"):      pod.Name,
			osPath(os, "etc", "podinfo", "labels"):    `app.kubernetes.io/name="subpaths"`,
		} {
			gomega.Expect(e2e.MustTool(ctx, f, pod, "", "cat", path)).To(gomega.Equal(want), "the subPath mount %s", path)
		}
		// A file written through the innermost hostPath lands in its own
		// directory on the node, not in the outer ones'.
		e2e.MustTool(ctx, f, pod, "", "write", osPath(os, "data", "nested", "deep", "written"), "through the inner mount")
		gomega.Expect(e2e.MustTool(ctx, f, host.pod, "", "cat", host.file(fixtures.Join("inner", "written")))).To(gomega.Equal("through the inner mount"))

		// On Windows the claim needs a kubelet with the upstream fix
		// (1.37): an older one is expected to leave the pod Terminating,
		// and the failure says so.
		var known string
		if fix := claims.MustGet("VOL-09").Fix; os == windows && fix != nil {
			n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			framework.ExpectNoError(err)
			if known = fix.Explain(n.Status.NodeInfo.KubeletVersion); known != "" {
				framework.Logf("node %s: %s", node.Name, known)
				known = "; " + known
			}
		}
		ginkgo.By(fmt.Sprintf("deleting pod %s (grace period %ds) and waiting up to %s for it to be gone", pod.Name, subPathGracePeriod, subPathTeardown))
		start := time.Now()
		framework.ExpectNoError(e2e.DeletePod(ctx, cs, pod, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(subPathGracePeriod))}, subPathTeardown),
			"pod %s with %d subPath and %d other mounts was not deleted within %s (stuck Terminating: its volumes were not torn down)%s", pod.Name, subPaths, len(p.Spec.Containers[0].VolumeMounts)-subPaths, subPathTeardown, known)
		framework.Logf("pod %s with %d mounts (%d of them subPaths) on %s node %s was deleted in %s",
			pod.Name, len(p.Spec.Containers[0].VolumeMounts), subPaths, os, node.Name, time.Since(start).Round(100*time.Millisecond))
	},
		e2e.OSEntries("VOL-09"),
	)
})
