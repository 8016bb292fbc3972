package facts

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

type nodeOpt func(*corev1.Node)

func node(name string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func label(k, v string) nodeOpt      { return func(n *corev1.Node) { n.Labels[k] = v } }
func annotation(k, v string) nodeOpt { return func(n *corev1.Node) { n.Annotations[k] = v } }
func nodeInfoOS(os string) nodeOpt {
	return func(n *corev1.Node) { n.Status.NodeInfo.OperatingSystem = os }
}
func ready(s corev1.ConditionStatus) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: s})
	}
}
func condition(t corev1.NodeConditionType, s corev1.ConditionStatus) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: s})
	}
}
func address(t corev1.NodeAddressType, a string) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: t, Address: a})
	}
}

func TestFromNodeFull(t *testing.T) {
	taints := []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	n := node("win-1",
		label(LabelOS, "windows"),
		label(LabelWindowsBuild, "10.0.20348"),
		nodeInfoOS("linux"), // the label wins
		condition(corev1.NodeMemoryPressure, corev1.ConditionFalse),
		ready(corev1.ConditionTrue),
		address(corev1.NodeHostName, "win-1"),
		address(corev1.NodeExternalIP, "203.0.113.7"),
		address(corev1.NodeInternalIP, "10.0.0.5"),
		address(corev1.NodeInternalIP, "10.0.0.6"),
	)
	n.Status.NodeInfo.Architecture = "amd64"
	n.Status.NodeInfo.KernelVersion = "10.0.20348.2340"
	n.Status.NodeInfo.OSImage = "Windows Server 2022 Datacenter"
	n.Spec.Taints = taints

	got := FromNode(n)
	want := Node{
		Name: "win-1", OS: "windows", Arch: "amd64", Ready: true, WindowsBuild: "10.0.20348",
		KernelVersion: "10.0.20348.2340", OSImage: "Windows Server 2022 Datacenter",
		InternalIP: "10.0.0.5", Taints: taints,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromNode =\n %+v\nwant\n %+v", got, want)
	}
}

func TestFromNodeOSFallsBackToNodeInfo(t *testing.T) {
	if got := FromNode(node("a", nodeInfoOS("windows"))).OS; got != "windows" {
		t.Errorf("OS without label = %q, want nodeInfo's windows", got)
	}
	if got := FromNode(node("a", label(LabelOS, ""), nodeInfoOS("linux"))).OS; got != "linux" {
		t.Errorf("OS with an empty label = %q, want nodeInfo's linux", got)
	}
	if got := FromNode(node("a")).OS; got != "" {
		t.Errorf("OS with neither = %q, want empty", got)
	}
}

func TestFromNodeControlPlane(t *testing.T) {
	if !FromNode(node("cp", label(LabelControlPlane, ""))).ControlPlane {
		t.Error("node with an empty control-plane label is not ControlPlane")
	}
	if FromNode(node("w", label("node-role.kubernetes.io/worker", ""))).ControlPlane {
		t.Error("worker node is ControlPlane")
	}
}

func TestFromNodeSimulated(t *testing.T) {
	if !FromNode(node("k", annotation(AnnotationKwok, "fake"))).Simulated {
		t.Error("node with the kwok annotation is not Simulated")
	}
	if FromNode(node("r", annotation("other", "fake"))).Simulated {
		t.Error("node without the kwok annotation is Simulated")
	}
}

