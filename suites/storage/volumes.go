package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
)

// What the probe's tools print on each OS for a file that is not there.
var notFound = map[string]string{
	linux:   "no such file or directory",
	windows: "The system cannot find the file specified",
}

var _ = ginkgo.Describe("volumes", labels.Suite("storage"), func() {
	f := e2e.NewFramework("storage")
	// hostPath volumes are refused below the privileged pod security level.
	f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged

	ginkgo.DescribeTable("a hostPath written with escaped backslashes mounts read-only", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		t := fixtures.For(node)
		host := startHostDir(ctx, f, t, node)
		content := "put on node " + node.Name + " for " + f.Namespace.Name
		e2e.MustTool(ctx, f, host.pod, "", "write", host.file("content.txt"), content)

		p, err := fixtures.HostPathPod(t, fixtures.HostPath{Name: "hostpath-volume-pod", Form: fixtures.Escaped, ReadOnly: true, HostDir: host.path, MustExist: true})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		pod := startOnHost(ctx, f, p)
		mount := mountPath(pod, fixtures.HostPathVolumeName)
		framework.Logf("pod %s mounts hostPath %s at %s, read-only", pod.Name, pod.Spec.Volumes[0].HostPath.Path, mount)

		got := e2e.MustTool(ctx, f, pod, "", "cat", fixtures.Join(mount, "content.txt"))
		gomega.Expect(got).To(gomega.Equal(content), "the container reads another content than the node's file")

		ginkgo.By("writing into the read-only mount")
		_, stderr, err := e2e.Tool(ctx, f, pod, "", "write", fixtures.Join(mount, "refused.txt"), "should not land")
		gomega.Expect(err).To(gomega.HaveOccurred(), "a write into the read-only hostPath %s succeeded", mount)
		gomega.Expect(e2e.ExitStatus(err)).To(gomega.Equal(1), "the probe did not run to its write error: %v", err)
		gomega.Expect(stderr).To(gomega.HavePrefix("probe write: "))
		if os == linux {
			gomega.Expect(stderr).To(gomega.ContainSubstring("read-only file system"))
		}
		framework.Logf("the write was refused: %s", strings.TrimSpace(stderr))
		_, stderr, err = e2e.Tool(ctx, f, host.pod, "", "cat", host.file("refused.txt"))
		gomega.Expect(err).To(gomega.HaveOccurred(), "the refused write reached the node's directory")
		gomega.Expect(stderr).To(gomega.ContainSubstring(notFound[os]))
		gomega.Expect(e2e.MustTool(ctx, f, host.pod, "", "cat", host.file("content.txt"))).To(gomega.Equal(content))
	},
		e2e.OSEntries("VOL-01"),
	)

	ginkgo.DescribeTable("a hostPath written with forward slashes mounts read-write", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		t := fixtures.For(node)
		host := startHostDir(ctx, f, t, node)

		p, err := fixtures.HostPathPod(t, fixtures.HostPath{Name: "test-pd", Form: fixtures.Slashes, HostDir: host.path, MustExist: true})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		pod := startOnHost(ctx, f, p)
		mount := mountPath(pod, fixtures.HostPathVolumeName)
		framework.Logf("pod %s mounts hostPath %s at %s", pod.Name, pod.Spec.Volumes[0].HostPath.Path, mount)

		content := "written in container " + pod.Name + " of " + f.Namespace.Name
		e2e.MustTool(ctx, f, pod, "", "write", fixtures.Join(mount, "from-container.txt"), content)

		ginkgo.By("reading the file on the node")
		gomega.Expect(e2e.MustTool(ctx, f, host.pod, "", "cat", host.file("from-container.txt"))).To(gomega.Equal(content),
			"the node's directory %s does not hold what the container wrote", host.path)

		ginkgo.By("reading it from a second pod that mounts the same hostPath on the same node")
		r, err := fixtures.HostPathPod(t, fixtures.HostPath{Name: "test-pd-reader", Form: fixtures.Slashes, ReadOnly: true, HostDir: host.path, MustExist: true})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(r)
		reader := startOnHost(ctx, f, r)
		gomega.Expect(e2e.MustTool(ctx, f, reader, "", "cat", fixtures.Join(mountPath(reader, fixtures.HostPathVolumeName), "from-container.txt"))).To(gomega.Equal(content))
	},
		e2e.OSEntries("VOL-02"),
	)

	ginkgo.DescribeTable("one pod mounts several emptyDir volumes, one without a drive letter", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		p, err := fixtures.EmptyDirs(fixtures.For(node), "empty-dir-pod")
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		pod := e2e.Start(ctx, f, p)
		cache, scratch := mountPath(pod, fixtures.CacheVolumeName), mountPath(pod, fixtures.ScratchVolumeName)
		framework.Logf("pod %s mounts emptyDirs at %s and %s", pod.Name, cache, scratch)
		// The same file name in both: each volume must keep its own.
		e2e.MustTool(ctx, f, pod, "", "write", fixtures.Join(cache, "which"), "cache-volume")
		e2e.MustTool(ctx, f, pod, "", "write", fixtures.Join(scratch, "which"), "scratch-volume")
		gomega.Expect(e2e.MustTool(ctx, f, pod, "", "cat", fixtures.Join(cache, "which"))).To(gomega.Equal("cache-volume"))
		gomega.Expect(e2e.MustTool(ctx, f, pod, "", "cat", fixtures.Join(scratch, "which"))).To(gomega.Equal("scratch-volume"))
	},
		e2e.OSEntries("VOL-03"),
	)

	ginkgo.DescribeTable("the containers of a pod share an emptyDir", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		p, err := fixtures.SharedEmptyDir(fixtures.For(node), "shared")
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		pod := e2e.Start(ctx, f, p)
		first, err := fixtures.MountPath(pod, "first", fixtures.SharedVolumeName)
		framework.ExpectNoError(err)
		second, err := fixtures.MountPath(pod, "second", fixtures.SharedVolumeName)
		framework.ExpectNoError(err)

		e2e.MustTool(ctx, f, pod, "first", "write", fixtures.Join(first, "from-first"), "written by the first container")
		gomega.Expect(e2e.MustTool(ctx, f, pod, "second", "cat", fixtures.Join(second, "from-first"))).To(gomega.Equal("written by the first container"))
		e2e.MustTool(ctx, f, pod, "second", "write", fixtures.Join(second, "from-second"), "written by the second container")
		gomega.Expect(e2e.MustTool(ctx, f, pod, "first", "cat", fixtures.Join(first, "from-second"))).To(gomega.Equal("written by the second container"))
	},
		e2e.OSEntries("VOL-04"),
	)

	ginkgo.DescribeTable("an emptyDir with medium: Memory", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		p, err := fixtures.MemoryEmptyDir(fixtures.For(node), "memory")
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		if os == windows {
			recordMemoryMedium(ctx, f, p)
			return
		}
		// The Linux twin: the same measurement must see a memory-backed
		// volume, which a tmpfs is.
		pod := e2e.Start(ctx, f, p)
		mount := mountPath(pod, fixtures.MemoryVolumeName)
		mounts := e2e.MustTool(ctx, f, pod, "", "cat", "/proc/mounts")
		fsType := mountType(mounts, mount)
		gomega.Expect(fsType).To(gomega.Equal("tmpfs"), "%s is not a tmpfs; /proc/mounts:\n%s", mount, mounts)
		m, err := measureMemoryMedium(ctx, f, pod, mount)
		framework.ExpectNoError(err)
		o := verdicts.MemoryMedium(m)
		gomega.Expect(o.Behaviour).To(gomega.Equal(ledger.Works), "the memory-backed volume %s: %s", mount, o.Evidence)
		framework.Logf("%s is a %s mount: %s", mount, fsType, o.Evidence)
	},
		e2e.OSEntries("VOL-05"),
	)

	ginkgo.DescribeTable("a hostPath PersistentVolume bound by a claim mounts in a pod", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		t := fixtures.For(node)
		host := startHostDir(ctx, f, t, node)
		pv, pvc, err := fixtures.PersistentVolumeAndClaim(t, fixtures.PersistentVolume{
			Claim: "windows-pv-claim", Namespace: f.Namespace.Name, HostDir: host.path, Node: node.Name, MustExist: true})
		framework.ExpectNoError(err)

		// The volume is cluster-scoped, so the namespace does not take it along.
		e2e.Owned(pv)
		pv, err = f.ClientSet.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ginkgo.DeferCleanup(func(ctx context.Context) {
			err := f.ClientSet.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				framework.Failf("deleting PersistentVolume %s: %v", pv.Name, err)
			}
		})
		pvc, err = f.ClientSet.CoreV1().PersistentVolumeClaims(f.Namespace.Name).Create(ctx, pvc, metav1.CreateOptions{})
		framework.ExpectNoError(err)

		ginkgo.By("waiting for the claim to bind the volume")
		bound, err := e2e.Await(ctx, f.ClientSet, f.ClientSet.CoreV1().PersistentVolumeClaims(pvc.Namespace), pvc.Name, 2*time.Minute, func(c *corev1.PersistentVolumeClaim) (bool, error) {
			return c.Status.Phase == corev1.ClaimBound, nil
		})
		if bound != nil {
			pvc = bound
		}
		framework.ExpectNoError(err, "claim %s is %s", pvc.Name, pvc.Status.Phase)
		gomega.Expect(pvc.Spec.VolumeName).To(gomega.Equal(pv.Name))
		pv, err = f.ClientSet.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(pv.Status.Phase).To(gomega.Equal(corev1.VolumeBound))
		gomega.Expect(pv.Spec.ClaimRef.UID).To(gomega.Equal(pvc.UID), "the volume is bound to another claim")

		w, err := fixtures.ClaimPod(t, "pv-writer", pvc.Name)
		framework.ExpectNoError(err)
		ospod.OnNode(node)(w)
		writer := startOnHost(ctx, f, w)
		mount := mountPath(writer, fixtures.ClaimVolumeName)
		content := "written through claim " + pvc.Name + " by " + writer.Name
		e2e.MustTool(ctx, f, writer, "", "write", fixtures.Join(mount, "data.txt"), content)
		gomega.Expect(e2e.MustTool(ctx, f, host.pod, "", "cat", host.file("data.txt"))).To(gomega.Equal(content),
			"the write did not reach the volume's directory %s on node %s", host.path, node.Name)

		ginkgo.By("deleting the writer, then reading the file from a new pod")
		framework.ExpectNoError(e2e.DeletePod(ctx, f.ClientSet, writer, metav1.DeleteOptions{}, e2e.PodDeleteTimeout))
		r, err := fixtures.ClaimPod(t, "pv-reader", pvc.Name)
		framework.ExpectNoError(err)
		ospod.OnNode(node)(r)
		reader := startOnHost(ctx, f, r)
		gomega.Expect(e2e.MustTool(ctx, f, reader, "", "cat", fixtures.Join(mountPath(reader, fixtures.ClaimVolumeName), "data.txt"))).To(gomega.Equal(content))
	},
		e2e.OSEntries("VOL-06"),
	)

	ginkgo.DescribeTable("emptyDir data outlives a container restart and goes with the pod", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		render := func(name string) *corev1.Pod {
			p, err := fixtures.EmptyDirs(fixtures.For(node), name)
			framework.ExpectNoError(err)
			ospod.OnNode(node)(p)
			return p
		}
		pod := e2e.Start(ctx, f, render("restarted"))
		file := fixtures.Join(mountPath(pod, fixtures.CacheVolumeName), "survivor.txt")
		content := "written before the restart, " + f.Namespace.Name
		e2e.MustTool(ctx, f, pod, "", "write", file, content)

		ginkgo.By("making the container exit (POST /exit) so that the kubelet restarts it")
		before := pod.Status.ContainerStatuses[0].RestartCount
		// The container may end before the exec session does: the restart is what counts.
		if _, stderr, err := e2e.Tool(ctx, f, pod, "", "post", "http://localhost:8080/exit"); err != nil {
			framework.Logf("probe post /exit: %v (%s)", err, stderr)
		}
		restarted, err := e2e.AwaitPod(ctx, f.ClientSet, pod.Namespace, pod.Name, 3*time.Minute, func(p *corev1.Pod) (bool, error) {
			cs := p.Status.ContainerStatuses
			return len(cs) > 0 && cs[0].RestartCount > before && cs[0].Ready, nil
		})
		framework.ExpectNoError(err, "the container did not restart and turn Ready again (%s)", e2e.PodState(restarted))
		pod = restarted
		cs := pod.Status.ContainerStatuses[0]
		gomega.Expect(cs.LastTerminationState.Terminated).NotTo(gomega.BeNil())
		gomega.Expect(cs.LastTerminationState.Terminated.ExitCode).To(gomega.Equal(int32(3)), "the container ended otherwise than by POST /exit")
		framework.Logf("container restarted (%d -> %d restarts, last exit code %d)", before, cs.RestartCount, cs.LastTerminationState.Terminated.ExitCode)
		gomega.Expect(e2e.MustTool(ctx, f, pod, "", "cat", file)).To(gomega.Equal(content), "the file did not survive the container's restart")

		// The new pod has a name of its own, so that it need not wait for
		// the old one to be gone: the deletion and the start overlap.
		ginkgo.By("deleting the pod and starting another like it on the node")
		pods := f.ClientSet.CoreV1().Pods(pod.Namespace)
		framework.ExpectNoError(pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}))
		again := e2e.Start(ctx, f, render("restarted-again"))
		framework.ExpectNoError(e2e.AwaitGone[*corev1.Pod](ctx, f.ClientSet, pods, pod.Name, e2e.PodDeleteTimeout))
		gomega.Expect(again.UID).NotTo(gomega.Equal(pod.UID))
		_, stderr, err := e2e.Tool(ctx, f, again, "", "cat", file)
		gomega.Expect(err).To(gomega.HaveOccurred(), "the file outlived its pod")
		gomega.Expect(e2e.ExitStatus(err)).To(gomega.Equal(1))
		gomega.Expect(stderr).To(gomega.ContainSubstring(notFound[os]))
	},
		e2e.OSEntries("VOL-07"),
	)
})

