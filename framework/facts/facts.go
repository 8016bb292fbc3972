// Package facts discovers, once per run, what the cluster under test is made
// of: its nodes by OS and role, their Windows builds, which nodes are
// simulated (kwok), the Linux kubelets' cgroup version and failCgroupV1, the
// server version and the CNI. Specs decide from these
// facts what they can run and why they skip.
package facts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/internal/kubelines"
)

// Well-known node labels and annotations.
const (
	LabelOS           = "kubernetes.io/os"
	LabelHostname     = "kubernetes.io/hostname"
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
	LabelControlPlane = "node-role.kubernetes.io/control-plane"
	// AnnotationKwok marks a node that kwok simulates.
	AnnotationKwok = "kwok.x-k8s.io/node"
	// LabelUnderlay marks a node joined from outside the kind network
	// through the harness's underlay (infra/underlay): its value is the
	// shape (routed, same-host).
	LabelUnderlay = "winconform.io/underlay"
)

// Node is what the harness needs to know of one node.
type Node struct {
	Name         string `json:"name"`
	OS           string `json:"os"`
	Arch         string `json:"arch"`
	ControlPlane bool   `json:"controlPlane"`
	Ready        bool   `json:"ready"`
	// Condition is the Ready condition's reason and message when not Ready.
	Condition     string `json:"condition,omitempty"`
	Simulated     bool   `json:"simulated"`
	WindowsBuild  string `json:"windowsBuild,omitempty"` // the node.kubernetes.io/windows-build label
	KernelVersion string `json:"kernelVersion"`
	OSImage       string `json:"osImage"`
	// ContainerRuntime is the kubelet's report of its runtime
	// (status.nodeInfo.containerRuntimeVersion: containerd://2.3.7).
	ContainerRuntime string         `json:"containerRuntime,omitempty"`
	InternalIP       string         `json:"internalIP"`
	Taints           []corev1.Taint `json:"taints,omitempty"`
	// Underlay is the shape of the underlay the node joined through
	// (LabelUnderlay), "" for a node on the cluster's own network.
	Underlay string `json:"underlay,omitempty"`
	// CgroupVersion is the cgroup version a Linux node's kubelet runs on
	// (its kubelet_cgroup_version metric): 1 or 2, 0 when unknown.
	CgroupVersion int `json:"cgroupVersion,omitempty"`
	// FailCgroupV1 is the Linux kubelet's failCgroupV1 setting (its
	// configz), nil when unknown: from 1.35 it defaults to true, and a
	// kubelet on cgroup v1 runs only with it false.
	FailCgroupV1 *bool `json:"failCgroupV1,omitempty"`
}

// Facts is the cluster as discovered at the start of a run.
type Facts struct {
	ServerVersion string `json:"serverVersion"`
	// PreRelease says the server is a pre-release of Kubernetes
	// (kubelines.IsPreRelease: v1.38.0-beta.0): the run is marked so in
	// its summary, and the gate blocks it unless its policy allows it.
	PreRelease bool   `json:"preRelease,omitempty"`
	Nodes      []Node `json:"nodes"`
	// CNI is "flannel/<backend>" when flannel runs, else "unknown".
	CNI string `json:"cni"`
}

// Discover reads the facts from the API server, and from each real Linux
// node's kubelet through it (the API server's node proxy).
func Discover(ctx context.Context, cs kubernetes.Interface) (*Facts, error) {
	return discover(ctx, cs, kubeletProxy(cs))
}

// kubeletReader reads path (configz, metrics) of node's kubelet.
type kubeletReader func(ctx context.Context, node, path string) ([]byte, error)

// kubeletProxy reads from the kubelet through the API server's node proxy
// (/api/v1/nodes/NAME/proxy/PATH), within 15 seconds.
func kubeletProxy(cs kubernetes.Interface) kubeletReader {
	return func(ctx context.Context, node, path string) ([]byte, error) {
		rc, ok := cs.CoreV1().RESTClient().(*rest.RESTClient)
		if !ok || rc == nil { // a fake clientset has none
			return nil, errors.New("no REST client to reach the kubelet with")
		}
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		return rc.Get().Resource("nodes").Name(node).SubResource("proxy").Suffix(path).DoRaw(ctx)
	}
}