func TestFromNodeReady(t *testing.T) {
	cases := []struct {
		name string
		opts []nodeOpt
		want bool
	}{
		{"true", []nodeOpt{ready(corev1.ConditionTrue)}, true},
		{"false", []nodeOpt{ready(corev1.ConditionFalse)}, false},
		{"unknown", []nodeOpt{ready(corev1.ConditionUnknown)}, false},
		{"no conditions", nil, false},
		{"only other conditions true", []nodeOpt{condition(corev1.NodeDiskPressure, corev1.ConditionTrue)}, false},
	}
	for _, c := range cases {
		if got := FromNode(node("n", c.opts...)).Ready; got != c.want {
			t.Errorf("%s: Ready = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFromNodeInternalIP(t *testing.T) {
	if got := FromNode(node("n", address(corev1.NodeExternalIP, "1.2.3.4"))).InternalIP; got != "" {
		t.Errorf("InternalIP with only an external address = %q, want empty", got)
	}
	if got := FromNode(node("n", address(corev1.NodeExternalIP, "1.2.3.4"), address(corev1.NodeInternalIP, "172.18.0.2"))).InternalIP; got != "172.18.0.2" {
		t.Errorf("InternalIP = %q, want 172.18.0.2", got)
	}
}

func sampleFacts() *Facts {
	return &Facts{ServerVersion: "v1.37.2", CNI: "flannel/vxlan", Nodes: []Node{
		{Name: "cp", OS: "linux", ControlPlane: true, Ready: true},
		{Name: "lin-1", OS: "linux", Ready: true},
		{Name: "lin-2", OS: "linux", Ready: false},
		{Name: "win-kwok", OS: "windows", Ready: true, Simulated: true},
		{Name: "win-1", OS: "windows", Ready: true},
		{Name: "win-cp", OS: "windows", ControlPlane: true, Ready: true},
		{Name: "win-2", OS: "windows", Ready: false},
	}}
}

func names(ns []Node) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

func TestSelect(t *testing.T) {
	f := sampleFacts()
	cases := []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"lin-1", "lin-2", "win-kwok", "win-1", "win-2", "cp", "win-cp"}},
		{Query{OS: "linux"}, []string{"lin-1", "lin-2", "cp"}},
		{Query{OS: "linux", Ready: true}, []string{"lin-1", "cp"}},
		{Query{OS: "windows"}, []string{"win-kwok", "win-1", "win-2", "win-cp"}},
		{Query{OS: "windows", Real: true}, []string{"win-1", "win-2", "win-cp"}},
		{Query{OS: "windows", Real: true, Ready: true}, []string{"win-1", "win-cp"}},
		{Query{OS: "darwin"}, []string{}},
	}
	for _, c := range cases {
		if got := names(f.Select(c.q)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Select(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
	// Select does not reorder the facts themselves.
	if got := names(f.Nodes); got[0] != "cp" {
		t.Errorf("Select reordered Facts.Nodes: %v", got)
	}
}

func TestControlPlane(t *testing.T) {
	if got, want := names(sampleFacts().ControlPlane()), []string{"cp", "win-cp"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ControlPlane() = %v, want %v", got, want)
	}
	if got := (&Facts{Nodes: []Node{{Name: "w"}}}).ControlPlane(); len(got) != 0 {
		t.Errorf("ControlPlane() without control-plane nodes = %v", got)
	}
}

func TestSummary(t *testing.T) {
	if got, want := sampleFacts().Summary(), "Kubernetes v1.37.2, nodes: 3 linux, 4 windows (1 simulated), CNI flannel/vxlan"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	f := &Facts{ServerVersion: "v1.30.0", CNI: "unknown", Nodes: []Node{{Name: "a", OS: "linux"}}}
	if got, want := f.Summary(), "Kubernetes v1.30.0, nodes: 1 linux, 0 windows, CNI unknown"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

func fakeClient(gitVersion string, objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: gitVersion}
	return cs
}

func flannelConfig(netConf string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-flannel", Name: "kube-flannel-cfg"},
		Data: map[string]string{
			"cni-conf.json": `{"name":"cbr0","cniVersion":"0.3.1"}`,
			"net-conf.json": netConf,
		},
	}
}

func TestDiscover(t *testing.T) {
	cs := fakeClient("v1.37.2",
		node("zeta-win", label(LabelOS, "windows"), annotation(AnnotationKwok, "fake"), ready(corev1.ConditionTrue)),
		node("alpha-cp", label(LabelOS, "linux"), label(LabelControlPlane, ""), ready(corev1.ConditionTrue), address(corev1.NodeInternalIP, "172.18.0.2")),
		node("mid-linux", nodeInfoOS("linux"), ready(corev1.ConditionFalse)),
		flannelConfig("{\n  \"Network\": \"10.244.0.0/16\",\n  \"Backend\": {\n    \"Type\": \"vxlan\"\n  }\n}\n"),
	)
	f, err := Discover(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	if f.ServerVersion != "v1.37.2" {
		t.Errorf("ServerVersion = %q", f.ServerVersion)
	}
	if f.CNI != "flannel/vxlan" {
		t.Errorf("CNI = %q, want flannel/vxlan", f.CNI)
	}
	if got, want := names(f.Nodes), []string{"alpha-cp", "mid-linux", "zeta-win"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("nodes = %v, want sorted %v", got, want)
	}
	cp, lin, win := f.Nodes[0], f.Nodes[1], f.Nodes[2]
	if !cp.ControlPlane || !cp.Ready || cp.InternalIP != "172.18.0.2" || cp.OS != "linux" {
		t.Errorf("control-plane node = %+v", cp)
	}
	if lin.OS != "linux" || lin.Ready || lin.ControlPlane {
		t.Errorf("linux node = %+v", lin)
	}
	if win.OS != "windows" || !win.Simulated {
		t.Errorf("windows node = %+v", win)
	}
	if s := f.Summary(); s != "Kubernetes v1.37.2, nodes: 2 linux, 1 windows (1 simulated), CNI flannel/vxlan" {
		t.Errorf("Summary() = %q", s)
	}
}

func TestDiscoverCNI(t *testing.T) {
	cases := []struct {
		name string
		objs []runtime.Object
		want string
	}{
		{"no flannel", nil, "unknown"},
		{"host-gw", []runtime.Object{flannelConfig(`{"Network":"10.244.0.0/16","Backend":{"Type":"host-gw"}}`)}, "flannel/host-gw"},
		{"no backend", []runtime.Object{flannelConfig(`{"Network":"10.244.0.0/16"}`)}, "flannel"},
		{"bad json", []runtime.Object{flannelConfig(`not json`)}, "flannel"},
		{"other namespace", []runtime.Object{&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-flannel-cfg"},
			Data:       map[string]string{"net-conf.json": `{"Backend":{"Type":"vxlan"}}`},
		}}, "unknown"},
	}
	for _, c := range cases {
		f, err := Discover(context.Background(), fakeClient("v1.33.0", c.objs...))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if f.CNI != c.want {
			t.Errorf("%s: CNI = %q, want %q", c.name, f.CNI, c.want)
		}
		if len(f.Nodes) != 0 {
			t.Errorf("%s: nodes = %v, want none", c.name, f.Nodes)
		}
	}
}

func TestDiscoverErrors(t *testing.T) {
	cs := fakeClient("v1.37.2")
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("boom")
	})
	if _, err := Discover(context.Background(), cs); err == nil || !strings.Contains(err.Error(), "listing nodes") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Discover with failing node list: err = %v", err)
	}

	cs = fakeClient("v1.37.2")
	cs.PrependReactor("get", "version", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("no server")
	})
	if _, err := Discover(context.Background(), cs); err == nil || !strings.Contains(err.Error(), "server version") || !strings.Contains(err.Error(), "no server") {
		t.Errorf("Discover with failing version: err = %v", err)
	}
}

