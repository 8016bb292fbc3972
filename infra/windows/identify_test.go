package windows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// identityAnswer is IdentifyScript's answer on a Windows Server 2022
// machine: Win32_OperatingSystem's Caption ("Microsoft Windows ..." always,
// Microsoft's Win32_OperatingSystem class reference) and Version
// (major.minor.build), the registry's UBR (HKLM\SOFTWARE\Microsoft\Windows
// NT\CurrentVersion, which the Windows kubelet appends to make the node's
// kernel version: kubernetes pkg/kubelet/winstats/version.go at v1.37.2),
// and HKLM\SYSTEM\HardwareConfig's LastConfig, a GUID in braces, which the
// kubelet reports, braces trimmed and upper-cased, as the node's
// systemUUID (pkg/kubelet/winstats/perfcounter_nodestats_windows.go,
// getSystemUUID).
const identityAnswer = `{"caption":"Microsoft Windows Server 2022 Datacenter","version":"10.0.20348","ubr":2340,"hostname":"WIN-2022-A","lastConfig":"{4c4c4544-0044-3510-8051-b4c04f4b4d32}"}`

func TestParseIdentity(t *testing.T) {
	id, err := windows.ParseIdentity("win-2022-a", identityAnswer+"\r\n")
	if err != nil {
		t.Fatal(err)
	}
	want := windows.Identity{Machine: "win-2022-a", Caption: "Microsoft Windows Server 2022 Datacenter", Build: "10.0.20348.2340",
		Hostname: "WIN-2022-A", SystemUUID: "4C4C4544-0044-3510-8051-B4C04F4B4D32"}
	if id != want {
		t.Errorf("ParseIdentity = %+v, want %+v", id, want)
	}
	for name, answer := range map[string]string{
		"not Windows":    `{"caption":"Ubuntu 24.04 LTS","version":"6.8.0","ubr":0,"hostname":"h","lastConfig":"{x}"}`,
		"no build":       `{"caption":"Microsoft Windows Server 2022 Datacenter","version":"","ubr":null,"hostname":"h","lastConfig":"{x}"}`,
		"no revision":    `{"caption":"Microsoft Windows Server 2022 Datacenter","version":"10.0.20348","hostname":"h","lastConfig":"{x}"}`,
		"no hardware id": `{"caption":"Microsoft Windows Server 2022 Datacenter","version":"10.0.20348","ubr":2340,"hostname":"h","lastConfig":""}`,
		"not JSON":       "WARNING: something\r\n",
	} {
		if id, err := windows.ParseIdentity("win-2022-a", answer); err == nil {
			t.Errorf("%s: %+v, want an error", name, id)
		}
	}
}

// windows-machine evidence needs an answer from the machine itself: the
// harness's simulated machine (behind the real WinRM client) answers only
// the steps of a join and reset, so it cannot say what it is, and never
// counts as a Windows machine.
func TestIdentifySimulatedMachineNeverCounts(t *testing.T) {
	r := newRig(t, simmachine.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := windows.Identify(ctx, r.exec)
	if err == nil {
		t.Fatalf("the simulated machine said what it is: %+v; nothing it answers may count as a Windows machine", id)
	}
	t.Logf("the simulated machine: %v", err)
}

func joinedNode(mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "win-2022-a", Labels: map[string]string{
			"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
			NodeInfo:   corev1.NodeSystemInfo{OperatingSystem: "windows", KernelVersion: "10.0.20348.2340", SystemUUID: "4C4C4544-0044-3510-8051-B4C04F4B4D32"},
		},
	}
	for _, f := range mutate {
		f(n)
	}
	return n
}

// INF-02: the node of the machine's name is the machine's, joined: a real
// node (kwok's simulated nodes carry the kwok.x-k8s.io/node annotation),
// Windows, Ready, of the machine's build, and run by a kubelet on this
// machine (its systemUUID is the machine's hardware configuration). A node
// the simulated machine's join registered, or a simulated node of the same
// name, is not.
func TestJoinedChecksTheNodeIsTheMachine(t *testing.T) {
	id, err := windows.ParseIdentity("win-2022-a", identityAnswer)
	if err != nil {
		t.Fatal(err)
	}
	if err := id.Joined(joinedNode()); err != nil {
		t.Errorf("the machine's node: %v", err)
	}
	for name, c := range map[string]struct {
		node *corev1.Node
		says string
	}{
		"a kwok node of the machine's name": {joinedNode(func(n *corev1.Node) {
			n.Annotations = map[string]string{"kwok.x-k8s.io/node": "fake"}
		}), "simulated"},
		"another machine's node": {joinedNode(func(n *corev1.Node) { n.Status.NodeInfo.SystemUUID = "0E8F2A1C-55AA-4B7E-9A0D-3C2B1A0F9E8D" }), "systemUUID"},
		"a node without a kubelet's systemUUID (the simulated join's)": {joinedNode(func(n *corev1.Node) { n.Status.NodeInfo.SystemUUID = "" }), "systemUUID"},
		"a node of another build": {joinedNode(func(n *corev1.Node) {
			n.Labels["node.kubernetes.io/windows-build"] = "10.0.17763"
			n.Status.NodeInfo.KernelVersion = "10.0.17763.5458"
		}), "build"},
		"a NotReady node": {joinedNode(func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }), "Ready"},
		"a Linux node":    {joinedNode(func(n *corev1.Node) { n.Labels["kubernetes.io/os"] = "linux" }), "windows"},
	} {
		err := id.Joined(c.node)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.says)
		}
	}
}
