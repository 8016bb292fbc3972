package windows_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/testing/simmachine"
)

var containerdConfigKey = "containerd-config:" + nodeconfig.ContainerdDir + `\config.toml`

// A machine joins with containerd 2 of the long-term line, 2.3, by default,
// configured as containerd 2 reads it: config version 4, the sandbox image
// pinned by the CRI image service, the CNI's binaries in the CRI runtime's
// bin_dirs with the deprecated bin_dir left empty (containerd 2.1 to 2.3
// load no CRI with both set), the image verifier's directory its own; and a
// pod starts on the node. What each containerd version reads is modelled in
// simmachine/containerd.go, from containerd's sources.
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
	want := fmt.Sprintf("version=4 cri.v1.images.pinned_images.sandbox='%s' cri.v1.runtime.cni.bin_dir='' cri.v1.runtime.cni.bin_dirs=['%s'] cri.v1.runtime.cni.conf_dir='%s' image-verifier.v1.bindir.bin_dir='%s'",
		images.Ref("pause"), nodeconfig.CNIBinDir, nodeconfig.CNIConfDir, `C:\ProgramData\containerd\root\opt\image-verifier\bin`)
	if got := r.sim.Fact(containerdConfigKey); got != want {
		t.Errorf("containerd's configuration:\n got %s\nwant %s", got, want)
	}
}

// A node an earlier harness joined with containerd 2 has the configuration
// that harness wrote: every line named bin_dir, bin_dirs, sandbox or
// conf_dir of 2.3's default rewritten, so the CRI runtime's deprecated
// bin_dir beside bin_dirs (containerd 2.3 then loads no CRI: "`cni.bin_dir`
// and `cni.bin_dirs` cannot be set at the same time", seen here with a
// containerd v2.3.7 built from its module) and the image verifier's
// bin_dir pointed at the CNI plugins. Its pods do not start; a join
// rewrites the configuration and the node runs pods again.
func TestJoinRepairsContainerd2WithoutCRI(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("first join: %v", err)
	}
	pause := images.Ref("pause")
	r.sim.SetFact(containerdConfigKey, fmt.Sprintf("version=4 cri.v1.images.pinned_images.sandbox='%s' cri.v1.runtime.cni.bin_dir='%s' cri.v1.runtime.cni.bin_dirs=['%s'] cri.v1.runtime.cni.conf_dir='%s' image-verifier.v1.bindir.bin_dir='%s'",
		pause, nodeconfig.CNIBinDir, nodeconfig.CNIBinDir, nodeconfig.CNIConfDir, nodeconfig.CNIBinDir))
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