func TestGetDiscoversOnce(t *testing.T) {
	mu.Lock()
	saved := cached
	cached = nil
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); cached = saved; mu.Unlock() })

	failing := fakeClient("v1.37.2")
	failing.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("boom")
	})
	if _, err := Get(context.Background(), failing); err == nil {
		t.Fatal("Get with a failing cluster returned no error")
	}

	first, err := Get(context.Background(), fakeClient("v1.37.2", node("a")))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Get(context.Background(), fakeClient("v1.99.0", node("b"), node("c")))
	if err != nil {
		t.Fatal(err)
	}
	if first != second || second.ServerVersion != "v1.37.2" || len(second.Nodes) != 1 {
		t.Errorf("second Get = %+v, want the cached facts of the first", second)
	}
}

// kubeletAnswers stands in for the kubelets behind the API server's node
// proxy: per node and path, what the kubelet serves. The shapes are the
// kubelet's own: its Prometheus text metrics with the ALPHA gauge
// kubelet_cgroup_version (k8s.io/kubernetes pkg/kubelet/metrics
// CgroupVersion, set in pkg/kubelet/kubelet_linux.go cgroupVersionCheck),
// and /configz's {"kubeletconfig": KubeletConfiguration}, where from 1.35
// failCgroupV1 is always set (defaults.go: true unless configured).
type kubeletAnswers map[string]map[string]string

func (k kubeletAnswers) read(_ context.Context, node, path string) ([]byte, error) {
	if a, ok := k[node][path]; ok {
		return []byte(a), nil
	}
	return nil, errors.New(`the server could not find the requested resource`)
}

func cgroupMetrics(v string) string {
	return "# HELP kubelet_cgroup_version [ALPHA] cgroup version on the hosts.\n# TYPE kubelet_cgroup_version gauge\nkubelet_cgroup_version " + v + "\n" +
		"# HELP kubelet_node_name [ALPHA] The node's name. The count is always 1.\n# TYPE kubelet_node_name gauge\nkubelet_node_name{node=\"n\"} 1\n"
}

func configz(failCgroupV1 string) string {
	return `{"kubeletconfig":{"enableServer":true,"cgroupRoot":"/kubelet","cgroupDriver":"systemd","failSwapOn":false,"failCgroupV1":` + failCgroupV1 + `,"containerRuntimeEndpoint":"unix:///run/containerd/containerd.sock"}}`
}

