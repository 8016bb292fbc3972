package ospod

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/images"
)

func TestProbeCommand(t *testing.T) {
	if got, want := ProbeCommand("linux", "connect", "x"), []string{"/probe", "connect", "x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("linux: %q, want %q", got, want)
	}
	if got, want := ProbeCommand("windows", "serve"), []string{`C:\probe\probe.exe`, "serve"}; !reflect.DeepEqual(got, want) {
		t.Errorf("windows: %q, want %q", got, want)
	}
	if got, want := ProbeCommand("linux"), []string{"/probe"}; !reflect.DeepEqual(got, want) {
		t.Errorf("no args: %q, want %q", got, want)
	}
}

func checkCommon(t *testing.T, p *corev1.Pod, name, os string) {
	t.Helper()
	if p.Name != name || p.Labels["app.kubernetes.io/name"] != name {
		t.Errorf("name %q, labels %v", p.Name, p.Labels)
	}
	if p.Spec.OS == nil || string(p.Spec.OS.Name) != os {
		t.Errorf("spec.os = %+v, want %s", p.Spec.OS, os)
	}
	if want := map[string]string{facts.LabelOS: os}; !reflect.DeepEqual(p.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", p.Spec.NodeSelector, want)
	}
	if len(p.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(p.Spec.Containers))
	}
	c := p.Spec.Containers[0]
	if c.Image != images.Ref("probe") || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %q pull %q", c.Image, c.ImagePullPolicy)
	}
	if want := ProbeCommand(os, "serve", "--name", name); !reflect.DeepEqual(c.Command, want) {
		t.Errorf("command = %q, want %q", c.Command, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "POD_IP" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil ||
		c.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("env = %+v, want POD_IP from status.podIP", c.Env)
	}
	ports := map[string]corev1.ContainerPort{}
	for _, cp := range c.Ports {
		ports[cp.Name] = cp
	}
	if ports["http"].ContainerPort != 8080 || ports["http"].Protocol != corev1.ProtocolTCP ||
		ports["tcp"].ContainerPort != 8081 || ports["tcp"].Protocol != corev1.ProtocolTCP ||
		ports["udp"].ContainerPort != 8081 || ports["udp"].Protocol != corev1.ProtocolUDP || len(c.Ports) != 3 {
		t.Errorf("ports = %+v", c.Ports)
	}
	rp := c.ReadinessProbe
	if rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/healthz" || rp.HTTPGet.Port.IntValue() != 8080 {
		t.Errorf("readiness probe = %+v, want HTTP GET /healthz on 8080", rp)
	}
	if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g != 5 {
		t.Errorf("terminationGracePeriodSeconds = %v", g)
	}
}

func TestProbeLinux(t *testing.T) {
	p := Probe("lin-a", "linux")
	checkCommon(t, p, "lin-a", "linux")
	if p.Spec.Containers[0].Command[0] != "/probe" {
		t.Errorf("command = %q", p.Spec.Containers[0].Command)
	}
	if len(p.Spec.Tolerations) != 0 {
		t.Errorf("Linux pod tolerates %+v, want nothing", p.Spec.Tolerations)
	}
}

func TestProbeWindows(t *testing.T) {
	p := Probe("win-a", "windows")
	checkCommon(t, p, "win-a", "windows")
	if p.Spec.Containers[0].Command[0] != `C:\probe\probe.exe` {
		t.Errorf("command = %q", p.Spec.Containers[0].Command)
	}
	want := []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	if !reflect.DeepEqual(p.Spec.Tolerations, want) {
		t.Errorf("tolerations = %+v, want %+v", p.Spec.Tolerations, want)
	}
	if !p.Spec.Tolerations[0].ToleratesTaint(klog.Background(), &WindowsTaint, false) {
		t.Error("Windows pod does not tolerate WindowsTaint")
	}
	if Probe("lin", "linux").Spec.Tolerations != nil {
		t.Error("Linux pod has tolerations")
	}
}

func TestPodsAreIndependent(t *testing.T) {
	a := Probe("a", "linux")
	b := Probe("b", "linux")
	a.Spec.NodeSelector["x"] = "y"
	a.Labels["x"] = "y"
	a.Spec.Containers[0].Command[0] = "changed"
	if _, ok := b.Spec.NodeSelector["x"]; ok {
		t.Error("pods share a node selector map")
	}
	if _, ok := b.Labels["x"]; ok {
		t.Error("pods share a labels map")
	}
	if b.Spec.Containers[0].Command[0] != "/probe" {
		t.Error("pods share a command slice")
	}
}

