package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// defaultStorage is the node image's storage manifest, which kind applies:
// kind runs the controller manager with the in-tree host-path provisioner
// enabled, which needs no image, so the default class uses it.
const defaultStorage = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
`

// defaultCNI stands in for kind's default CNI manifest; the harness disables
// kind's CNI step and installs flannel itself.
const defaultCNI = `apiVersion: v1
kind: ConfigMap
metadata:
  name: winconform-node-image
  namespace: kube-system
data:
  cni: "flannel, installed by winconform"
`

// nodeImage starts the base image with only containerd running, copies the
// node binaries in, imports the component images into containerd's k8s.io
// namespace, and commits the container as the node image.
func (b *build) nodeImage(ctx context.Context, base, archive string) error {
	name := "winconform-nodeimage-build-" + b.spec.inputs()[:12]
	_ = b.docker.Run(context.WithoutCancel(ctx), "rm", "-f", name)
	// Always remove the build container, also when ctx is cancelled.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = b.docker.Run(cctx, "rm", "-f", name)
	}()
	if err := b.docker.Run(ctx, "run", "-d", "--name", name,
		"--entrypoint", "/usr/local/bin/containerd",
		"--tmpfs", "/run", "--tmpfs", "/tmp", base); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return b.docker.Run(ctx, "exec", name, "ctr", "version") == nil, nil
	})
	if err != nil {
		logs, _ := b.docker.Output(context.WithoutCancel(ctx), nil, "logs", "--tail", "20", name)
		return fmt.Errorf("containerd in the build container did not answer within a minute: %s", logs)
	}
	copies := map[string]string{
		b.bins.kube["kubeadm"]:       "/usr/bin/kubeadm",
		b.bins.kube["kubelet"]:       "/usr/bin/kubelet",
		b.bins.kube["kubectl"]:       "/usr/bin/kubectl",
		b.bins.cniPlugins["flannel"]: "/usr/lib/cni/flannel", // /opt/cni/bin; Debian has the rest
	}
	for src, dst := range copies {
		if err := b.docker.Run(ctx, "cp", src, name+":"+dst); err != nil {
			return err
		}
	}
	files := map[string]string{
		"/kind/version":                        b.spec.KubernetesVersion,
		"/kind/manifests/default-cni.yaml":     defaultCNI,
		"/kind/manifests/default-storage.yaml": defaultStorage,
	}
	work := filepath.Dir(archive)
	for dst, content := range files {
		src := filepath.Join(work, filepath.Base(dst))
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			return err
		}
		if err := b.docker.Run(ctx, "cp", src, name+":"+dst); err != nil {
			return err
		}
	}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := b.docker.Output(ctx, f, "exec", "-i", name, "ctr", "--namespace=k8s.io", "images", "import",
		"--all-platforms", "--no-unpack", "--digests", "-"); err != nil {
		return err
	}
	// Pinned images are never garbage collected by the kubelet: nothing could pull them back.
	if err := b.docker.Run(ctx, "exec", name, "sh", "-c",
		"for i in $(ctr -n k8s.io images ls -q); do ctr -n k8s.io images label $i io.cri-containerd.pinned=pinned >/dev/null || exit 1; done"); err != nil {
		return err
	}
	// A clean stop lets containerd close its metadata database.
	if err := b.docker.Run(ctx, "stop", "--time", "30", name); err != nil {
		return err
	}
	if err := b.docker.Run(ctx, "commit",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"--change", "ENV container=docker",
		"--change", "LABEL "+KeyLabel+"="+b.spec.inputs(),
		name, b.tag); err != nil {
		return err
	}
	return os.RemoveAll(work)
}
