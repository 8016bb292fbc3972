package kwok

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

func TestStagesAreEmbeddedAndAdapted(t *testing.T) {
	docs := strings.Split(Stages, "\n---\n")
	var names []string
	for _, d := range docs[1:] { // the first is the header comment
		var obj struct {
			APIVersion, Kind string
			Metadata         struct{ Name string }
			Spec             struct {
				ResourceRef struct{ Kind string }
				Next        struct {
					StatusTemplate string
					Delete         bool
				}
			}
		}
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			t.Fatalf("stage document does not parse: %v\n%s", err, d)
		}
		if obj.APIVersion != "kwok.x-k8s.io/v1alpha1" || obj.Kind != "Stage" {
			t.Errorf("%s: apiVersion %q kind %q", obj.Metadata.Name, obj.APIVersion, obj.Kind)
		}
		names = append(names, obj.Spec.ResourceRef.Kind+"/"+obj.Metadata.Name)
		switch obj.Metadata.Name {
		case "node-initialize":
			if !strings.Contains(obj.Spec.Next.StatusTemplate, `operatingSystem: {{ or $nodeInfo.operatingSystem "windows" }}`) {
				t.Errorf("node-initialize does not default the OS to windows")
			}
		case "pod-ready":
			tpl := obj.Spec.Next.StatusTemplate
			if strings.Contains(tpl, "PodIPsWith") || !strings.Contains(tpl, "PodIP }}") {
				t.Errorf("pod-ready must take pod IPs from kwok's --cidr (PodIP), not from the node's podCIDR")
			}
		}
	}
	want := "Node/node-initialize Node/node-heartbeat-with-lease Pod/pod-ready Pod/pod-complete Pod/pod-delete"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("stages %q, want %q", got, want)
	}
}

func TestArgsManageOnlyTheRunsNodes(t *testing.T) {
	args := strings.Join(Args("/k", "/c", "abc123", "10.253.0.0/16"), " ")
	for _, want := range []string{
		"--kubeconfig=/k", "--config=/c", "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake,winconform.io/kwok-run=abc123",
		"--cidr=10.253.0.0/16",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
}

func TestDefaultCIDRAvoidsTheLocalCluster(t *testing.T) {
	_, sim, _ := net.ParseCIDR(DefaultCIDR)
	for _, c := range []string{"10.244.0.0/16", "10.96.0.0/12"} {
		_, n, _ := net.ParseCIDR(c)
		if Overlap(sim, n) {
			t.Errorf("DefaultCIDR %s overlaps %s", DefaultCIDR, c)
		}
	}
}

func TestWindowsNode(t *testing.T) {
	taint := corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}
	n, err := WindowsNode("sim-1", "10.0.20348", "r1", "v1.37.2", IsolationTaint("r1"), taint)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		LabelOS: "windows", LabelArch: "amd64", LabelWindowsBuild: "10.0.20348", LabelHostname: "sim-1",
		LabelSimulated: "true", LabelRun: "r1",
	} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if n.Annotations[AnnotationNode] != "fake" || n.Annotations[AnnotationRun] != "r1" {
		t.Errorf("annotations %v", n.Annotations)
	}
	info := n.Status.NodeInfo
	if info.OperatingSystem != "windows" || info.OSImage != "Windows Server 2022 Datacenter" ||
		!strings.HasPrefix(info.KernelVersion, "10.0.20348.") || info.KubeletVersion != "v1.37.2" {
		t.Errorf("nodeInfo %+v", info)
	}
	if len(n.Spec.Taints) != 2 || n.Spec.Taints[0].Key != TaintKey || n.Spec.Taints[0].Value != "r1" || n.Spec.Taints[1] != taint {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	ip := net.ParseIP(n.Status.Addresses[0].Address)
	if _, testNet, _ := net.ParseCIDR("192.0.2.0/24"); ip == nil || !testNet.Contains(ip) {
		t.Errorf("address %v is not in TEST-NET-1", n.Status.Addresses)
	}
	own, other := IsolationToleration("r1"), IsolationToleration("r2")
	if !own.ToleratesTaint(klog.Background(), &n.Spec.Taints[0], false) || other.ToleratesTaint(klog.Background(), &n.Spec.Taints[0], false) {
		t.Errorf("the isolation toleration must tolerate its own run's taint only")
	}
	for _, bad := range []string{"", "10.0", "ten.0.1", "10.0.1.2"} {
		if _, err := WindowsNode("x", bad, "r1", ""); err == nil {
			t.Errorf("build %q accepted", bad)
		}
	}
}

func TestOrphaned(t *testing.T) {
	host := "h1"
	// A pid that no process has: a child that has exited and been reaped.
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	p.Wait()
	dead := strconv.Itoa(p.Pid)
	cases := map[string]bool{
		"h1/" + dead:                      true,
		"h2/" + dead:                      false, // another host's
		"h1/" + strconv.Itoa(os.Getpid()): false, // ours
		"h1/1":                            false, // alive (init)
		"":                                false,
		"h1/x":                            false,
	}
	for owner, want := range cases {
		if got := orphaned(owner, host); got != want {
			t.Errorf("orphaned(%q) = %v, want %v", owner, got, want)
		}
	}
}

