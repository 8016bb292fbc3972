// Package kubeletconfig holds what the harness sets in the
// KubeletConfiguration of the clusters it makes: one patch, which kind
// merges and kubeadm uploads for every node, and which the tests judge with
// the kubelet's own loader and validation (testing/upstream).
package kubeletconfig

import (
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/internal/kubelines"
)

// ClusterPatch is the harness's patch of the cluster's
// KubeletConfiguration, which kind merges into the document of that kind
// (any apiVersion) and kubeadm uploads for every node that joins, Windows
// nodes too:
//
//   - the node log query on (enableSystemLogHandler, enableSystemLogQuery),
//     so that a failed spec's bundle fetches its nodes' kubelet and
//     container runtime logs through the API server
//     (/api/v1/nodes/NAME/proxy/logs/?query=kubelet), with the feature
//     gate NodeLogQuery where the line needs it (NeedsNodeLogQueryGate);
//   - on a cgroup v1 host, failCgroupV1: false where the line's kubelet
//     refuses cgroup v1 otherwise (NeedsFailCgroupV1Off; kind v0.33 leaves
//     it unset in its template, pkg/cluster/internal/kubeadm/config.go).
func ClusterPatch(l kubelines.Line, cgroupV1 bool) string {
	p := map[string]any{
		"kind":                   "KubeletConfiguration",
		"enableSystemLogHandler": true,
		"enableSystemLogQuery":   true,
	}
	if l.NeedsNodeLogQueryGate {
		p["featureGates"] = map[string]bool{"NodeLogQuery": true}
	}
	if cgroupV1 && l.NeedsFailCgroupV1Off {
		p["failCgroupV1"] = false
	}
	out, _ := yaml.Marshal(p)
	return string(out)
}
