package windows_test

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/simmachine"
	"github.com/winconform/winconform/testing/wsmantest"
)

// The steps a fresh machine runs: the feature's reboot, and kubeadm-join's
// check before the join itself.
var freshMachineSteps = []string{
	"preflight", "containers-feature", "reboot", "ping", "containers-feature",
	"containerd", "compartment-namespace", "kubelet", "crictl", "kube-proxy", "cni", "firewall", "defender", "probe",
	"kubeadm-join:check", "kubeadm-join:join",
}

func TestJoinFreshMachine(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{RebootTime: 50 * time.Millisecond})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()

	// INF-03: every step, in the documented order, each of which changed
	// the machine.
	if !slices.Equal(rep.Order, windows.JoinSteps()) || !slices.Equal(stepNames(rep), windows.JoinSteps()) {
		t.Errorf("order %v, steps %v, want %v", rep.Order, stepNames(rep), windows.JoinSteps())
	}
	want := []string{windows.ComponentRuntime, windows.ComponentKubelet, windows.ComponentKubeProxy, windows.ComponentCNI}
	if got := rep.ComponentOrder(); !slices.Equal(got, want) {
		t.Errorf("components set up in the order %v, want %v", got, want)
	}
	for _, s := range rep.Steps {
		if s.Name == windows.StepMetadataRoute || s.Name == windows.StepImages || s.Name == windows.StepUnderlayRoute {
			if !s.Skipped { // the inventory asks for no metadata route, no images; no underlay route is given
				t.Errorf("step %s ran on a machine whose inventory does not ask for it", s.Name)
			}
			continue
		}
		if s.Name == windows.StepPreflight || s.Name == windows.StepPod {
			if s.Changed {
				t.Errorf("%s changed something", s.Name)
			}
			continue
		}
		if !s.Changed || s.Skipped || s.Error != "" {
			t.Errorf("step %s: changed=%t skipped=%t error=%q, want a change", s.Name, s.Changed, s.Skipped, s.Error)
		}
	}
	if got := r.sim.Steps(); !slices.Equal(got, freshMachineSteps) {
		t.Errorf("the machine ran %v, want %v", got, freshMachineSteps)
	}
	if fs, _ := rep.Step(windows.StepContainersFeature); !fs.Rebooted || fs.Attempts != 2 || rep.Reboots != 1 {
		t.Errorf("containers-feature: rebooted=%t attempts=%d, report reboots %d; want one reboot and a second run", fs.Rebooted, fs.Attempts, rep.Reboots)
	}
	if rep.Build != "10.0.20348.2340" || rep.KubernetesVersion != testVersion || rep.Error != "" {
		t.Errorf("report build %q version %q error %q", rep.Build, rep.KubernetesVersion, rep.Error)
	}

	// The node: Ready, a Windows node of the machine's build, with the
	// inventory's labels and taints (INF-02, INF-09).
	n := r.node()
	if n.Labels["kubernetes.io/os"] != "windows" || n.Labels[windows.LabelWindowsBuild] != "10.0.20348" || n.Labels["topology.kubernetes.io/zone"] != "lab-1" {
		t.Errorf("node labels %v", n.Labels)
	}
	if !slices.ContainsFunc(n.Spec.Taints, func(tt corev1.Taint) bool {
		return tt.Key == "os" && tt.Value == "windows" && tt.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("node taints %v lack os=windows:NoSchedule", n.Spec.Taints)
	}

	// The machine.
	if !r.sim.Joined() || r.sim.Feature("Containers") != "Installed" {
		t.Errorf("joined %t, Containers %s", r.sim.Joined(), r.sim.Feature("Containers"))
	}
	kubelet, ok := r.sim.Service("kubelet")
	if !ok || !kubelet.Running || kubelet.StartType != "Automatic" || !slices.Equal(kubelet.DependsOn, []string{"containerd"}) ||
		!strings.Contains(kubelet.BinPath, "--windows-service") || !strings.Contains(kubelet.BinPath, "--hostname-override=win-2022-a") {
		t.Errorf("kubelet service %+v", kubelet)
	}
	if f, ok := r.sim.File(`C:\k\kube-proxy.exe`); !ok || f != testVersion {
		t.Errorf("kube-proxy.exe is %q, want version %s", f, testVersion)
	}
	if src := r.sim.Params(windows.StepKubeProxy)["KubeProxySource"]; src != "https://dl.k8s.io/"+testVersion+"/bin/windows/amd64/kube-proxy.exe" {
		t.Errorf("kube-proxy.exe from %q", src)
	}
	if f, ok := r.sim.File(`C:\winconform\probe.exe`); !ok || f != `C:\install\probe.exe` {
		t.Errorf("probe.exe from %q", f)
	}
	if port, ok := r.sim.Firewall(windows.KubeletFirewallRule); !ok || port != 10250 {
		t.Errorf("firewall rule: %d %t", port, ok)
	}
	paths, processes := windows.DefenderExclusions()
	if got := r.sim.Exclusions(); len(got) != len(paths)+len(processes) {
		t.Errorf("Defender exclusions %v", got)
	}
	if got, _ := r.containerdConfig().Str("cri.v1.images.pinned_images.sandbox"); got != images.Ref("pause") {
		t.Errorf("containerd's sandbox image %q, want %s", got, images.Ref("pause"))
	}

	// The bootstrap token is gone once used.
	if r.cluster.issued() != 1 {
		t.Errorf("%d tokens issued, want 1", r.cluster.issued())
	}
	secrets, _ := r.cluster.cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	if len(secrets.Items) != 0 {
		t.Errorf("bootstrap token secrets left: %d", len(secrets.Items))
	}

	// No password, and no bootstrap token (a credential too), in the
	// report or the transcripts.
	dir := t.TempDir()
	if err := r.exec.WriteTranscript(dir); err != nil {
		t.Fatal(err)
	}
	assertNoSecrets(t, append(r.cluster.issuedTokens(), testPassword), dir, reportJSON(t, rep))
}

func TestJoinTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("first Join: %v", err)
	}
	r.sim.ResetSteps()
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	r.checkNoProblems()
	if rep.Changed() {
		t.Errorf("the second join changed something:\n%s", reportJSON(t, rep.Steps))
	}
	for _, s := range rep.Steps {
		if s.Changed {
			t.Errorf("step %s changed", s.Name)
		}
	}
	if !slices.Equal(rep.Order, windows.JoinSteps()) {
		t.Errorf("order %v", rep.Order)
	}
	// No token, no join, no reboot the second time.
	if r.cluster.issued() != 1 || rep.Reboots != 0 {
		t.Errorf("tokens issued %d, reboots %d", r.cluster.issued(), rep.Reboots)
	}
	if got := r.sim.Steps(); slices.Contains(got, "kubeadm-join:join") || slices.Contains(got, "reboot") {
		t.Errorf("the second join ran %v", got)
	}
}

func TestResetThenJoinAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	// What a running node has: flannel's networks, a workload pod and a
	// DaemonSet's pod.
	r.sim.AddHNSNetwork("External")
	r.sim.AddHNSNetwork("flannel.4096")
	r.sim.AddHNSNetwork("nat")
	ctx := context.Background()
	isController := true
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: r.machine.Name}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-windows-x", Namespace: "kube-system", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "kube-proxy-windows", UID: "u1", Controller: &isController}}},
			Spec: corev1.PodSpec{NodeName: r.machine.Name}},
	} {
		if _, err := r.cluster.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	rep, err := r.reset()
	if err != nil {
		t.Fatalf("Reset: %v", err)
	}
	r.checkNoProblems()
	wantOrder := []string{windows.StepDrain, windows.StepDeleteNode, windows.StepKubeadmReset, windows.StepHNSCleanup, windows.StepUnderlayUnroute}
	if !slices.Equal(rep.Order, wantOrder) {
		t.Errorf("reset order %v, want %v", rep.Order, wantOrder)
	}
	for _, s := range rep.Steps {
		if s.Name == windows.StepUnderlayUnroute {
			if !s.Skipped { // the join gave the machine no underlay route
				t.Errorf("reset step %s ran for a machine without underlay routes", s.Name)
			}
			continue
		}
		if !s.Changed {
			t.Errorf("reset step %s changed nothing", s.Name)
		}
	}
	if _, err := r.cluster.cs.CoreV1().Nodes().Get(ctx, r.machine.Name, metav1.GetOptions{}); err == nil {
		t.Error("the node still exists")
	}
	if _, err := r.cluster.cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Error("the workload pod was not evicted")
	}
	if r.sim.Joined() {
		t.Error("the machine still has its kubelet.conf")
	}
	if _, ok := r.sim.Service("kubelet"); ok {
		t.Error("the kubelet service still exists")
	}
	if got := r.sim.HNSNetworks(); !slices.Equal(got, []string{"nat"}) {
		t.Errorf("HNS networks after reset: %v, want only nat", got)
	}

	// A second reset has nothing to do.
	rep, err = r.reset()
	if err != nil {
		t.Fatalf("second Reset: %v", err)
	}
	for _, s := range rep.Steps {
		if s.Changed {
			t.Errorf("second reset: step %s changed", s.Name)
		}
	}

	// And the machine joins again: the kubelet service, the join and the
	// node change; the runtime and the binaries stay.
	jrep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join after Reset: %v", err)
	}
	changed := map[string]bool{}
	for _, s := range jrep.Steps {
		changed[s.Name] = s.Changed
	}
	for _, name := range []string{windows.StepKubelet, windows.StepKubeadmJoin, windows.StepNode} {
		if !changed[name] {
			t.Errorf("join after reset: step %s did not change", name)
		}
	}
	for _, name := range []string{windows.StepContainerd, windows.StepKubeProxy, windows.StepCNI, windows.StepFirewall, windows.StepDefender, windows.StepProbe} {
		if changed[name] {
			t.Errorf("join after reset: step %s changed", name)
		}
	}
	if n := r.node(); n.Labels["topology.kubernetes.io/zone"] != "lab-1" {
		t.Errorf("rejoined node labels %v", n.Labels)
	}
	r.checkNoProblems()
}

