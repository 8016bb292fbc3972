package underlay

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/coreos/go-iptables/iptables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Tables is the part of github.com/coreos/go-iptables the host side uses;
// *iptables.IPTables is one, and the tests have a model of the chains.
type Tables interface {
	ChainExists(table, chain string) (bool, error)
	List(table, chain string) ([]string, error)
	ListWithCounters(table, chain string) ([]string, error)
	Insert(table, chain string, pos int, rulespec ...string) error
	Exists(table, chain string, rulespec ...string) (bool, error)
	Delete(table, chain string, rulespec ...string) error
}

// Flows forgets connection-tracking entries: the kernel's, through
// netlink (ConntrackFlows), or a test's.
type Flows interface {
	// Forget deletes the entries of UDP flows from src to dst and says
	// how many there were.
	Forget(src netip.Prefix, dst netip.Addr) (uint, error)
}

// Host is the kind host's side of the underlay: its iptables rules, and
// its connection tracking, whose NAT decisions outlive the rules.
type Host struct {
	Tables Tables
	Flows  Flows
	// ForwardingFile says whether the kernel forwards IPv4
	// (/proc/sys/net/ipv4/ip_forward unless set).
	ForwardingFile string
}

// ConntrackFlows is the kernel's connection tracking, through netlink.
type ConntrackFlows struct{}

// Forget deletes the conntrack entries of UDP flows from src to dst.
func (ConntrackFlows) Forget(src netip.Prefix, dst netip.Addr) (uint, error) {
	f := &netlink.ConntrackFilter{}
	if err := f.AddProtocol(unix.IPPROTO_UDP); err != nil {
		return 0, err
	}
	if err := f.AddIPNet(netlink.ConntrackOrigSrcIP, &net.IPNet{IP: src.Addr().AsSlice(), Mask: net.CIDRMask(src.Bits(), 32)}); err != nil {
		return 0, err
	}
	if err := f.AddIP(netlink.ConntrackOrigDstIP, dst.AsSlice()); err != nil {
		return 0, err
	}
	return netlink.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, f)
}

// NewHost reaches this host's iptables (the iptables command Docker uses,
// legacy or nft, through go-iptables).
func NewHost() (*Host, error) {
	ipt, err := iptables.New(iptables.Timeout(30))
	if err != nil {
		return nil, fmt.Errorf("the underlay needs iptables on the kind host: %w (Debian: apt-get install -y iptables)", err)
	}
	return &Host{Tables: ipt, Flows: ConntrackFlows{}}, nil
}

// chains are where the underlay's rules live.
var chains = []struct{ table, chain string }{{FilterTable, DockerUserChain}, {NATTable, PostroutingChain}}

// Change is one rule added or removed.
type Change struct {
	Op   string `json:"op"` // added or removed
	Rule string `json:"rule"`
}

func (c Change) String() string { return c.Op + " " + c.Rule }

// Apply makes the host's rules what the plan says: each missing rule is
// inserted at the top of its chain (the nat RETURN also when Docker's
// MASQUERADE of the kind network has come ahead of it), and rules marked
// for the plan's cluster that the plan does not have (a machine no longer
// joined, a run that was killed) are removed. Applying a plan twice changes
// nothing the second time.
func (h *Host) Apply(p Plan) ([]Change, error) {
	if err := h.dockerChains(); err != nil {
		return nil, err
	}
	cluster := p.Network.Cluster
	want := map[string]bool{}
	for _, r := range p.Rules {
		want[r.Mark(cluster)] = true
	}
	// Stale and duplicate rules of this cluster go first.
	changes, err := h.remove(func(c, machine, purpose, line string, seen map[string]int) bool {
		mark := CommentPrefix + c + ":" + machine + ":" + purpose
		return c == cluster && (!want[mark] || seen[mark] > 1)
	})
	if err != nil {
		return changes, err
	}
	// Missing rules, inserted at position 1 in reverse so that they keep
	// the plan's order.
	for i := len(p.Rules) - 1; i >= 0; i-- {
		r := p.Rules[i]
		spec := r.Spec(cluster)
		ok, err := h.Tables.Exists(r.Table, r.Chain, spec...)
		if err != nil {
			return changes, fmt.Errorf("checking %s: %w", r.Command(cluster, "-C"), err)
		}
		if ok && r.Table == NATTable {
			ahead, err := h.masqueradeAhead(p.Network, r)
			if err != nil {
				return changes, err
			}
			if ahead {
				if err := h.Tables.Delete(r.Table, r.Chain, spec...); err != nil {
					return changes, fmt.Errorf("%s: %w", r.Command(cluster, "-D"), err)
				}
				ok = false
			}
		}
		if ok {
			continue
		}
		if err := h.Tables.Insert(r.Table, r.Chain, 1, spec...); err != nil {
			return changes, fmt.Errorf("%s: %w", r.Command(cluster, "-I"), err)
		}
		changes = append(changes, Change{Op: "added", Rule: r.Command(cluster, "-I")})
		if r.Table == NATTable {
			if err := h.ForgetMasqueraded(p, r.Machine); err != nil {
				return changes, err
			}
		}
	}
	return changes, nil
}