// startOnHost starts a pod that mounts a hostDir, saying what it means when
// it cannot: the directory is the emptyDir of another pod, found where a
// kubelet with the default root directory keeps it.
func startOnHost(ctx context.Context, f *framework.Framework, p *corev1.Pod) *corev1.Pod {
	got, err := e2e.TryStart(ctx, f, p)
	framework.ExpectNoError(err, "pod %s mounts a directory under the kubelet's default root (%s): a kubelet with another --root-dir does not have it",
		p.Name, fixtures.KubeletVolumeDir(e2e.PodOS(p), "<uid>", fixtures.HostDirVolumeName))
	return got
}

// mountType is the file system type /proc/mounts gives for path, "" when
// nothing is mounted there.
func mountType(procMounts, path string) string {
	for _, line := range strings.Split(procMounts, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[1] == path {
			return fields[2]
		}
	}
	return ""
}

// recordMemoryMedium starts p, a Windows pod with an emptyDir of medium
// Memory, and records in the ledger what became of the volume: whether
// writing into it raised the pod's memory (memory-backed) or not (a plain
// directory on the node's disk), as measured; nothing observed otherwise.
func recordMemoryMedium(ctx context.Context, f *framework.Framework, p *corev1.Pod) {
	e := e2e.Limitation(ctx, f, "VOL-05")
	pod, err := e2e.TryStart(ctx, f, p)
	if ctx.Err() != nil {
		return // interrupted: nothing was observed
	}
	if err != nil {
		// A pod that did not start measured nothing: unobserved.
		verdicts.MemoryMedium(verdicts.MemoryFill{Start: err}).Apply(&e)
		e2e.RecordLimitation(ctx, f, e)
		return
	}
	m, err := measureMemoryMedium(ctx, f, pod, mountPath(pod, fixtures.MemoryVolumeName))
	if err != nil {
		verdicts.Unobserved("%v", err).Apply(&e)
	} else {
		verdicts.MemoryMedium(m).Apply(&e)
	}
	e2e.RecordLimitation(ctx, f, e)
}

