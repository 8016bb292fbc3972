package netmatrix

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/internal/winrelease"
)

// Expectation is what a cell should show on this cluster.
type Expectation struct {
	Reachable bool `json:"reachable"`
	// For an unreachable cell: the rule, the documented claim it belongs
	// to, why, and where the documents say so.
	Rule   string `json:"rule,omitempty"`
	Claim  string `json:"claim,omitempty"`
	Reason string `json:"reason,omitempty"`
	Doc    string `json:"doc,omitempty"`
}

// Rule is a documented limitation: the cells it matches are expected
// unreachable on clusters where the limitation is expected to hold. Which
// clusters (server versions, CNI) is the claim's catalogue entry's to say,
// through the limitation ledger (ledger.Expect), as for the suites' specs.
type Rule struct {
	ID     string
	Claim  string
	Reason string
	Doc    string
	// SinceBuild and UntilBuild bound the Windows builds (of the source's
	// node) the limitation holds for: [SinceBuild, UntilBuild), as
	// "10.0.20348"; empty means unbounded.
	SinceBuild, UntilBuild string
	Match                  func(src Peer, t Target) bool
}

// Profile is the cluster's keys (server version, CNI) and the rules that
// apply to them. The zero Profile expects every path to be reachable.
type Profile struct {
	ServerVersion string
	CNI           string
	Rules         []Rule
}

// Expect returns the expectation for a cell: unreachable because of the
// first rule that matches it and covers the cluster, else reachable.
func (p Profile) Expect(src Peer, t Target) Expectation {
	for _, r := range p.Rules {
		if r.Match(src, t) && p.covers(r) && coversBuild(r, src.Build) {
			return Expectation{Reachable: false, Rule: r.ID, Claim: r.Claim, Reason: r.Reason, Doc: r.Doc}
		}
	}
	return Expectation{Reachable: true}
}

func (p Profile) covers(r Rule) bool {
	b, _ := ledger.Expect(r.Claim, ledger.Cluster{Server: p.ServerVersion, CNI: p.CNI})
	return b == ledger.Limited
}

// Documents cited by the rules.
const (
	DocSchedulingGuide = "Kubernetes docs, Guide for scheduling Windows containers (seed 002): \"Windows container hosts are not able to access the IP of services scheduled on them\""
	DocTroubleshooting = "Kubernetes docs, Troubleshooting Windows nodes: \"My Windows node cannot access my services using the service IP\" and \"Local NodePort access from the node itself fails\""
	DocFlannelHostGW   = "kubernetes-for-windows (seed 001, Kubernetes 1.10 era, flannel host-gw): outbound NAT from Windows pods not achievable"
)

// DocumentedLimits are the network limitations of Windows nodes that the
// documents state, as rules.
var DocumentedLimits = []Rule{
	{
		ID: "windows-host-to-local-service-ip", Claim: "NET-21", Doc: DocSchedulingGuide,
		Reason: "a Windows node's host cannot reach the IP of a Service whose pods it hosts",
		Match: func(src Peer, t Target) bool {
			return windowsNode(src) && t.Kind == Service && t.Mode == ClusterIP && slices.Contains(t.BackendNodes, src.Node)
		},
	},
	{
		ID: "windows-host-to-service-ip", Claim: "NET-21", Doc: DocTroubleshooting,
		Reason: "a Windows node's host cannot reach Service IPs; Windows pods can",
		Match: func(src Peer, t Target) bool {
			return windowsNode(src) && t.Kind == Service && t.Mode == ClusterIP
		},
	},
	{
		ID: "windows-host-local-nodeport", Claim: "NET-27", Doc: DocTroubleshooting,
		Reason: "a Windows node cannot reach a NodePort through its own address",
		Match: func(src Peer, t Target) bool {
			return windowsNode(src) && t.Mode == NodePort && t.Via == src.Node
		},
	},
	{
		ID: "windows-pod-outbound-nat-host-gw", Claim: "NET-17", Doc: DocFlannelHostGW,
		Reason: "outbound NAT from Windows pods did not work with flannel host-gw (before Kubernetes 1.14)",
		Match: func(src Peer, t Target) bool {
			return src.Kind == Pod && src.OS == string(corev1.Windows) && t.Kind == External
		},
	},
}

// coversBuild says whether r holds for a source on a node of Windows build
// (major.minor.build[.revision]); an unknown build keeps the limitation.
func coversBuild(r Rule, build string) bool {
	if r.SinceBuild == "" && r.UntilBuild == "" {
		return true
	}
	b, err := winrelease.Parse(build)
	if err != nil {
		return true
	}
	if since, err := winrelease.Parse(r.SinceBuild); err == nil && r.SinceBuild != "" && b.Build.Compare(since.Build) < 0 {
		return false
	}
	if until, err := winrelease.Parse(r.UntilBuild); err == nil && r.UntilBuild != "" && b.Build.Compare(until.Build) >= 0 {
		return false
	}
	return true
}

func windowsNode(p Peer) bool { return p.Kind == Node && p.OS == string(corev1.Windows) }