// ForgetMasqueraded deletes the connection-tracking entries of the UDP
// flows (VXLAN's) from the kind network to machine: the kernel decides a
// flow's NAT at its first packet and keeps it for the flow's life, and
// VXLAN's flows live as long as pods talk. A flow masqueraded before the
// nat RETURN was in place stays masqueraded after it, and Linux drops the
// VXLAN packets NAT rewrote with bad UDP checksums (InCsumErrors; flannel
// documents it: flannel-io/flannel#1279, its troubleshooting's NAT
// section); forgotten, the flow's next packet starts a flow that the
// RETURN keeps as it is.
func (h *Host) ForgetMasqueraded(p Plan, machine string) error {
	if h.Flows == nil {
		return nil
	}
	for _, m := range p.Machines {
		if m.Name == machine {
			if _, err := h.Flows.Forget(p.Network.Subnet, m.Address); err != nil {
				return fmt.Errorf("forgetting the kind network's UDP flows to %s (conntrack): %w", m.Address, err)
			}
		}
	}
	return nil
}

// Remove deletes every rule marked for cluster, whatever made it.
func (h *Host) Remove(cluster string) ([]Change, error) {
	return h.remove(func(c, _, _, _ string, _ map[string]int) bool { return c == cluster })
}

// Sweep deletes the rules of every cluster keep says no to: what a killed
// run of a cluster that is gone left behind.
func (h *Host) Sweep(keep func(cluster string) bool) ([]Change, error) {
	return h.remove(func(c, _, _, _ string, _ map[string]int) bool { return !keep(c) })
}

