package windows_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/simmachine"
)

// nodeImageRefs are the images the join puts in containerd: the sandbox
// image of a Windows Server 2022 node, the DaemonSets' HostProcess image,
// the probe.
func nodeImageRefs() []string {
	return []string{images.Ref("pause-ltsc2022"), images.Ref(windows.HostProcessImage), images.Ref("probe")}
}

// TestJoinImportsTheNodesImagesOnAnAirGappedMachine joins a machine that
// reaches no registry, with an archive of the node's images on it
// (binaries.images): the join imports it into containerd's k8s.io
// namespace, the one the CRI uses (image-builder pre-pulls there too:
// ansible/windows/roles/runtimes/tasks/containerd.yml, ctr.exe -n k8s.io),
// and the node's first pod starts from it, since neither containerd's
// sandbox image nor the kubelet's IfNotPresent pulls an image it has.
func TestJoinImportsTheNodesImagesOnAnAirGappedMachine(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, NoRegistry: true}, func(m *config.Machine) {
		m.Binaries["images"] = `C:\install\node-images.tar`
	})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	for _, ref := range nodeImageRefs() {
		if r.sim.Fact("image:"+ref) == "" {
			t.Errorf("%s is not in containerd's images", ref)
		}
	}
	st, _ := rep.Step(windows.StepImages)
	if got, _ := st.Status["images"].(map[string]any); got[images.Ref("pause-ltsc2022")] != "imported" {
		t.Errorf("the images step reports %v", st.Status)
	}
	if p := r.sim.Params(windows.StepImages); p["Pull"] != "false" || p["Archive"] != `C:\install\node-images.tar` || p["Ctr"] != nodeconfig.ContainerdDir+`\ctr.exe` {
		t.Errorf("the images step's parameters %v", p)
	}
}

// TestJoinPullsTheNodesImagesFromTheMirror: with prepullImages the join
// pulls each of the node's images, as the image overrides name them (a
// mirror's), before the node needs them; a second join finds them there.
func TestJoinPullsTheNodesImagesFromTheMirror(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) { m.PrepullImages = true })
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	st, _ := rep.Step(windows.StepImages)
	got, _ := st.Status["images"].(map[string]any)
	for _, ref := range nodeImageRefs() {
		if got[ref] != "pulled" || r.sim.Fact("image:"+ref) == "" {
			t.Errorf("%s: %v, in containerd: %q", ref, got[ref], r.sim.Fact("image:"+ref))
		}
	}
	rep, err = r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	if st, _ := rep.Step(windows.StepImages); st.Changed {
		t.Errorf("a second join pulled again: %v", st.Status)
	}
}

// TestJoinWithoutImagesOnAnAirGappedMachine: without the archive, the node
// of a machine that reaches no registry turns Ready but starts no pod, and
// the join says why with the pod's events.
func TestJoinWithoutImagesOnAnAirGappedMachine(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, NoRegistry: true})
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrPodNotStarted) || !strings.Contains(err.Error(), "no such host") {
		t.Fatalf("err = %v, want ErrPodNotStarted: the sandbox image cannot be pulled", err)
	}
}