func TestDiscoverCgroup(t *testing.T) {
	nodes := []runtime.Object{
		node("cp", label(LabelOS, "linux"), label(LabelControlPlane, ""), ready(corev1.ConditionTrue)),
		node("worker", label(LabelOS, "linux"), ready(corev1.ConditionTrue)),
		node("win", label(LabelOS, "windows"), ready(corev1.ConditionTrue)),
		node("kwok-linux", label(LabelOS, "linux"), annotation(AnnotationKwok, "fake")),
	}
	asked := map[string]bool{}
	answers := kubeletAnswers{
		"cp":     {"metrics": cgroupMetrics("1"), "configz": configz("false")},
		"worker": {"metrics": cgroupMetrics("1"), "configz": configz("false")},
	}
	f, err := discover(context.Background(), fakeClient("v1.37.2", nodes...), func(ctx context.Context, node, path string) ([]byte, error) {
		asked[node] = true
		return answers.read(ctx, node, path)
	})
	if err != nil {
		t.Fatal(err)
	}
	off := false
	for _, n := range f.Select(Query{OS: "linux", Real: true}) {
		if n.CgroupVersion != 1 || n.FailCgroupV1 == nil || *n.FailCgroupV1 != off {
			t.Errorf("%s: cgroup %d, failCgroupV1 %v", n.Name, n.CgroupVersion, n.FailCgroupV1)
		}
	}
	// Only real Linux kubelets are asked: Windows has no cgroups, kwok no kubelet.
	if !reflect.DeepEqual(asked, map[string]bool{"cp": true, "worker": true}) {
		t.Errorf("asked %v", asked)
	}
	if got := f.Cgroup(); got != "cgroup v1, failCgroupV1 off" {
		t.Errorf("Cgroup() = %q", got)
	}
	if s := f.Summary(); s != "Kubernetes v1.37.2, nodes: 3 linux, 1 windows (1 simulated), CNI unknown, cgroup v1, failCgroupV1 off" {
		t.Errorf("Summary() = %q", s)
	}
	if f.PreRelease || strings.Contains(string(must(json.Marshal(f))), "preRelease") {
		t.Errorf("a release recorded as a pre-release: %+v", f)
	}
	// A pre-release server is recorded as one, and said so.
	pre, err := discover(context.Background(), fakeClient("v1.38.0-beta.0", nodes[0]), answers.read)
	if err != nil {
		t.Fatal(err)
	}
	if !pre.PreRelease || !strings.Contains(string(must(json.Marshal(pre))), `"serverVersion":"v1.38.0-beta.0","preRelease":true`) {
		t.Errorf("a pre-release server's facts: %+v", pre)
	}
	if s := pre.Summary(); !strings.HasPrefix(s, "Kubernetes v1.38.0-beta.0 (a pre-release), nodes: 1 linux") {
		t.Errorf("Summary() = %q", s)
	}
	// The facts travel as JSON (the report entry, cluster.json).
	data, _ := json.Marshal(f)
	if !strings.Contains(string(data), `"cgroupVersion":1,"failCgroupV1":false`) {
		t.Errorf("JSON lacks the cgroup facts: %s", data)
	}

	for _, c := range []struct {
		name    string
		answers kubeletAnswers
		want    string
	}{
		// On cgroup v2 nothing changes: failCgroupV1 keeps its default.
		{"cgroup v2", kubeletAnswers{"cp": {"metrics": cgroupMetrics("2"), "configz": configz("true")}, "worker": {"metrics": cgroupMetrics("2"), "configz": configz("true")}}, "cgroup v2"},
		// A kubelet before 1.35 on cgroup v1 has no failCgroupV1 to turn off.
		{"cgroup v1, an older kubelet", kubeletAnswers{"cp": {"metrics": cgroupMetrics("1"), "configz": `{"kubeletconfig":{"cgroupRoot":"/kubelet"}}`}}, "cgroup v1"},
		{"one kubelet of two told", kubeletAnswers{"cp": {"metrics": cgroupMetrics("1"), "configz": configz("false")}, "worker": {"metrics": cgroupMetrics("1"), "configz": configz("true")}}, "cgroup v1"},
		{"no kubelet answers", kubeletAnswers{}, ""},
		{"no gauge", kubeletAnswers{"cp": {"metrics": "kubelet_node_name{node=\"cp\"} 1\n", "configz": "not json"}}, ""},
	} {
		f, err := discover(context.Background(), fakeClient("v1.37.2", nodes...), c.answers.read)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Cgroup(); got != c.want {
			t.Errorf("%s: Cgroup() = %q, want %q", c.name, got, c.want)
		}
	}

	// Discover on a clientset without a REST client (a fake one) leaves the
	// cgroup facts unknown rather than failing.
	f, err = Discover(context.Background(), fakeClient("v1.37.2", nodes...))
	if err != nil || f.Cgroup() != "" || len(f.Nodes) != 4 {
		t.Errorf("Discover without kubelets: %v, %q", err, f.Cgroup())
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
