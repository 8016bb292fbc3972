// Package nodeagent tells a cluster's node agents (kube-proxy, the CNI
// agent) apart by the nodes they run on, for LIM-08 (Linux-only DaemonSets
// stay off Windows nodes). A hybrid cluster runs each agent twice: a
// DaemonSet for its Linux nodes and one, pinned to Windows nodes, for its
// Windows nodes (the harness's own kube-proxy-windows and
// kube-flannel-ds-windows, sig-windows-tools' kube-flannel-ds-windows-amd64
// and kube-proxy-windows). Only the Linux side must select Linux nodes.
package nodeagent

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// LabelOS is the node label a DaemonSet pins an OS by.
const LabelOS = "kubernetes.io/os"

// cniAgents are the name prefixes of known CNI agents' DaemonSets.
var cniAgents = []string{"calico-node", "cilium", "antrea-agent", "weave-net", "kindnet"}

// Linux says whether ds is the Linux side of a node agent (kube-proxy, or
// a known CNI agent), and which: a DaemonSet pinned to Windows nodes is the
// agent's Windows side, whatever its name.
func Linux(ds appsv1.DaemonSet) (string, bool) {
	if PinnedTo(ds.Spec.Template.Spec, string(corev1.Windows)) {
		return "", false
	}
	switch {
	case ds.Name == "kube-proxy":
		return "kube-proxy", true
	case strings.Contains(ds.Name, "flannel") || ds.Namespace == "kube-flannel":
		return "CNI agent (flannel)", true
	}
	for _, cni := range cniAgents {
		if strings.HasPrefix(ds.Name, cni) {
			return "CNI agent (" + cni + ")", true
		}
	}
	return "", false
}

// PinnedTo says whether a pod template can only land on nodes of os: a
// node selector on kubernetes.io/os, or a required node affinity each of
// whose terms (ORed) pins os (In [os], or NotIn [the other OS]); the other
// expressions of a term (an architecture, say) narrow it further.
func PinnedTo(spec corev1.PodSpec, os string) bool {
	if spec.NodeSelector[LabelOS] == os {
		return true
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return false
	}
	other := string(corev1.Linux)
	if os == string(corev1.Linux) {
		other = string(corev1.Windows)
	}
	for _, t := range terms {
		pinned := false
		for _, r := range t.MatchExpressions {
			if r.Key != LabelOS || len(r.Values) != 1 {
				continue
			}
			if (r.Operator == corev1.NodeSelectorOpIn && r.Values[0] == os) || (r.Operator == corev1.NodeSelectorOpNotIn && r.Values[0] == other) {
				pinned = true
			}
		}
		if !pinned {
			return false
		}
	}
	return true
}