func TestSimulatedRebootAfterContainersFeature(t *testing.T) {
	t.Parallel()
	// The machine is down (every connection dropped) for 300ms.
	r := newRig(t, simmachine.Config{RebootTime: 300 * time.Millisecond})
	start := time.Now()
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if r.sim.Reboots() != 1 || rep.Reboots != 1 {
		t.Errorf("reboots: machine %d, report %d", r.sim.Reboots(), rep.Reboots)
	}
	if r.sim.Dropped() < 2 {
		t.Errorf("%d requests dropped while the machine was down: the harness did not poll it", r.sim.Dropped())
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("the join did not wait for the reboot")
	}
	fs, _ := rep.Step(windows.StepContainersFeature)
	if !fs.Changed || !fs.Rebooted || fs.Attempts != 2 {
		t.Errorf("containers-feature %+v", fs)
	}
	// The second run, after the reboot, found the feature installed.
	if fs.Status["installState"] != "Installed" || fs.Status["restartNeeded"] != false || fs.Status["changed"] != false {
		t.Errorf("containers-feature status after the reboot: %v", fs.Status)
	}
	r.checkNoProblems()
}

func TestSimulatedMachineThatDoesNotComeBack(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{RebootTime: time.Hour})
	opts := windows.JoinOptions{Timeouts: testTimeouts()}
	opts.Timeouts.Reboot = 400 * time.Millisecond
	start := time.Now()
	rep, err := r.join(opts)
	elapsed := time.Since(start)
	if !errors.Is(err, windows.ErrRebootTimeout) {
		t.Fatalf("err = %v, want ErrRebootTimeout", err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("gave up after %s, the reboot timeout is 400ms", elapsed)
	}
	var se *windows.StepError
	if !errors.As(err, &se) || se.Step != windows.StepContainersFeature || !strings.Contains(err.Error(), "did not answer over WinRM again within 400ms") {
		t.Errorf("error %q does not name the step and the wait", err)
	}
	if rep == nil || rep.Error == "" || slices.Contains(rep.Order, windows.StepContainerd) {
		t.Errorf("report %+v", rep)
	}
}

func TestSimulatedRebootDuringAStepIsRetried(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, RebootTime: 100 * time.Millisecond})
	r.sim.RebootDuring = map[string][]int{"containerd": {1}}
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	st, _ := rep.Step(windows.StepContainerd)
	if st.Attempts != 2 || !st.Changed {
		t.Errorf("containerd: attempts %d changed %t, want a second run after the drop", st.Attempts, st.Changed)
	}
	if svc, ok := r.sim.Service("containerd"); !ok || !svc.Running {
		t.Errorf("containerd service %+v", svc)
	}
	r.checkNoProblems()
}