func TestOnNode(t *testing.T) {
	n := facts.Node{Name: "kind-control-plane", OS: "linux", Taints: []corev1.Taint{
		{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
		{Key: "maintenance", Value: "yes", Effect: corev1.TaintEffectNoExecute},
		{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule},
	}}
	p := Probe("p", "linux", OnNode(n))
	if want := map[string]string{facts.LabelOS: "linux", facts.LabelHostname: "kind-control-plane"}; !reflect.DeepEqual(p.Spec.NodeSelector, want) {
		t.Errorf("nodeSelector = %v, want %v", p.Spec.NodeSelector, want)
	}
	want := []corev1.Toleration{
		{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	}
	if !reflect.DeepEqual(p.Spec.Tolerations, want) {
		t.Errorf("tolerations = %+v, want %+v", p.Spec.Tolerations, want)
	}
	for i := range n.Taints[:2] {
		tolerated := false
		for _, tol := range p.Spec.Tolerations {
			tolerated = tolerated || tol.ToleratesTaint(klog.Background(), &n.Taints[i], false)
		}
		if !tolerated {
			t.Errorf("taint %+v is not tolerated", n.Taints[i])
		}
	}
	for _, tol := range p.Spec.Tolerations {
		if tol.Effect == corev1.TaintEffectPreferNoSchedule || tol.Key == "soft" {
			t.Errorf("tolerates the PreferNoSchedule taint: %+v", tol)
		}
	}
}

func TestOnNodeWindowsKeepsWindowsToleration(t *testing.T) {
	n := facts.Node{Name: "win-1", OS: "windows"}
	p := Probe("w", "windows", OnNode(n))
	if p.Spec.NodeSelector[facts.LabelHostname] != "win-1" || p.Spec.NodeSelector[facts.LabelOS] != "windows" {
		t.Errorf("nodeSelector = %v", p.Spec.NodeSelector)
	}
	if len(p.Spec.Tolerations) != 1 || !p.Spec.Tolerations[0].ToleratesTaint(klog.Background(), &WindowsTaint, false) {
		t.Errorf("tolerations = %+v, want only the Windows one", p.Spec.Tolerations)
	}
}

func TestWithDNSNameAndHeadlessService(t *testing.T) {
	p := Probe("srv", "windows", WithDNSName("srv-host", "probes"))
	if p.Spec.Hostname != "srv-host" || p.Spec.Subdomain != "probes" {
		t.Errorf("hostname %q subdomain %q", p.Spec.Hostname, p.Spec.Subdomain)
	}
	if p.Labels["app.kubernetes.io/name"] != "srv" {
		t.Errorf("WithDNSName lost the name label: %v", p.Labels)
	}
	svc := HeadlessService("probes")
	if svc.Name != p.Spec.Subdomain {
		t.Errorf("service %q does not match the pod's subdomain %q", svc.Name, p.Spec.Subdomain)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP = %q, want None (headless)", svc.Spec.ClusterIP)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Error("publishNotReadyAddresses is false")
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != HTTPPort || svc.Spec.Ports[0].Name != "http" {
		t.Errorf("ports = %+v", svc.Spec.Ports)
	}
	sel := k8slabels.SelectorFromSet(svc.Spec.Selector)
	if sel.Empty() {
		t.Fatal("headless service selects every pod")
	}
	if !sel.Matches(k8slabels.Set(p.Labels)) {
		t.Errorf("service selector %v does not select the pod (labels %v)", svc.Spec.Selector, p.Labels)
	}
	if other := Probe("o", "linux", WithDNSName("o", "others")); sel.Matches(k8slabels.Set(other.Labels)) {
		t.Errorf("service selects a pod of another subdomain (labels %v)", other.Labels)
	}
	if plain := Probe("plain", "linux"); sel.Matches(k8slabels.Set(plain.Labels)) {
		t.Errorf("service selects a pod without a DNS name (labels %v)", plain.Labels)
	}
}

func TestOptionsCompose(t *testing.T) {
	p := Probe("c", "linux", OnNode(facts.Node{Name: "n1"}), WithDNSName("c", "sub"))
	if p.Spec.NodeSelector[facts.LabelHostname] != "n1" || p.Spec.Subdomain != "sub" {
		t.Errorf("options did not both apply: selector %v subdomain %q", p.Spec.NodeSelector, p.Spec.Subdomain)
	}
}

func TestProbeImageFollowsOverrides(t *testing.T) {
	if got := Probe("a", "linux").Spec.Containers[0].Image; got != images.Probe {
		t.Errorf("default image %q, want %q", got, images.Probe)
	}
	t.Cleanup(func() { images.SetOverrides(nil) })
	const mirror = "mirror.example.com/winconform/probe:v0.1"
	if err := images.SetOverrides(&images.Overrides{Registries: map[string]string{"winconform.local": "mirror.example.com/winconform"}}); err != nil {
		t.Fatal(err)
	}
	for _, os := range []string{"linux", "windows"} {
		if got := Probe("p-"+os, os).Spec.Containers[0].Image; got != mirror {
			t.Errorf("%s pod image %q, want the overridden %q", os, got, mirror)
		}
	}
}
