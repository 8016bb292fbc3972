package simmachine

import (
	"errors"
	"fmt"
)

// What a Windows node does when the kubelet starts a pod: containerd pulls
// the sandbox (pause) image its configuration names, then the pod's images,
// each the variant of its manifest list whose os.version is the host's build
// (process isolation runs a container only on the build it was made for).
// An image without such a variant cannot be pulled: containerd fails with
// "no match for platform in manifest" (containerd/containerd, images.Manifest),
// and the kubelet reports FailedCreatePodSandBox for the sandbox image.
//
// imageBuilds are the Windows builds each image this machine knows has a
// variant for, as the registries serve them. registry.k8s.io/pause's
// Windows variants follow the os.versions of its base image
// (kubernetes/kubernetes, build/pause/Makefile, ALL_OSVERSIONS.windows):
// 3.10.1 is built on windows-pause-image-base v0.4.1 with 1809 and ltsc2022
// variants; 3.10.2 on its v2 build, which adds ltsc2025
// (kubernetes/kubernetes#136960; containerd/containerd#13156 moved
// containerd's default to 3.10.2 "for Windows Server 2025 (ltsc2025)
// support"). An image the table does not name runs on every build: the
// machine knows nothing against it.
var imageBuilds = map[string][]string{
	"registry.k8s.io/pause:3.10.1": {"10.0.17763", "10.0.20348"},
	"registry.k8s.io/pause:3.10.2": {"10.0.17763", "10.0.20348", "10.0.26100"},
}

// PodError is why a pod cannot start on the machine.
type PodError struct {
	// Reason is the kubelet's event reason: FailedCreatePodSandBox for the
	// sandbox image, Failed for a container's image.
	Reason, Message string
}

func (e *PodError) Error() string { return e.Reason + ": " + e.Message }

// StartPod starts a pod of images on the machine, as its kubelet and
// containerd would: it fails (a *PodError) when containerd is not running,
// when the sandbox image of containerd's configuration or one of the images
// has no variant for the machine's build, or when Windows does not start
// the variant containerd pulled (see images.go).
func (m *Machine) StartPod(images ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cri, err := m.containerdRunning()
	var noCRI *errNoCRI
	switch {
	case errors.As(err, &noCRI):
		return &PodError{Reason: "FailedCreatePodSandBox", Message: "rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService (" + err.Error() + ")"}
	case err != nil:
		return &PodError{Reason: "FailedCreatePodSandBox", Message: "rpc error: code = Unavailable desc = " + err.Error()}
	}
	sandbox := cri.Sandbox
	if sandbox == "" {
		return &PodError{Reason: "FailedCreatePodSandBox", Message: "containerd's configuration names no sandbox image"}
	}
	v, err := m.variant(sandbox)
	if err == nil {
		err = m.pulled(sandbox)
	}
	if err != nil {
		return &PodError{Reason: "FailedCreatePodSandBox", Message: fmt.Sprintf("Failed to create pod sandbox: rpc error: code = NotFound desc = failed to get sandbox image %q: %v", sandbox, err)}
	}
	if err := m.runs(v); err != nil {
		return &PodError{Reason: "FailedCreatePodSandBox", Message: fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container task: %v", err)}
	}
	for _, image := range images {
		v, err := m.variant(image)
		if err == nil {
			err = m.pulled(image)
		}
		if err != nil {
			return &PodError{Reason: "Failed", Message: fmt.Sprintf("Failed to pull image %q: %v", image, err)}
		}
		if err := m.runs(v); err != nil {
			return &PodError{Reason: "Failed", Message: fmt.Sprintf("Error: %v", err)}
		}
	}
	return nil
}