// fillMiB is what the memory medium specs write into the volume.
const fillMiB = 64

// measureMemoryMedium writes fillMiB into the volume mounted at mount and
// watches the pod's working set in the kubelet's summary: a memory-backed
// volume raises it by about what was written, a disk-backed one does not
// (verdicts.MemoryMedium decides; a last reading that failed is kept in
// ReadErr, and decides nothing). An error when the working set could not
// be read before the write.
func measureMemoryMedium(ctx context.Context, f *framework.Framework, pod *corev1.Pod, mount string) (verdicts.MemoryFill, error) {
	m := verdicts.MemoryFill{Mount: mount, FillMiB: fillMiB}
	var err error
	m.Before, err = podWorkingSet(ctx, f, pod)
	if err != nil {
		return m, err
	}
	e2e.MustTool(ctx, f, pod, "", "fill", fixtures.Join(mount, "filled"), fmt.Sprint(fillMiB))
	// The write shows in the summary at the pod's next stats sample, on
	// Linux cAdvisor's next housekeeping, 2 to 4 s after the one before on
	// the clusters winconform makes, 10 to 30 s on a kubelet's default
	// (e2e.SummaryPoll): wait for the growth, or for long enough (90 s, three
	// of the default's longest intervals) that its absence means something.
	_ = wait.PollUntilContextTimeout(ctx, e2e.SummaryPoll, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		m.After, m.ReadErr = podWorkingSet(ctx, f, pod)
		return m.ReadErr == nil && m.After >= m.Before+fillMiB*3/4<<20, nil
	})
	if ctx.Err() != nil {
		return m, ctx.Err()
	}
	return m, nil
}

// podWorkingSet is the pod's memory working set in its node's kubelet
// summary, waiting (up to two minutes) for the pod to appear there.
func podWorkingSet(ctx context.Context, f *framework.Framework, pod *corev1.Pod) (uint64, error) {
	var ws uint64
	err := wait.PollUntilContextTimeout(ctx, e2e.SummaryPoll, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := e2e.NodeSummary(ctx, f.ClientSet, pod.Spec.NodeName)
		if err != nil {
			return false, nil
		}
		for _, ps := range s.Pods {
			if ps.PodRef.Name == pod.Name && ps.PodRef.Namespace == pod.Namespace && ps.Memory != nil && ps.Memory.WorkingSetBytes != nil {
				ws = *ps.Memory.WorkingSetBytes
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("pod %s has no memory figures in the summary of node %s: %w", pod.Name, pod.Spec.NodeName, err)
	}
	return ws, nil
}
