package windows_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestJoinWindowsServer2025 joins a Windows Server 2025 machine. Its
// containerd must run a sandbox image with a Windows Server 2025 variant:
// registry.k8s.io/pause has one from 3.10.2 on, 3.10.1 none (see
// simmachine/pods.go for the model and its sources), and with no sandbox
// no pod starts on the node, Ready as it is.
func TestJoinWindowsServer2025(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{Build: "10.0.26100.3194", ContainersInstalled: true})
	r.cluster.buildLabel = "10.0.26100"
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if got, _ := r.containerdConfig().Str("cri.v1.images.pinned_images.sandbox"); got != "registry.k8s.io/pause:3.10.2" {
		t.Errorf("containerd's sandbox image is %q, want registry.k8s.io/pause:3.10.2", got)
	}
	if err := r.sim.StartPod(); err != nil {
		t.Errorf("no pod starts on the joined node: %v", err)
	}
	st, _ := rep.Step(windows.StepPod)
	if st.Error != "" || st.Status["running"] != true || st.Status["image"] != "registry.k8s.io/pause:3.10.2" {
		t.Errorf("the pod check: %+v", st)
	}
	pods, _ := r.cluster.cs.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{})
	if len(pods.Items) != 0 {
		t.Errorf("the check left %d pods", len(pods.Items))
	}
}

// TestPodCheckFailsWithTheEvents points Windows Server 2025's sandbox image
// at one with a Windows Server 2019 variant only, which the machine cannot
// run, on a harness that cannot read the image's index (preflight then
// checks no variant): the node turns Ready, but its pods cannot start, and
// the join says why with the pod's events. Not parallel: it changes the
// image overrides, which the package shares.
func TestPodCheckFailsWithTheEvents(t *testing.T) {
	const pause = "mirror.example.com/pause:ltsc2019"
	if err := images.SetOverrides(&images.Overrides{Images: map[string]string{"pause-ltsc2025": pause}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = images.SetOverrides(nil) })
	r := newRig(t, simmachine.Config{Build: "10.0.26100.3194", ContainersInstalled: true})
	r.sim.SetImageVariants(pause, "10.0.17763.6054")
	r.cluster.buildLabel = "10.0.26100"
	rep, err := r.join(windows.JoinOptions{Registry: unreadableRegistry{}})
	if !errors.Is(err, windows.ErrPodNotStarted) {
		t.Fatalf("err = %v, want ErrPodNotStarted", err)
	}
	for _, want := range []string{"FailedCreatePodSandBox", `failed to get sandbox image "` + pause + `"`, "no match for platform in manifest", "10.0.26100"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if st, _ := rep.Step(windows.StepPod); st.Error == "" {
		t.Errorf("the pod step reports no error")
	}
	pods, _ := r.cluster.cs.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{})
	if len(pods.Items) != 0 {
		t.Errorf("the failed check left %d pods", len(pods.Items))
	}
}
