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

func TestArgsManageOnlyTheSimsNodes(t *testing.T) {
	args := strings.Join(Args("/k", "/c", "sched.abc123", "10.253.0.0/16"), " ")
	for _, want := range []string{
		"--kubeconfig=/k", "--config=/c", "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake,winconform.io/kwok-sim=sched.abc123",
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
	n, err := WindowsNode("sim-1", "10.0.20348", "v1.37.2", IsolationTaint("a.r1"), taint)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		LabelOS: "windows", LabelArch: "amd64", LabelWindowsBuild: "10.0.20348", LabelHostname: "sim-1",
		LabelSimulated: "true",
	} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if n.Annotations[AnnotationNode] != "fake" {
		t.Errorf("annotations %v", n.Annotations)
	}
	info := n.Status.NodeInfo
	if info.OperatingSystem != "windows" || info.OSImage != "Windows Server 2022 Datacenter" ||
		!strings.HasPrefix(info.KernelVersion, "10.0.20348.") || info.KubeletVersion != "v1.37.2" {
		t.Errorf("nodeInfo %+v", info)
	}
	if len(n.Spec.Taints) != 2 || n.Spec.Taints[0].Key != TaintKey || n.Spec.Taints[0].Value != "a.r1" || n.Spec.Taints[1] != taint {
		t.Errorf("taints %v", n.Spec.Taints)
	}
	ip := net.ParseIP(n.Status.Addresses[0].Address)
	if _, testNet, _ := net.ParseCIDR("192.0.2.0/24"); ip == nil || !testNet.Contains(ip) {
		t.Errorf("address %v is not in TEST-NET-1", n.Status.Addresses)
	}
	for _, bad := range []string{"", "10.0", "ten.0.1", "10.0.1.2"} {
		if _, err := WindowsNode("x", bad, ""); err == nil {
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
	sim, err := Start(ctx, Options{Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, RunID: "t1", Name: "sim", Timeout: 5 * time.Second, KubeletVersion: "v1.37.2"})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(args), "winconform.io/kwok-sim=sim.t1") {
		t.Errorf("kwok ran with %q", args)
	}
	// Stand in for kwok: make the node Ready, with kwok's default OS (as
	// kwok's stock stage would), which the Sim must set back to Windows.
	go func() {
		for i := 0; i < 100; i++ {
			n, err := cs.CoreV1().Nodes().Get(ctx, "sim-t1-17763", metav1.GetOptions{})
			if err == nil {
				n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
				n.Status.NodeInfo.OperatingSystem = "linux"
				cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	n, err := sim.AddWindowsNode(ctx, "10.0.17763")
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.NodeInfo.OperatingSystem != "windows" || n.Labels[LabelWindowsBuild] != "10.0.17763" {
		t.Errorf("node %s: OS %q, build label %q", n.Name, n.Status.NodeInfo.OperatingSystem, n.Labels[LabelWindowsBuild])
	}
	if n.Labels[LabelRun] != "t1" || n.Labels[LabelSim] != "sim.t1" || n.Annotations[AnnotationSim] != "sim.t1" {
		t.Errorf("node %s: labels %v annotations %v: want the run t1 and the Sim sim.t1", n.Name, n.Labels, n.Annotations)
	}
	if got := sim.Nodes(); len(got) != 1 || got[0] != "sim-t1-17763" {
		t.Errorf("Nodes() = %v", got)
	}
	pid := sim.cmd.Process.Pid
	if err := sim.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, "sim-t1-17763", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
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
	if _, err := sim.AddWindowsNode(ctx, "10.0.20348"); err == nil {
		t.Errorf("AddWindowsNode after Stop succeeded")
	}
}

func TestAddWindowsNodeTimesOut(t *testing.T) {
	ctx := context.Background()
	bin, _ := fakeKwok(t, 0)
	cs := fake.NewClientset()
	sim, err := Start(ctx, Options{RunID: "t2", Name: "sim", Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop(ctx)
	start := time.Now()
	_, err = sim.AddWindowsNode(ctx, "10.0.20348")
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
		{"bad run ID", Options{Binary: good, Kubeconfig: kc, RunID: "Has_Caps", Name: "s", Client: fake.NewClientset()}, "run ID"},
		{"no run ID", Options{Binary: good, Kubeconfig: kc, Name: "s", Client: fake.NewClientset()}, "no run ID"},
		{"no name", Options{Binary: good, Kubeconfig: kc, RunID: "t3", Client: fake.NewClientset()}, "simulator name"},
		{"dotted name", Options{Binary: good, Kubeconfig: kc, RunID: "t3", Name: "a.b", Client: fake.NewClientset()}, "simulator name"},
		{"name too long for the ID", Options{Binary: good, Kubeconfig: kc, RunID: "wc-261129083357-76c7", Name: strings.Repeat("n", 50), Client: fake.NewClientset()}, "shorten the name"},
		{"overlapping CIDR", Options{RunID: "t3", Name: "s", Binary: good, Kubeconfig: kc, Client: overlapping}, "overlaps node linux-1"},
		{"kwok fails", Options{RunID: "t4", Name: "s", Binary: failing, Kubeconfig: kc, Client: fake.NewClientset()}, "no stages found"},
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
	orphan, _ := WindowsNode("orphan", "10.0.20348", "")
	orphan.Annotations[AnnotationOwner] = host + "/" + strconv.Itoa(p.Pid)
	other, _ := WindowsNode("others", "10.0.20348", "")
	other.Annotations[AnnotationOwner] = "another-host/" + strconv.Itoa(p.Pid)
	cs := fake.NewClientset(orphan, other)
	bin, _ := fakeKwok(t, 0)
	sim, err := Start(ctx, Options{RunID: "t5", Name: "sim", Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, Timeout: time.Second})
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

// Two Sims of one run (two spec containers, on parallel processes) must
// stay apart: each kwok manages only its own nodes, and a pod that
// tolerates one Sim's isolation taint never tolerates the other's. With the
// run's ID as their shared key they did not, and one container's pods landed
// on the other's nodes.
func TestTwoSimsOfOneRunStayApart(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	bin, argsFile := fakeKwok(t, 0)
	start := func(name string) (*Sim, string) {
		sim, err := Start(ctx, Options{RunID: "wc-261129083357-76c7", Name: name, Binary: bin, Kubeconfig: kubeconfig(t), Client: cs, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Stop(ctx) })
		args, _ := os.ReadFile(argsFile)
		return sim, string(args)
	}
	sched, schedArgs := start("wc-sched")
	// The node is created before its (bounded) wait for kwok fails.
	sched.AddWindowsNode(ctx, "10.0.20348")
	lim, limArgs := start("wc-lim")
	if schedArgs == limArgs {
		t.Errorf("the two kwoks run with one command line %q: each would manage the other's nodes", schedArgs)
	}
	if sched.ID() == lim.ID() || sched.NodeName("10.0.20348") == lim.NodeName("10.0.20348") {
		t.Errorf("Sims %s and %s share an ID or a node name", sched.ID(), lim.ID())
	}
	taints := map[string]corev1.Taint{"wc-sched": sched.Taint(), "wc-lim": lim.Taint()}
	for name, tol := range map[string]corev1.Toleration{"wc-sched": sched.Toleration(), "wc-lim": lim.Toleration()} {
		for other, taint := range taints {
			if got := tol.ToleratesTaint(klog.Background(), &taint, false); got != (name == other) {
				t.Errorf("%s's toleration tolerates %s's taint: %v", name, other, got)
			}
		}
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, sched.NodeName("10.0.20348"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel := strings.TrimPrefix(Selector(lim.ID()), AnnotationNode+"=fake,")
	if k, v, _ := strings.Cut(sel, "="); n.Annotations[k] == v {
		t.Errorf("wc-lim's kwok selects wc-sched's node %s (%s)", n.Name, sel)
	}

	// A second Sim of the same name in the run is refused at Start.
	if sim, err := Start(ctx, Options{RunID: "wc-261129083357-76c7", Name: "wc-sched", Binary: bin, Kubeconfig: kubeconfig(t), Client: cs}); err == nil {
		sim.Stop(ctx)
		t.Errorf("a second simulator named wc-sched in one run started")
	} else if !strings.Contains(err.Error(), "its own") {
		t.Errorf("error %q does not say the fix", err)
	}
}

// ID is one-to-one: Sims with distinct (run, name) pairs never share one.
func TestIDIsOneToOne(t *testing.T) {
	runs := []string{"r", "r-1", "1-r", "wc-261129083357-76c7", "a-b"}
	names := []string{"a", "a-b", "b", "r", "1-r", "wc-sched"}
	seen := map[string][2]string{}
	for _, r := range runs {
		for _, n := range names {
			id := ID(r, n)
			if prev, ok := seen[id]; ok {
				t.Errorf("ID(%q, %q) = ID(%q, %q) = %q", r, n, prev[0], prev[1], id)
			}
			seen[id] = [2]string{r, n}
		}
	}
}