// Clusters lists the clusters that have rules on this host.
func (h *Host) Clusters() ([]string, error) {
	var out []string
	for _, ch := range chains {
		lines, err := h.list(ch.table, ch.chain)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if c, _, _, ok := parseMark(l); ok && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// remove deletes the marked rules drop chooses (seen counts each mark so
// far, for duplicates), by their full specification, so that a rule Docker
// inserts meanwhile cannot be hit.
func (h *Host) remove(drop func(cluster, machine, purpose, line string, seen map[string]int) bool) ([]Change, error) {
	var changes []Change
	for _, ch := range chains {
		lines, err := h.list(ch.table, ch.chain)
		if err != nil {
			return changes, err
		}
		seen := map[string]int{}
		for _, l := range lines {
			c, m, purpose, ok := parseMark(l)
			if !ok {
				continue
			}
			seen[CommentPrefix+c+":"+m+":"+purpose]++
			if !drop(c, m, purpose, l, seen) {
				continue
			}
			args, err := splitRule(l)
			if err != nil || len(args) < 3 || args[0] != "-A" {
				return changes, fmt.Errorf("cannot read the rule %q of %s %s: %v", l, ch.table, ch.chain, err)
			}
			if err := h.Tables.Delete(ch.table, ch.chain, args[2:]...); err != nil {
				return changes, fmt.Errorf("deleting %q from %s %s: %w", l, ch.table, ch.chain, err)
			}
			changes = append(changes, Change{Op: "removed", Rule: "iptables -t " + ch.table + " -D " + strings.TrimPrefix(l, "-A ")})
		}
	}
	return changes, nil
}

// list is a chain's rules (-S); a chain that does not exist has none.
func (h *Host) list(table, chain string) ([]string, error) {
	ok, err := h.Tables.ChainExists(table, chain)
	if err != nil {
		return nil, fmt.Errorf("iptables -t %s: %w", table, err)
	}
	if !ok {
		return nil, nil
	}
	lines, err := h.Tables.List(table, chain)
	if err != nil {
		return nil, fmt.Errorf("iptables -t %s -S %s: %w", table, chain, err)
	}
	return lines, nil
}

// dockerChains checks that Docker's chains are there to put rules in.
func (h *Host) dockerChains() error {
	ok, err := h.Tables.ChainExists(FilterTable, DockerUserChain)
	if err != nil {
		return fmt.Errorf("iptables: %w", err)
	}
	if !ok {
		return errors.New("the kind host has no DOCKER-USER chain in its filter table: Docker makes it when it manages iptables (dockerd's default, iptables: true); start Docker with its iptables rules, or make the path yourself and give the machines underlay.shape: none")
	}
	return nil
}

// masqueradeAhead says whether a MASQUERADE of the kind network comes before
// the nat rule r in its chain.
func (h *Host) masqueradeAhead(n Network, r Rule) (bool, error) {
	lines, err := h.list(r.Table, r.Chain)
	if err != nil {
		return false, err
	}
	mark := r.Mark(n.Cluster)
	for _, l := range lines {
		if strings.Contains(l, mark) {
			return false, nil
		}
		if strings.Contains(l, "-j MASQUERADE") && strings.Contains(l, "-s "+n.Subnet.String()+" ") {
			return true, nil
		}
	}
	return false, nil
}

// Problem is a rule of the plan the host lacks, or has where it does not work.
type Problem struct {
	Rule Rule
	// What is wrong: missing, or behind Docker's MASQUERADE.
	What string
	// Fix is the command that puts it right.
	Fix string
}

func (p Problem) String() string {
	return fmt.Sprintf("the kind host's rule %s is %s (%s); fix: %s", p.Rule.Purpose, p.What, p.Rule.Why, p.Fix)
}

// Missing lists, for machine, the plan's rules the host lacks or has
// behind Docker's MASQUERADE.
func (h *Host) Missing(p Plan, machine string) ([]Problem, error) {
	var out []Problem
	cluster := p.Network.Cluster
	for _, r := range p.RulesOf(machine) {
		ok, err := h.Tables.Exists(r.Table, r.Chain, r.Spec(cluster)...)
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", r.Command(cluster, "-C"), err)
		}
		if !ok {
			out = append(out, Problem{Rule: r, What: "missing", Fix: r.Command(cluster, "-I")})
			continue
		}
		if r.Table != NATTable {
			continue
		}
		ahead, err := h.masqueradeAhead(p.Network, r)
		if err != nil {
			return nil, err
		}
		if ahead {
			out = append(out, Problem{Rule: r, What: "behind Docker's MASQUERADE of the kind network, so it never matches",
				Fix: r.Command(cluster, "-D") + " && " + r.Command(cluster, "-I")})
		}
	}
	return out, nil
}

// Counters returns the packets each of machine's rules has matched, by
// purpose.
func (h *Host) Counters(p Plan, machine string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, ch := range chains {
		ok, err := h.Tables.ChainExists(ch.table, ch.chain)
		if err != nil || !ok {
			continue
		}
		lines, err := h.Tables.ListWithCounters(ch.table, ch.chain)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			c, m, purpose, ok := parseMark(l)
			if !ok || c != p.Network.Cluster || m != machine {
				continue
			}
			args, err := splitRule(l)
			if err != nil {
				return nil, err
			}
			if i := slices.Index(args, "-c"); i >= 0 && i+1 < len(args) {
				n, _ := strconv.ParseUint(args[i+1], 10, 64)
				out[purpose] += n
			}
		}
	}
	return out, nil
}

// Forwarding says whether the kernel forwards IPv4 between interfaces.
func (h *Host) Forwarding() (bool, error) {
	f := h.ForwardingFile
	if f == "" {
		f = "/proc/sys/net/ipv4/ip_forward"
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(b)) == "1", nil
}

// splitRule splits a line of iptables -S into its arguments: words, with
// double-quoted strings (iptables quotes comments) as one argument.
func splitRule(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case inQuote && ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case ch == '"':
			inQuote = !inQuote
			inWord = true
		case ch == ' ' && !inQuote:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unbalanced quote in %q", line)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