func discover(ctx context.Context, cs kubernetes.Interface, kubelet kubeletReader) (*Facts, error) {
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("server version: %w", err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	f := &Facts{ServerVersion: v.GitVersion, PreRelease: kubelines.IsPreRelease(v.GitVersion), CNI: detectCNI(ctx, cs)}
	for _, n := range list.Items {
		node := FromNode(&n)
		if node.OS == "linux" && !node.Simulated {
			node.CgroupVersion, node.FailCgroupV1 = kubeletCgroup(ctx, kubelet, node.Name)
		}
		f.Nodes = append(f.Nodes, node)
	}
	sort.Slice(f.Nodes, func(i, j int) bool { return f.Nodes[i].Name < f.Nodes[j].Name })
	return f, nil
}

// FromNode extracts a Node's facts.
func FromNode(n *corev1.Node) Node {
	os := n.Labels[LabelOS]
	if os == "" {
		os = n.Status.NodeInfo.OperatingSystem
	}
	_, cp := n.Labels[LabelControlPlane]
	out := Node{
		Name: n.Name, OS: os, Arch: n.Status.NodeInfo.Architecture, ControlPlane: cp,
		Simulated:    n.Annotations[AnnotationKwok] != "",
		WindowsBuild: n.Labels[LabelWindowsBuild], KernelVersion: n.Status.NodeInfo.KernelVersion,
		OSImage: n.Status.NodeInfo.OSImage, Taints: n.Spec.Taints, Underlay: n.Labels[LabelUnderlay],
		ContainerRuntime: n.Status.NodeInfo.ContainerRuntimeVersion,
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
			if !out.Ready {
				out.Condition = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
			}
		}
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && out.InternalIP == "" {
			out.InternalIP = a.Address
		}
	}
	return out
}

func detectCNI(ctx context.Context, cs kubernetes.Interface) string {
	cm, err := cs.CoreV1().ConfigMaps("kube-flannel").Get(ctx, "kube-flannel-cfg", metav1.GetOptions{})
	if err != nil {
		return "unknown"
	}
	var conf struct{ Backend struct{ Type string } }
	if err := json.Unmarshal([]byte(cm.Data["net-conf.json"]), &conf); err != nil || conf.Backend.Type == "" {
		return "flannel"
	}
	return "flannel/" + conf.Backend.Type
}

var cgroupMetric = regexp.MustCompile(`(?m)^kubelet_cgroup_version(?:\{[^}]*\})?\s+([12])(?:\.0+)?(?:\s|$)`)

// kubeletCgroup reads what a Linux kubelet says of cgroups: the version it
// runs on (its kubelet_cgroup_version gauge, pkg/kubelet/metrics) and its
// failCgroupV1 setting (its configz). What cannot be read stays unknown: a
// kubelet that does not answer says nothing of its host.
func kubeletCgroup(ctx context.Context, kubelet kubeletReader, node string) (version int, failCgroupV1 *bool) {
	if metrics, err := kubelet(ctx, node, "metrics"); err == nil {
		if m := cgroupMetric.FindSubmatch(metrics); m != nil {
			version = int(m[1][0] - '0')
		}
	}
	if configz, err := kubelet(ctx, node, "configz"); err == nil {
		var c struct {
			KubeletConfig struct {
				FailCgroupV1 *bool `json:"failCgroupV1"`
			} `json:"kubeletconfig"`
		}
		if json.Unmarshal(configz, &c) == nil {
			failCgroupV1 = c.KubeletConfig.FailCgroupV1
		}
	}
	return version, failCgroupV1
}

// Cgroup says what the real Linux nodes' kubelets run on: "cgroup v2",
// "cgroup v1", "cgroup v1, failCgroupV1 off" (every kubelet on cgroup v1
// was told failCgroupV1: false, as kubelets from 1.35 must be there), or ""
// when no kubelet said.
func (f *Facts) Cgroup() string {
	v1, v2, off := 0, 0, 0
	for _, n := range f.Nodes {
		if n.OS != "linux" || n.Simulated {
			continue
		}
		switch n.CgroupVersion {
		case 1:
			v1++
			if n.FailCgroupV1 != nil && !*n.FailCgroupV1 {
				off++
			}
		case 2:
			v2++
		}
	}
	switch {
	case v1 > 0 && off == v1:
		return "cgroup v1, failCgroupV1 off"
	case v1 > 0:
		return "cgroup v1"
	case v2 > 0:
		return "cgroup v2"
	}
	return ""
}