func TestSimulatedConnectionThatKeepsDroppingFails(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, RebootTime: 20 * time.Millisecond})
	r.sim.RebootDuring = map[string][]int{"kubelet": {1, 2, 3, 4, 5}}
	rep, err := r.join(windows.JoinOptions{ConnRetries: 2})
	if !errors.Is(err, windows.ErrConnectionLost) || !errors.Is(err, remote.ErrConnLost) {
		t.Fatalf("err = %v, want ErrConnectionLost (and remote.ErrConnLost)", err)
	}
	if !strings.Contains(err.Error(), `step "kubelet"`) || !strings.Contains(err.Error(), "3 times") {
		t.Errorf("error %q does not say which step and how often", err)
	}
	if st, _ := rep.Step(windows.StepKubelet); st.Attempts != 3 {
		t.Errorf("kubelet attempts %d, want 3 (one and two retries)", st.Attempts)
	}
}

func TestSimulatedKubeadmJoinFailureShowsItsOutput(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, "kubeadm line "+strings.Repeat("x", i%3)+strconv.Itoa(i))
	}
	lines = append(lines, "error execution phase kubelet-start: timed out waiting for the condition")
	r.sim.FailJoin = lines
	logs := t.TempDir()
	start := time.Now()
	rep, err := r.join(windows.JoinOptions{LogsDir: logs})
	if !errors.Is(err, windows.ErrKubeadmJoin) {
		t.Fatalf("err = %v, want ErrKubeadmJoin", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	msg := err.Error()
	for _, want := range []string{"kubeadm join", "error execution phase kubelet-start: timed out waiting for the condition", "kubeadm line xx29"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "kubeadm line x1\n") || strings.Contains(msg, "line x10\n") {
		t.Errorf("error holds more than the last lines:\n%s", msg)
	}
	if rep.LogsDir != logs {
		t.Errorf("report logs dir %q", rep.LogsDir)
	}
	// The bootstrap token is deleted even though the join failed.
	secrets, _ := r.cluster.cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	if len(secrets.Items) != 0 {
		t.Errorf("bootstrap token secrets left: %d", len(secrets.Items))
	}
	if err := r.exec.WriteTranscript(logs); err != nil {
		t.Fatal(err)
	}
	assertNoPassword(t, logs, reportJSON(t, rep), msg)
	r.checkNoProblems()
}

func TestBuildTooOld(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{Build: "10.0.14393.7259"})
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrBuildTooOld) {
		t.Fatalf("err = %v, want ErrBuildTooOld", err)
	}
	for _, want := range []string{"10.0.14393.7259", "10.0.17763", "ltsc2019", "10.0.20348", "10.0.26100"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if got := r.sim.Steps(); !slices.Equal(got, []string{"preflight"}) {
		t.Errorf("the machine ran %v after its build was refused", got)
	}
}

func TestExpectedBuildDiffers(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{Build: "10.0.20348.2340"}, func(m *config.Machine) {
		m.ExpectedBuild = config.Build{Major: 10, Minor: 0, Number: 17763}
	})
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrBuildMismatch) || !strings.Contains(err.Error(), "10.0.20348") || !strings.Contains(err.Error(), "expects 10.0.17763") {
		t.Fatalf("err = %v, want ErrBuildMismatch naming both builds", err)
	}
	// The same build with another update revision is the expected build.
	r2 := newRig(t, simmachine.Config{Build: "10.0.17763.6893", ContainersInstalled: true}, func(m *config.Machine) {
		m.ExpectedBuild = config.Build{Major: 10, Minor: 0, Number: 17763}
	})
	r2.cluster.buildLabel = "10.0.17763"
	if _, err := r2.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join of a machine of the expected build: %v", err)
	}
}

func TestNodeBuildLabelDiffers(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.cluster.buildLabel = "10.0.17763"
	rep, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrBuildLabel) {
		t.Fatalf("err = %v, want ErrBuildLabel", err)
	}
	if !strings.Contains(err.Error(), `node.kubernetes.io/windows-build="10.0.17763"`) || !strings.Contains(err.Error(), "10.0.20348") {
		t.Errorf("error %q does not name the label and the build", err)
	}
	if st, _ := rep.Step(windows.StepNode); st.Error == "" {
		t.Errorf("the node step reports no error")
	}
}

