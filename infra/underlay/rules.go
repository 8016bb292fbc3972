package underlay

import (
	"fmt"
	"strconv"
	"strings"
)

// Where the rules go.
const (
	// FilterTable and DockerUserChain: Docker jumps to DOCKER-USER first in
	// FORWARD, ahead of its isolation chains and its DROP of unpublished
	// traffic into a bridge network, and leaves the chain's rules alone.
	FilterTable     = "filter"
	DockerUserChain = "DOCKER-USER"
	// NATTable and PostroutingChain hold Docker's MASQUERADE of traffic that
	// leaves the kind network; the RETURN goes ahead of it.
	NATTable         = "nat"
	PostroutingChain = "POSTROUTING"
)

// Rule is one iptables rule of the underlay.
type Rule struct {
	Machine string `json:"machine"`
	Table   string `json:"table"`
	Chain   string `json:"chain"`
	// Purpose is the rule's short name in its mark: api-server, kubelet,
	// vxlan-in, vxlan-out, nodeports-in-tcp, ..., established-in,
	// established-out, keep-addresses.
	Purpose string `json:"purpose"`
	// Match is the rule without its mark and target.
	Match []string `json:"match"`
	// Target is ACCEPT or RETURN.
	Target string `json:"target"`
	// Why says what breaks without it, for the check's messages.
	Why string `json:"why"`
}

// Mark is the rule's comment.
func (r Rule) Mark(cluster string) string {
	return CommentPrefix + cluster + ":" + r.Machine + ":" + r.Purpose
}

// Spec is the rule's specification, as iptables takes it after the chain.
func (r Rule) Spec(cluster string) []string {
	spec := append([]string{}, r.Match...)
	return append(spec, "-m", "comment", "--comment", r.Mark(cluster), "-j", r.Target)
}

// Command is the iptables command line that inserts the rule at the top of
// its chain (op "-I"), checks it ("-C") or deletes it ("-D").
func (r Rule) Command(cluster, op string) string {
	args := []string{"iptables", "-t", r.Table, op, r.Chain}
	for _, a := range r.Spec(cluster) {
		if strings.ContainsAny(a, " \"'") {
			a = "'" + a + "'"
		}
		args = append(args, a)
	}
	return strings.Join(args, " ")
}

// rules are a routed machine's: the kind host forwards between the
// machine and the kind network what the cluster needs, both ways, and
// keeps the kind nodes' own addresses on what it forwards to the machine.
func (n Network) rules(m Machine) []Rule {
	mach := m.Address.String() + "/32"
	kind := n.Subnet.String()
	in := func(extra ...string) []string { return append([]string{"-s", mach, "-d", kind}, extra...) }
	out := func(extra ...string) []string { return append([]string{"-s", kind, "-d", mach}, extra...) }
	nodePorts := strconv.Itoa(NodePortFirst) + ":" + strconv.Itoa(NodePortLast)
	accept := func(purpose string, match []string, why string) Rule {
		return Rule{Machine: m.Name, Table: FilterTable, Chain: DockerUserChain, Purpose: purpose, Match: match, Target: "ACCEPT", Why: why}
	}
	vxlan := strconv.Itoa(n.VXLANPort)
	return []Rule{
		accept("api-server", in("-p", "tcp", "-m", "tcp", "--dport", strconv.Itoa(APIServerPort)),
			fmt.Sprintf("the machine reaches the API server in the control-plane node (tcp %d), as the kubernetes Service's endpoint sends its pods and host processes", APIServerPort)),
		accept("kubelet", out("-p", "tcp", "-m", "tcp", "--dport", strconv.Itoa(KubeletPort)),
			fmt.Sprintf("the control plane reaches the machine's kubelet (tcp %d: logs, exec, metrics)", KubeletPort)),
		accept("vxlan-in", in("-p", "udp", "-m", "udp", "--dport", vxlan),
			fmt.Sprintf("VXLAN (udp %s) from the machine's tunnel endpoint to the kind nodes'", vxlan)),
		accept("vxlan-out", out("-p", "udp", "-m", "udp", "--dport", vxlan),
			fmt.Sprintf("VXLAN (udp %s) from the kind nodes' tunnel endpoints to the machine's", vxlan)),
		accept("nodeports-in-tcp", in("-p", "tcp", "-m", "tcp", "--dport", nodePorts), "the machine reaches NodePorts (tcp) of the kind nodes"),
		accept("nodeports-in-udp", in("-p", "udp", "-m", "udp", "--dport", nodePorts), "the machine reaches NodePorts (udp) of the kind nodes"),
		accept("nodeports-out-tcp", out("-p", "tcp", "-m", "tcp", "--dport", nodePorts), "the kind nodes reach NodePorts (tcp) of the machine"),
		accept("nodeports-out-udp", out("-p", "udp", "-m", "udp", "--dport", nodePorts), "the kind nodes reach NodePorts (udp) of the machine"),
		accept("established-in", in("-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED"), "answers from the machine to connections the kind nodes opened"),
		accept("established-out", out("-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED"), "answers from the kind nodes to connections the machine opened"),
		{Machine: m.Name, Table: NATTable, Chain: PostroutingChain, Purpose: "keep-addresses", Match: out(), Target: "RETURN",
			Why: "the machine sees the kind nodes' own addresses, not the kind host's: Docker masquerades what leaves the kind network, and a tunnel endpoint that arrives from the host's address is not the one flannel advertised"},
	}
}

// parseMark reads a rule's mark from a line of iptables -S: the cluster,
// the machine and the purpose; ok is false for a rule that is not the
// underlay's.
func parseMark(line string) (cluster, machine, purpose string, ok bool) {
	i := strings.Index(line, CommentPrefix)
	if i < 0 {
		return "", "", "", false
	}
	rest := line[i+len(CommentPrefix):]
	if j := strings.IndexAny(rest, "\" "); j >= 0 {
		rest = rest[:j]
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}