// Query selects nodes.
type Query struct {
	OS string
	// Real excludes simulated nodes (for anything that needs a kubelet).
	Real bool
	// Workloads excludes nodes that are not Ready.
	Ready bool
}

// Select returns the nodes that match q, control-plane nodes last so that
// tests prefer workers.
func (f *Facts) Select(q Query) []Node {
	var out []Node
	for _, n := range f.Nodes {
		if (q.OS != "" && n.OS != q.OS) || (q.Real && n.Simulated) || (q.Ready && !n.Ready) {
			continue
		}
		out = append(out, n)
	}
	sort.SliceStable(out, func(i, j int) bool { return !out[i].ControlPlane && out[j].ControlPlane })
	return out
}

// ControlPlane returns the control-plane nodes.
func (f *Facts) ControlPlane() []Node {
	var out []Node
	for _, n := range f.Nodes {
		if n.ControlPlane {
			out = append(out, n)
		}
	}
	return out
}

// Summary is a one-line description for logs.
func (f *Facts) Summary() string {
	count := map[string]int{}
	sim := 0
	for _, n := range f.Nodes {
		count[n.OS]++
		if n.Simulated {
			sim++
		}
	}
	var parts []string
	for _, os := range []string{"linux", "windows"} {
		parts = append(parts, fmt.Sprintf("%d %s", count[os], os))
	}
	s := fmt.Sprintf("Kubernetes %s, nodes: %s", f.ServerVersion, strings.Join(parts, ", "))
	if f.PreRelease {
		s = fmt.Sprintf("Kubernetes %s (a pre-release), nodes: %s", f.ServerVersion, strings.Join(parts, ", "))
	}
	if sim > 0 {
		s += fmt.Sprintf(" (%d simulated)", sim)
	}
	s += ", CNI " + f.CNI
	if c := f.Cgroup(); c != "" {
		s += ", " + c
	}
	return s
}

var (
	mu     sync.Mutex
	cached *Facts
)

// Use makes f the process's facts (discovered once by another process of a
// parallel run, say).
func Use(f *Facts) {
	mu.Lock()
	defer mu.Unlock()
	cached = f
}

// Get returns the facts, discovering them on the first call of the process.
func Get(ctx context.Context, cs kubernetes.Interface) (*Facts, error) {
	mu.Lock()
	defer mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	f, err := Discover(ctx, cs)
	if err != nil {
		return nil, err
	}
	cached = f
	return f, nil
}

// Readiness is the nodes' Ready conditions at one moment (the run's end),
// or why they could not be read.
type Readiness struct {
	Nodes []NodeReadiness `json:"nodes"`
	// Error says why the nodes could not be read; no node is known Ready.
	Error string `json:"error,omitempty"`
}

// NodeReadiness is one node's Ready condition.
type NodeReadiness struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
}

// Ready says whether node name was Ready (false for a nil Readiness, and
// for a node it does not name).
func (r *Readiness) Ready(name string) bool {
	if r == nil {
		return false
	}
	for _, n := range r.Nodes {
		if n.Name == name {
			return n.Ready
		}
	}
	return false
}

// ReadinessTimeout bounds ReadReadiness.
const ReadinessTimeout = 30 * time.Second

// ReadReadiness lists the cluster's nodes and their Ready conditions now,
// within ReadinessTimeout; an error is kept in the result, never returned.
func ReadReadiness(ctx context.Context, cs kubernetes.Interface) Readiness {
	ctx, cancel := context.WithTimeout(ctx, ReadinessTimeout)
	defer cancel()
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Readiness{Nodes: []NodeReadiness{}, Error: err.Error()}
	}
	out := Readiness{Nodes: []NodeReadiness{}}
	for i := range list.Items {
		n := FromNode(&list.Items[i])
		out.Nodes = append(out.Nodes, NodeReadiness{Name: n.Name, Ready: n.Ready})
	}
	return out
}