func TestWrongPasswordFailsFast(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{})
	wrong := r.machine
	wrong.PasswordFrom.Secret = "not-the-password"
	exec := r.connect(wrong)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := windows.Join(ctx, wrong, exec, r.cluster, windows.JoinOptions{Timeouts: testTimeouts()})
	if !errors.Is(err, remote.ErrAuth) {
		t.Fatalf("err = %v, want remote.ErrAuth", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s to fail", d)
	}
	var se *windows.StepError
	if !errors.As(err, &se) || se.Step != windows.StepPreflight || !strings.Contains(err.Error(), "401") {
		t.Errorf("error %q does not name the step and the 401", err)
	}
	if st, _ := rep.Step(windows.StepPreflight); st.Attempts != 1 {
		t.Errorf("preflight ran %d times: an authentication failure is not retried", st.Attempts)
	}
	if len(r.sim.Steps()) != 0 {
		t.Errorf("the machine ran %v", r.sim.Steps())
	}
}

func TestNotAdministrator(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{NotAdmin: true})
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrNotAdmin) || !strings.Contains(err.Error(), `WIN-SIM\Administrator`) {
		t.Fatalf("err = %v, want ErrNotAdmin naming the account", err)
	}
}

func TestSimulatedHangingStepTimesOut(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.sim.Hang = map[string]time.Duration{"cni": time.Minute}
	opts := windows.JoinOptions{Timeouts: testTimeouts()}
	opts.Timeouts.Steps = map[string]time.Duration{windows.StepCNI: 300 * time.Millisecond}
	start := time.Now()
	_, err := r.join(opts)
	if !errors.Is(err, windows.ErrStepTimeout) || !errors.Is(err, remote.ErrTimeout) {
		t.Fatalf("err = %v, want ErrStepTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s, the step's timeout is 300ms", d)
	}
	if !strings.Contains(err.Error(), `step "cni"`) || !strings.Contains(err.Error(), "300ms") {
		t.Errorf("error %q does not name the step and its timeout", err)
	}
}

func TestProbeSkippedWithoutSource(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) {
		m.Binaries = nil
		m.DefenderExclusions = false
	})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	for _, name := range []string{windows.StepProbe, windows.StepDefender} {
		if st, ok := rep.Step(name); !ok || !st.Skipped || st.Changed || st.SkipReason == "" {
			t.Errorf("step %s: %+v, want skipped with a reason", name, st)
		}
	}
	if got := r.sim.Steps(); slices.Contains(got, "probe") || slices.Contains(got, "defender") {
		t.Errorf("the machine ran %v", got)
	}
	if !slices.Equal(rep.Order, windows.JoinSteps()) {
		t.Errorf("order %v", rep.Order)
	}
}

func TestSimulatedStepErrorIsShown(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	r.sim.FailStep = map[string]string{"kube-proxy": `Invoke-WebRequest : The remote server returned an error: (404) Not Found.`}
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrStepFailed) {
		t.Fatalf("err = %v, want ErrStepFailed", err)
	}
	var se *windows.StepError
	if !errors.As(err, &se) || se.Step != windows.StepKubeProxy || se.ExitCode != 1 {
		t.Fatalf("error %#v", err)
	}
	// PowerShell's error record, decoded from CLIXML.
	if !strings.Contains(err.Error(), "(404) Not Found.") || strings.Contains(err.Error(), "CLIXML") {
		t.Errorf("error %q does not show the script's error plainly", err)
	}
}

