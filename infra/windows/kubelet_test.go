package windows_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/simmachine"
)

// kubeadmHostname is what kubeadm join (1.35 and later) writes into
// kubeadm-flags.env for a node named other than its host: only
// --hostname-override, besides --register-with-taints and the join
// configuration's kubeletExtraArgs (k8s.io/kubernetes v1.37.2
// cmd/kubeadm/app/phases/kubelet/flags.go buildKubeletArgsCommon; the
// --pod-infra-container-image of 1.34 is gone, and a 1.35 kubelet refuses
// it).
const kubeadmHostname = "--hostname-override=win-2022-a"

// A WinRM shell inherits the environment the WinRM service started with
// (at boot), not the machine's PATH as it is now (ansible.windows#348,
// chef-boneyard/windows#111); kubeadm join's preflight runs
// "kubelet --version" by name, and that check is fatal
// (k8s.io/kubernetes v1.34.4, cmd/kubeadm/app/preflight/checks.go
// KubeletVersionCheck, utils.go GetKubeletVersion). On a machine that needs
// no reboot, the kubelet step puts C:\k on the machine's PATH and the join
// runs in a shell without it: the join must refresh its PATH.
func TestJoinFindsTheKubeletWithoutAReboot(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if rep.Reboots != 0 || r.sim.Fact(`path:C:\k`) == "" || r.sim.Fact(`winrm-path:C:\k`) != "" {
		t.Fatalf("premise: no reboot (%d), C:\\k on the machine's PATH (%q) and not on the WinRM service's (%q)",
			rep.Reboots, r.sim.Fact(`path:C:\k`), r.sim.Fact(`winrm-path:C:\k`))
	}
	if !r.sim.Joined() {
		t.Error("the machine did not join")
	}
}

// The service control manager keeps its own copy of a service's command
// line: Win32_Service and sc.exe qc report it and a start runs it, while
// the registry's ImagePath is read at boot only (MS-SCMR 3.1.4.11
// RChangeServiceConfigW changes "the SCM database"). A kubelet whose
// command line is out of date (an older harness's) gets the new one through
// the manager, runs it once restarted, and the next join changes nothing.
func TestKubeletCommandLineChangeReachesTheRunningKubelet(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	want, _ := r.sim.Service("kubelet")
	// What an older harness left: another command line, in the manager,
	// the registry and the running process alike.
	old := strings.Replace(want.BinPath, "--v=2", "--v=4", 1)
	for _, kind := range []string{"service-command:", "service-imagepath:", "service-process:"} {
		r.sim.SetFact(kind+"kubelet", old)
	}
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	r.checkNoProblems()
	if s, _ := rep.Step(windows.StepKubelet); !s.Changed {
		t.Error("the kubelet step did not change the command line")
	}
	got, _ := r.sim.Service("kubelet")
	if got.BinPath != want.BinPath || got.ImagePath != want.BinPath || got.Process != want.BinPath || !got.Running {
		t.Errorf("the kubelet service after the change:\n manager:  %s\n registry: %s\n process:  %s\nwant all: %s", got.BinPath, got.ImagePath, got.Process, want.BinPath)
	}
	rep, err = r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("third Join: %v", err)
	}
	for _, s := range rep.Steps {
		if s.Changed {
			t.Errorf("the third join: step %s changed again (it never settles)", s.Name)
		}
	}
}

// A machine with several network interfaces names the node's address in
// the inventory (nodeIP): the kubelet runs with --node-ip from its first
// start, kubeadm gets it as a kubelet flag (JoinConfiguration
// nodeRegistration.kubeletExtraArgs) and writes it into kubeadm-flags.env,
// where flannel reads it, and the kubelet service then runs with kubeadm's
// flags (as sig-windows-tools' StartKubelet.ps1 and image-builder's
// RestartKubelet.ps1 make the kubelet do).
func TestJoinWithTheNodesAddress(t *testing.T) {
	t.Parallel()
	const ip = "10.20.30.40"
	r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) { m.NodeIP = ip })
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if p := r.sim.Params(windows.StepKubeadmJoin); p["NodeIP"] != ip {
		t.Errorf("kubeadm-join got NodeIP %q, want %s", p["NodeIP"], ip)
	}
	flags, _ := r.sim.File(`C:\var\lib\kubelet\kubeadm-flags.env`)
	if !strings.Contains(flags, "--node-ip="+ip) {
		t.Errorf("kubeadm-flags.env is %q, without --node-ip=%s", flags, ip)
	}
	kubelet, _ := r.sim.Service("kubelet")
	if !strings.Contains(kubelet.Process, "--node-ip="+ip) || !strings.Contains(kubelet.Process, kubeadmHostname) {
		t.Errorf("the kubelet runs %q, want --node-ip=%s and kubeadm's flags", kubelet.Process, ip)
	}
	n := r.node()
	if !slices.Contains(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}) {
		t.Errorf("node addresses %v, want InternalIP %s", n.Status.Addresses, ip)
	}
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	r.checkNoProblems()
	if rep.Changed() {
		t.Errorf("the second join changed something:\n%s", reportJSON(t, rep.Steps))
	}
}

