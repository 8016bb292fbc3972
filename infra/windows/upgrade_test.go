package windows_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestJoinReplacesRunningPrograms joins a machine whose node runs older
// programs: the containerd service runs containerd.exe (1.7, with its
// configuration, as an older join installed it), a pod its containerd
// shim, and the HostProcess DaemonSets kube-proxy.exe and flanneld.exe from
// C:\k, and the kubelet service its kube-log-runner.exe and kubelet.exe
// (v1.33.5). Windows refuses to overwrite the file of a running program
// (see simmachine/processes.go for the model and its sources), and a
// process stopped with its service may not have exited when Stop-Service
// returns, so the join must move each running file aside before it copies
// the new one; the processes run on from the moved files until they
// restart. Before, kubelet.ps1 copied kubelet.exe over the running file
// right after Stop-Service, and kube-log-runner.exe without stopping the
// service: "being used by another process".
func TestJoinReplacesRunningPrograms(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("first join: %v", err)
	}
	containerd := nodeconfig.ContainerdDir + `\containerd.exe`
	shim := nodeconfig.ContainerdDir + `\containerd-shim-runhcs-v1.exe`
	kubeProxy := nodeconfig.InstallDir + `\kube-proxy.exe`
	flanneld := nodeconfig.InstallDir + `\flanneld.exe`
	// The node as an older join left it, running.
	r.sim.SetFact("file:"+containerd, "1.7.28")
	r.sim.SetFact("file:"+shim, "1.7.28")
	r.setContainerdConfig("1.7.28", images.Ref("pause"))
	r.sim.SetFact("file:"+kubeProxy, "v1.33.5")
	r.sim.SetFact("file:"+flanneld, "old flanneld")
	r.sim.StartProcess(containerd, "service:containerd")
	r.sim.StartProcess(shim, "pod")
	r.sim.StartProcess(kubeProxy, "pod")
	r.sim.StartProcess(flanneld, "pod")
	kubelet := nodeconfig.InstallDir + `\kubelet.exe`
	kubeadm := nodeconfig.InstallDir + `\kubeadm.exe`
	runner := nodeconfig.InstallDir + `\kube-log-runner.exe`
	const oldRunner = "https://dl.k8s.io/v1.33.5/bin/windows/amd64/kube-log-runner.exe"
	r.sim.SetFact("file:"+kubelet, "v1.33.5")
	r.sim.SetFact("file:"+kubeadm, "v1.33.5")
	r.sim.SetFact("file:"+runner, oldRunner)
	r.sim.SetFact("state:kube-log-runner.source", oldRunner)
	r.sim.StartProcess(kubelet, "service:kubelet")
	r.sim.StartProcess(runner, "service:kubelet")
	r.machine.Binaries["flanneld"] = `C:\install\flanneld.exe`

	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("joining a node whose programs run: %v", err)
	}
	r.checkNoProblems()
	for _, s := range []string{windows.StepContainerd, windows.StepKubelet, windows.StepKubeProxy, windows.StepCNI} {
		if st, _ := rep.Step(s); !st.Changed {
			t.Errorf("step %s changed nothing", s)
		}
	}
	for path, want := range map[string]string{
		containerd: kubelines.DefaultContainerd, shim: kubelines.DefaultContainerd, kubeProxy: testVersion,
		kubelet: testVersion, kubeadm: testVersion, runner: "https://dl.k8s.io/" + testVersion + "/bin/windows/amd64/kube-log-runner.exe",
	} {
		if got, _ := r.sim.File(path); got != want {
			t.Errorf("%s is %q, want %q", path, got, want)
		}
	}
	if cfg := r.containerdConfig(); cfg.Version != 4 {
		t.Errorf("containerd 2 runs with a configuration of version %d, not its own", cfg.Version)
	}
	// The restarted programs run the new files; the shim of the running pod
	// runs on from where its file was moved.
	want := []string{containerd, `C:\winconform\work\replaced\containerd-shim-runhcs-v1.exe.1`, kubeProxy, flanneld, kubelet, runner}
	for i := range want {
		want[i] = strings.ToLower(want[i])
	}
	slices.Sort(want)
	if got := r.sim.Processes(); !slices.Equal(got, want) {
		t.Errorf("processes run from %v, want %v", got, want)
	}
}
