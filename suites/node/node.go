package node

import (
	"context"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/images"
	winmachine "github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
)

const (
	linux   = labels.Linux
	windows = labels.Windows
)

// rebootTimeout bounds a Windows machine's reboot, until its node is Ready
// again with a new boot ID.
const rebootTimeout = 15 * time.Minute

// machine returns a Ready Windows node of the cluster that is a machine of
// the inventory, and the machine; or skips the spec: without an inventory,
// without --disruptive. It records the spec's evidence: the machine, with
// the build it reported, once it said what it is (winmachine.Identify).
func machine(ctx context.Context, f *framework.Framework, claim string) (facts.Node, remote.Exec) {
	if e2e.Options.Inventory == "" {
		skips.Skip(skips.NoInventory, claim+" shuts a Windows machine down and watches it over WinRM")
	}
	if !e2e.Options.Disruptive {
		skips.Skip(skips.NotDisruptive, claim+" reboots a Windows machine")
	}
	machines, err := e2e.Machines()
	framework.ExpectNoError(err, "connecting to the inventory's machines")
	fs := e2e.Facts(ctx, f)
	var names []string
	for _, n := range fs.Select(facts.Query{OS: windows, Real: true}) {
		m, ok := machines[n.Name]
		if !ok {
			continue
		}
		if !n.Ready {
			framework.Failf("Windows node %s of the inventory is not Ready: %s", n.Name, n.Condition)
		}
		// Only a machine that said what it is over WinRM counts.
		id, err := winmachine.Identify(ctx, m)
		framework.ExpectNoError(err, "machine %s did not say what it is over WinRM", m.Name())
		evidence.AddOn(claims.WindowsMachine, "Windows node and its machine, which answered over WinRM:",
			append(e2e.On(n), evidence.On{Name: m.Name(), Build: id.Build, Machine: true, Note: id.Caption + ", " + id.Build})...)
		return n, m
	}
	for name := range machines {
		names = append(names, name)
	}
	framework.Failf("none of the inventory's machines (%s) is a Windows node of the cluster: join them first (make join)", strings.Join(names, ", "))
	return facts.Node{}, nil
}

// lastBoot is when the machine last booted, as it says over WinRM.
func lastBoot(ctx context.Context, m remote.Exec) (time.Time, error) {
	res, err := m.RunPS(ctx, "last boot time", "(Get-CimInstance Win32_OperatingSystem).LastBootUpTime.ToUniversalTime().ToString('o')")
	if err != nil {
		return time.Time{}, err
	}
	if err := res.Err(); err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, strings.TrimSpace(res.Stdout))
}

// waitRebooted waits until the node is Ready with a boot ID other than
// before's, and the machine answers over WinRM with a boot time after
// booted; it returns the new boot ID and boot time.
func waitRebooted(ctx context.Context, f *framework.Framework, node string, m remote.Exec, bootID string, booted time.Time) (string, time.Time) {
	var now string
	var again time.Time
	err := wait.PollUntilContextTimeout(ctx, 10*time.Second, rebootTimeout, false, func(ctx context.Context) (bool, error) {
		n, err := f.ClientSet.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		now = n.Status.NodeInfo.BootID
		if now == bootID || !facts.FromNode(n).Ready {
			return false, nil
		}
		t, err := lastBoot(ctx, m)
		if err != nil || !t.After(booted) {
			return false, nil
		}
		again = t
		return true, nil
	})
	framework.ExpectNoError(err, "node %s did not come back Ready after a reboot within %s (boot ID %q, before %q; machine booted %s, before %s)",
		node, rebootTimeout, now, bootID, again, booted)
	return now, again
}

// hostProcess makes a HostProcess pod (as SYSTEM) on node that runs command once.
func hostProcess(name string, node facts.Node, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			OS:            &corev1.PodOS{Name: corev1.Windows},
			NodeSelector:  map[string]string{facts.LabelOS: windows, facts.LabelHostname: node.Name},
			Tolerations:   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			HostNetwork:   true,
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
				HostProcess: ptr.To(true), RunAsUserName: ptr.To(`NT AUTHORITY\SYSTEM`)}},
			Containers: []corev1.Container{{Name: "host", Image: probeImage(), Command: command}},
		},
	}
}

// finish creates p and waits (3 minutes) until it Succeeded or Failed.
func finish(ctx context.Context, f *framework.Framework, p *corev1.Pod) *corev1.Pod {
	_, err := f.ClientSet.CoreV1().Pods(f.Namespace.Name).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err)
	var got *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err = f.ClientSet.CoreV1().Pods(f.Namespace.Name).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed, nil
	})
	framework.ExpectNoError(err, "HostProcess pod %s did not finish", p.Name)
	return got
}

// probeImage is the probe's image, whose Windows variant each node pulls.
func probeImage() string { return images.Ref("probe") }