// Without nodeIP the kubelet chooses the address itself, and still runs
// with the flags kubeadm wrote.
func TestJoinWithoutTheNodesAddressRunsKubeadmsFlags(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	kubelet, _ := r.sim.Service("kubelet")
	if kubelet.Process != nodeconfig.KubeletCommand()+" "+kubeadmHostname {
		t.Errorf("the kubelet runs %q", kubelet.Process)
	}
}

// leftState is what a node that ran pods keeps after its node is gone:
// host-local's reservations, flannel's subnet, kube-proxy's and flannel's
// state (where the HostProcess DaemonSets keep it), the CNI configuration
// flannel wrote, and flannel's HNS networks.
var leftState = []string{
	`file:C:\var\lib\cni\networks\vxlan0\10.244.1.2`,
	`file:C:\run\flannel\subnet.env`,
	`file:C:\winconform\node\kube-proxy\sourceVip.json`,
	`file:C:\winconform\node\flannel\kubeconfig.conf`,
	`file:C:\etc\cni\net.d\10-flannel.conf`,
}

func addLeftState(sim *simmachine.Machine) {
	for _, f := range leftState {
		sim.SetFact(f, "the old cluster's")
	}
	sim.AddHNSNetwork("External")
	sim.AddHNSNetwork("flannel.4096")
	sim.AddHNSNetwork("nat")
}

func checkNoLeftState(t *testing.T, sim *simmachine.Machine) {
	t.Helper()
	for _, f := range leftState {
		if v := sim.Fact(f); v == "the old cluster's" {
			t.Errorf("%s is still there", f)
		}
	}
	if got := sim.HNSNetworks(); !slices.Equal(got, []string{"nat"}) {
		t.Errorf("HNS networks %v, want only nat", got)
	}
}

// A machine whose node was deleted joins again without the old cluster's
// state: kubeadm's files, host-local's addresses, flannel's subnet.env,
// kube-proxy's source VIP and flannel's networks all name the old node's
// pod subnet.
func TestRejoinAfterTheNodeWasDeletedRemovesTheOldState(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	addLeftState(r.sim)
	if err := r.cluster.cs.CoreV1().Nodes().Delete(context.Background(), r.machine.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.sim.ResetSteps()
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join again: %v", err)
	}
	r.checkNoProblems()
	steps := r.sim.Steps()
	i := slices.Index(steps, "kubeadm-join:check")
	if i < 0 || !slices.Equal(steps[i:], []string{"kubeadm-join:check", "kubeadm-join:clean", "hns-cleanup", "kubeadm-join:join"}) {
		t.Errorf("the machine ran %v, want kubeadm-join's check, clean, hns-cleanup, then join", steps)
	}
	checkNoLeftState(t, r.sim)
	if !r.sim.Joined() {
		t.Error("the machine did not join again")
	}
	r.node()
}

// Reset removes the state of the node's services too, and a kubelet pki
// link (which sig-windows-tools' PrepareNode.ps1 makes) as a link: Windows
// PowerShell 5.1's Remove-Item -Recurse stops at a directory symbolic link
// (PowerShell/PowerShell#621). A machine whose join failed (no kubeadm
// reset to remove it first) resets and joins again.
func TestResetAfterAFailedJoinRemovesTheKubeletsPkiLink(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.sim.SetFact(`link:C:\var\lib\kubelet\etc\kubernetes\pki`, `C:\etc\kubernetes\pki`)
	r.sim.FailJoin = []string{"error execution phase kubelet-start: timed out waiting for the condition"}
	if _, err := r.join(windows.JoinOptions{}); err == nil {
		t.Fatal("the join did not fail")
	}
	r.sim.FailJoin = nil
	rep, err := r.reset()
	if err != nil {
		t.Fatalf("Reset: %v", err)
	}
	r.checkNoProblems()
	if i := slices.IndexFunc(rep.Steps, func(s windows.StepReport) bool { return s.Name == windows.StepKubeadmReset }); i < 0 || !rep.Steps[i].Changed {
		t.Error("kubeadm-reset did not run, or changed nothing")
	}
	if r.sim.Fact(`link:C:\var\lib\kubelet\etc\kubernetes\pki`) != "" || r.sim.Fact(`dir:C:\var\lib\kubelet`) != "" {
		t.Error("the kubelet's directory or its pki link is still there")
	}
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join after Reset: %v", err)
	}
	r.checkNoProblems()
}

// Reset removes the state the node's services kept, so that a later join
// starts clean.
func TestResetRemovesTheNodeServicesState(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	addLeftState(r.sim)
	if _, err := r.reset(); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	r.checkNoProblems()
	checkNoLeftState(t, r.sim)
}
