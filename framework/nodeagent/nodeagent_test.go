package nodeagent

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func daemonSet(ns, name string, spec corev1.PodSpec) appsv1.DaemonSet {
	return appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}
}

func selector(os string) corev1.PodSpec {
	return corev1.PodSpec{NodeSelector: map[string]string{LabelOS: os}}
}

func affinity(terms ...[]corev1.NodeSelectorRequirement) corev1.PodSpec {
	var ts []corev1.NodeSelectorTerm
	for _, t := range terms {
		ts = append(ts, corev1.NodeSelectorTerm{MatchExpressions: t})
	}
	return corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: ts}}}}
}

func req(key string, op corev1.NodeSelectorOperator, v ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: v}
}

// LIM-08's rule is that every Linux node agent selects Linux nodes. On a
// hybrid cluster the Windows side of each agent is a DaemonSet of its own,
// pinned to Windows nodes, and is no Linux agent:
//   - the harness's own (infra/windows/manifests/windows-node-services.yaml.tmpl):
//     kube-proxy-windows (kube-system) and kube-flannel-ds-windows
//     (kube-flannel), each with nodeSelector kubernetes.io/os: windows;
//   - kubernetes-sigs/sig-windows-tools, hostprocess/flannel/flanneld/flannel-overlay.yml:
//     kube-flannel-ds-windows-amd64 (kube-system), pinned by a required node
//     affinity whose one term has kubernetes.io/os In [windows] and
//     kubernetes.io/arch In [amd64]; hostprocess/flannel/kube-proxy/kube-proxy.yml:
//     kube-proxy-windows with nodeSelector kubernetes.io/os: windows.
//
// The Linux sides (kind's kube-proxy, the harness's kube-flannel-ds of
// infra/cni/flannel.yaml.tmpl) select kubernetes.io/os: linux.
func TestLinuxAgentsOfAHybridCluster(t *testing.T) {
	cluster := []struct {
		ds      appsv1.DaemonSet
		agent   bool // a Linux agent LIM-08 checks
		linuxOK bool // pinned to Linux nodes
	}{
		{daemonSet("kube-system", "kube-proxy", selector("linux")), true, true},
		{daemonSet("kube-flannel", "kube-flannel-ds", selector("linux")), true, true},
		{daemonSet("kube-system", "kube-proxy-windows", selector("windows")), false, false},
		{daemonSet("kube-flannel", "kube-flannel-ds-windows", selector("windows")), false, false},
		{daemonSet("kube-system", "kube-flannel-ds-windows-amd64", affinity([]corev1.NodeSelectorRequirement{
			req(LabelOS, corev1.NodeSelectorOpIn, "windows"), req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "amd64")})), false, false},
		{daemonSet("kube-system", "calico-node-windows", affinity([]corev1.NodeSelectorRequirement{req(LabelOS, corev1.NodeSelectorOpNotIn, "linux")})), false, false},
		// A Linux agent that forgot its selector is still one, and not pinned.
		{daemonSet("kube-system", "calico-node", corev1.PodSpec{}), true, false},
		{daemonSet("kube-system", "coredns-helper", selector("linux")), false, true},
	}
	var flagged []string
	for _, c := range cluster {
		_, agent := Linux(c.ds)
		if agent != c.agent {
			t.Errorf("%s/%s: Linux agent %v, want %v", c.ds.Namespace, c.ds.Name, agent, c.agent)
		}
		pinned := PinnedTo(c.ds.Spec.Template.Spec, "linux")
		if pinned != c.linuxOK {
			t.Errorf("%s/%s: pinned to Linux %v, want %v", c.ds.Namespace, c.ds.Name, pinned, c.linuxOK)
		}
		if agent && !pinned { // what LIM-08's spec fails on
			flagged = append(flagged, c.ds.Namespace+"/"+c.ds.Name)
		}
	}
	if len(flagged) != 1 || flagged[0] != "kube-system/calico-node" {
		t.Errorf("LIM-08 flags %v, want only kube-system/calico-node (a Linux agent without a selector)", flagged)
	}
}

func TestPinnedToNeedsEveryTerm(t *testing.T) {
	both := affinity([]corev1.NodeSelectorRequirement{req(LabelOS, corev1.NodeSelectorOpIn, "linux")},
		[]corev1.NodeSelectorRequirement{req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "amd64")})
	if PinnedTo(both, "linux") {
		t.Error("a second term without the OS lets the pods land anywhere")
	}
	if PinnedTo(affinity(), "linux") || PinnedTo(corev1.PodSpec{}, "windows") {
		t.Error("no terms, no selector: pinned to nothing")
	}
	if !PinnedTo(affinity([]corev1.NodeSelectorRequirement{req(LabelOS, corev1.NodeSelectorOpNotIn, "windows")}), "linux") {
		t.Error("NotIn [windows] pins Linux")
	}
}
