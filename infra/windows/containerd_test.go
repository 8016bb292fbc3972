package windows_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/simmachine"
)

// A machine joins with containerd 2 of the long-term line, 2.3, by default,
// configured with what nodeconfig composes for it (and its tests judge
// with containerd 2.3.7's own binary); and a pod starts on the node.
func TestJoinInstallsContainerd2(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if got, _ := r.sim.File(nodeconfig.ContainerdDir + `\containerd.exe`); got != "2.3.7" {
		t.Errorf("containerd.exe is %q, want 2.3.7", got)
	}
	want, err := nodeconfig.Containerd{Version: "2.3.7", SandboxImage: images.Ref("pause")}.ConfigTOML()
	if err != nil {
		t.Fatal(err)
	}
	if got := r.sim.Fact("file:" + nodeconfig.ContainerdConfigPath); got != string(want) {
		t.Errorf("containerd's configuration:\n got %s\nwant %s", got, want)
	}
}

// A node an earlier harness joined with containerd 2 has the configuration
// that harness wrote: every line named bin_dir, bin_dirs, sandbox or
// conf_dir of 2.3's default rewritten, so the CRI runtime's deprecated
// bin_dir beside bin_dirs (containerd 2.3 then loads no CRI: "`cni.bin_dir`
// and `cni.bin_dirs` cannot be set at the same time", shown by containerd
// v2.3.7's own binary in nodeconfig's tests) and the image verifier's
// bin_dir pointed at the CNI plugins. Its pods do not start; a join
// rewrites the configuration and the node runs pods again.
func TestJoinRepairsContainerd2WithoutCRI(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("first join: %v", err)
	}
	pause := images.Ref("pause")
	r.sim.SetFact("file:"+nodeconfig.ContainerdConfigPath, fmt.Sprintf(`version = 4

[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = '%s'

[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dir = '%s'
  bin_dirs = ['%s']
  conf_dir = '%s'

[plugins.'io.containerd.image-verifier.v1.bindir']
  bin_dir = '%s'
`, pause, nodeconfig.CNIBinDir, nodeconfig.CNIBinDir, nodeconfig.CNIConfDir, nodeconfig.CNIBinDir))
	if err := r.sim.StartPod(pause); err == nil || !strings.Contains(err.Error(), "unknown service runtime.v1.RuntimeService") {
		t.Fatalf("a pod on containerd 2.3 without its CRI: %v, want the CRI missing", err)
	}
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("joining again: %v", err)
	}
	r.checkNoProblems()
	if st, _ := rep.Step(windows.StepContainerd); !st.Changed {
		t.Error("the containerd step left the configuration as it was")
	}
	if err := r.sim.StartPod(pause); err != nil {
		t.Errorf("a pod after the join: %v", err)
	}
}