// A machine whose WinRM endpoint goes away while it reboots (connections
// refused), and comes back at the same address. Tests named Simulated rest
// on what only the simulated machine decides: how it drops, hangs, fails
// or reboots, and what kubeadm prints; the rest answer from the data the
// scripts' own Pester tests check (infra/windows/scripts/steptest).
func TestSimulatedRebootWithConnectionsRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{RebootTime: 10 * time.Millisecond})
	addr := net.JoinHostPort(r.srv.Host(), strconv.Itoa(r.srv.Port()))
	var mu sync.Mutex
	var restarted *wsmantest.Server
	refused := make(chan struct{})
	r.sim.OnReboot = func() {
		r.srv.Close()
		// Nothing listens: connections are refused for a while.
		time.Sleep(300 * time.Millisecond)
		close(refused)
		srv, err := wsmantest.Start(wsmantest.WithAddr(addr), wsmantest.WithCredentials("Administrator", testPassword),
			wsmantest.WithHandler(r.sim.Handler()), wsmantest.WithIntercept(r.sim.Intercept()))
		if err != nil {
			t.Errorf("restarting the endpoint: %v", err)
			return
		}
		mu.Lock()
		restarted = srv
		mu.Unlock()
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if restarted != nil {
			restarted.Close()
		}
	})
	var log strings.Builder
	rep, err := r.join(windows.JoinOptions{Log: &syncWriter{w: &log}})
	if err != nil {
		t.Fatalf("Join: %v\n%s", err, log.String())
	}
	select {
	case <-refused:
	default:
		t.Fatal("the endpoint never went away")
	}
	if rep.Reboots != 1 || !strings.Contains(log.String(), "the machine answers again") {
		t.Errorf("reboots %d; log:\n%s", rep.Reboots, log.String())
	}
	r.checkNoProblems()
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// A machine that never answers (a wrong address, WinRM not listening) is
// unreachable, not rebooting: the join fails at once, without waiting the
// reboot timeout for it.
func TestUnreachableMachineFailsFast(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens here: connections are refused
	m := r.machine
	m.Address, m.WinRM.Port, m.WinRM.HTTPS, m.WinRM.CABundle = "127.0.0.1", config.Port(closed), false, config.PEMFile{}
	exec := r.connect(m)
	timeouts := testTimeouts()
	timeouts.Reboot = time.Minute // the join must not wait for this
	start := time.Now()
	rep, err := windows.Join(context.Background(), m, exec, r.cluster, windows.JoinOptions{Timeouts: timeouts})
	if !errors.Is(err, remote.ErrUnreachable) {
		t.Fatalf("err = %v, want remote.ErrUnreachable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to give up on an unreachable machine", d)
	}
	var se *windows.StepError
	if !errors.As(err, &se) || se.Step != windows.StepPreflight || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("error %q does not name the step and say the machine did not answer", err)
	}
	if st, _ := rep.Step(windows.StepPreflight); st.Attempts != 1 {
		t.Errorf("preflight ran %d times", st.Attempts)
	}
}

// The node's first HNS network, which flannel's HostProcess pod makes as
// soon as the Node registers, cuts the host's connections for a few seconds
// (Microsoft's SDN scripts, Kubernetes/windows/helper.psm1: "Expect
// disruption in node connectivity for few seconds"; sig-windows-tools'
// KubeClusterHelper.psm1 made a first network for that reason: "it causes
// network blip"). When that cut hits the WinRM request running kubeadm
// join, the join has happened: the step, run again, looks the Node up
// anew, finds the machine joined and the kubelet running with kubeadm's
// flags, and the join succeeds. Before, the script rendered once (the Node
// absent) counted the join's own files as leftovers and failed with "the
// clean mode comes first".
func TestSimulatedJoinWhoseConnectionTheNewNetworkCuts(t *testing.T) {
	t.Parallel()
	for name, ip := range map[string]string{"without nodeIP": "", "with nodeIP": "10.20.30.40"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) { m.NodeIP = ip })
			r.sim.DropAfter = map[string][]int{"kubeadm-join": {2}} // check, then join
			rep, err := r.join(windows.JoinOptions{})
			if err != nil {
				t.Fatalf("Join: %v", err)
			}
			r.checkNoProblems()
			// The wait for the machine to answer again runs ping.
			steps := r.sim.Steps()
			if want := []string{"kubeadm-join:check", "kubeadm-join:join", "ping", "kubeadm-join:join"}; !slices.Equal(steps[len(steps)-4:], want) {
				t.Errorf("the machine ran %v, want it to end with %v", steps, want)
			}
			st, _ := rep.Step(windows.StepKubeadmJoin)
			if st.Attempts != 3 || !st.Changed || st.Status["joined"] != true || st.Error != "" {
				t.Errorf("kubeadm-join: attempts %d changed %t status %v error %q, want the join run again and found joined", st.Attempts, st.Changed, st.Status, st.Error)
			}
			if p := r.sim.Params(windows.StepKubeadmJoin); p["NodeExists"] != "true" {
				t.Errorf("the join ran again with NodeExists=%q, want the Node looked up anew", p["NodeExists"])
			}
			kubelet, _ := r.sim.Service("kubelet")
			if !kubelet.Running || (ip != "" && !strings.Contains(kubelet.Process, "--node-ip="+ip)) {
				t.Errorf("the kubelet runs %q (running %t), want kubeadm's flags", kubelet.Process, kubelet.Running)
			}
			if r.sim.Reboots() != 0 {
				t.Errorf("%d reboots; the cut is no reboot", r.sim.Reboots())
			}
		})
	}
}