// fakeKwok writes a script that stands in for kwok: it records its
// arguments and sleeps until killed (or exits at once with code).
func fakeKwok(t *testing.T, exitCode int) (bin, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	body := "#!/bin/sh\necho \"$@\" > " + argsFile + "\n"
	if exitCode != 0 {
		body += "echo 'no stages found' >&2\nexit " + strconv.Itoa(exitCode) + "\n"
	} else {
		body += "exec sleep 600\n"
	}
	bin = filepath.Join(dir, "kwok")
	if err := os.WriteFile(bin, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argsFile
}

func kubeconfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(p, []byte("apiVersion: v1\nkind: Config\n"), 0o600)
	return p
}

func TestStartAddStop(t *testing.T) {
	ctx := context.Background()
	bin, argsFile := fakeKwok(t, 0)
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "linux-1"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"}})
	sim, err := Start(ctx, Options{Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, RunID: "t1", Timeout: 5 * time.Second, KubeletVersion: "v1.37.2"})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(args), "winconform.io/kwok-run=t1") {
		t.Errorf("kwok ran with %q", args)
	}
	// Stand in for kwok: make the node Ready, with kwok's default OS (as
	// kwok's stock stage would), which the Sim must set back to Windows.
	go func() {
		for i := 0; i < 100; i++ {
			n, err := cs.CoreV1().Nodes().Get(ctx, "sim-a", metav1.GetOptions{})
			if err == nil {
				n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
				n.Status.NodeInfo.OperatingSystem = "linux"
				cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	n, err := sim.AddWindowsNode(ctx, "sim-a", "10.0.17763")
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.NodeInfo.OperatingSystem != "windows" || n.Labels[LabelWindowsBuild] != "10.0.17763" {
		t.Errorf("node %s: OS %q, build label %q", n.Name, n.Status.NodeInfo.OperatingSystem, n.Labels[LabelWindowsBuild])
	}
	if got := sim.Nodes(); len(got) != 1 || got[0] != "sim-a" {
		t.Errorf("Nodes() = %v", got)
	}
	pid := sim.cmd.Process.Pid
	if err := sim.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, "sim-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node still there after Stop: %v", err)
	}
	select {
	case <-sim.Exited():
	default:
		t.Errorf("kwok (pid %d) still runs after Stop", pid)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("pid %d still alive", pid)
	}
	if err := sim.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := sim.AddWindowsNode(ctx, "sim-b", "10.0.20348"); err == nil {
		t.Errorf("AddWindowsNode after Stop succeeded")
	}
}

func TestAddWindowsNodeTimesOut(t *testing.T) {
	ctx := context.Background()
	bin, _ := fakeKwok(t, 0)
	cs := fake.NewClientset()
	sim, err := Start(ctx, Options{RunID: "t2", Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop(ctx)
	start := time.Now()
	_, err = sim.AddWindowsNode(ctx, "never-ready", "10.0.20348")
	if err == nil || !strings.Contains(err.Error(), "did not turn Ready") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the wait was not bounded: %s", time.Since(start))
	}
}

func TestStartRefuses(t *testing.T) {
	ctx := context.Background()
	good, _ := fakeKwok(t, 0)
	failing, _ := fakeKwok(t, 3)
	overlapping := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "linux-1"}, Spec: corev1.NodeSpec{PodCIDRs: []string{"10.253.4.0/24"}}})
	kc := kubeconfig(t)
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"no binary", Options{Kubeconfig: kc}, "--kwok-binary"},
		{"missing binary", Options{Binary: "/nonexistent/kwok", Kubeconfig: kc}, "/nonexistent/kwok"},
		{"no kubeconfig", Options{Binary: good}, "kubeconfig"},
		{"bad CIDR", Options{Binary: good, Kubeconfig: kc, CIDR: "10.0.0.0/33", Client: fake.NewClientset()}, "pod CIDR"},
		{"bad run ID", Options{Binary: good, Kubeconfig: kc, RunID: "Has_Caps", Client: fake.NewClientset()}, "run ID"},
		{"no run ID", Options{Binary: good, Kubeconfig: kc, Client: fake.NewClientset()}, "no run ID"},
		{"overlapping CIDR", Options{RunID: "t3", Binary: good, Kubeconfig: kc, Client: overlapping}, "overlaps node linux-1"},
		{"kwok fails", Options{RunID: "t4", Binary: failing, Kubeconfig: kc, Client: fake.NewClientset()}, "no stages found"},
	}
	for _, c := range cases {
		sim, err := Start(ctx, c.opts)
		if err == nil {
			sim.Stop(ctx)
			t.Errorf("%s: started", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

func TestStartRemovesOrphans(t *testing.T) {
	ctx := context.Background()
	host, _ := os.Hostname()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	p.Wait()
	orphan, _ := WindowsNode("orphan", "10.0.20348", "old", "")
	orphan.Annotations[AnnotationOwner] = host + "/" + strconv.Itoa(p.Pid)
	other, _ := WindowsNode("others", "10.0.20348", "old2", "")
	other.Annotations[AnnotationOwner] = "another-host/" + strconv.Itoa(p.Pid)
	cs := fake.NewClientset(orphan, other)
	bin, _ := fakeKwok(t, 0)
	sim, err := Start(ctx, Options{RunID: "t5", Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop(ctx)
	if _, err := cs.CoreV1().Nodes().Get(ctx, "orphan", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the orphan is still there: %v", err)
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, "others", metav1.GetOptions{}); err != nil {
		t.Errorf("another host's node was removed: %v", err)
	}
}
