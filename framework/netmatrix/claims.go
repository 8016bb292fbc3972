package netmatrix

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/framework/claims"
)

// Which cells the matrix probes, and which documented claims each cell
// evidences (the NET claims of framework/claims).

// Applicable says whether src probes t: not itself; names only from pods
// (nodes and the outside client do not use the cluster's DNS); the client
// outside the cluster only NodePorts; NodePorts only from outside or from
// nodes; ICMP only between pods; a node's own address only from another
// node.
func Applicable(src Peer, t Target) bool {
	if t.Kind == src.Kind && t.Name == src.Name {
		return false
	}
	byName := t.Mode == PodName || t.Mode == ServiceName || t.Mode == ServiceFQDN
	switch src.Kind {
	case Pod:
		return t.Mode != NodePort && t.Mode != NodeIP
	case Node:
		return !byName && t.Mode != Ping
	case External:
		return t.Mode == NodePort
	}
	return false
}

// ClaimsFor returns the claims the cell (src, t) evidences: those with a
// part (framework/claims) that the cell matches; none for a control cell.
func ClaimsFor(src Peer, t Target) []string {
	var out []string
	for _, p := range PartsFor(src, t) {
		if !slices.Contains(out, p.Claim) {
			out = append(out, p.Claim)
		}
	}
	return out
}

// ClaimPart names one part of a claim.
type ClaimPart struct {
	Claim string `json:"claim"`
	Part  string `json:"part"`
}

func (p ClaimPart) String() string { return p.Claim + " (" + p.Part + ")" }

// PartsFor returns the parts of path claims that the cell (src, t) matches.
func PartsFor(src Peer, t Target) []ClaimPart {
	var out []ClaimPart
	for _, c := range claims.All() {
		for _, p := range c.Parts {
			if partMatches(p, src, t) {
				out = append(out, ClaimPart{Claim: c.ID, Part: p.Name})
			}
		}
	}
	return out
}

// PartsOf lists the parts of claim id.
func PartsOf(id string) []ClaimPart {
	c, ok := claims.Get(id)
	if !ok {
		return nil
	}
	var out []ClaimPart
	for _, p := range c.Parts {
		out = append(out, ClaimPart{Claim: id, Part: p.Name})
	}
	return out
}

func peerMatches(want claims.Peer, got Peer) bool {
	return string(got.Kind) == want.Kind && (want.OS == "" || string(want.OS) == got.OS) && (!want.ControlPlane || got.ControlPlane)
}

func partMatches(p claims.Part, src Peer, t Target) bool {
	if !peerMatches(p.From, src) || !peerMatches(p.To, t.Peer) || !slices.Contains(p.Modes, string(t.Mode)) {
		return false
	}
	if p.Via != "" && string(p.Via) != t.ViaOS {
		return false
	}
	if !underlayMatches(p.Underlay, src, t) {
		return false
	}
	switch p.Where {
	case claims.SameNode:
		return src.Node != "" && src.Node == t.Node
	case claims.OtherNode:
		return src.Node != t.Node
	case claims.Local:
		if t.Mode == NodePort {
			return t.Via == src.Node
		}
		return slices.Contains(t.BackendNodes, src.Node)
	}
	return true
}

// underlayMatches says whether the cell (src, t) crosses the underlay the
// way want says: into it (the source on the kind network, the target on a
// node joined through it: its pod, its node, a NodePort through its
// address) or out of it (the other way round: a Service's endpoints and
// the cluster's DNS are on the kind network, the matrix's pods on
// underlay nodes being none of its endpoints).
func underlayMatches(want string, src Peer, t Target) bool {
	into := t.Underlay || t.ViaUnderlay
	switch want {
	case claims.IntoUnderlay:
		return !src.Underlay && into
	case claims.OutOfUnderlay:
		return src.Underlay && !into
	}
	return true
}

// CrossesUnderlay says whether a cell's path crosses the underlay, either
// way, between the kind network and a node joined through it: one end is
// on such a node and the other on the kind network (a Service's endpoints
// and the cluster's DNS are there). A server outside the cluster sits on
// the kind host, between the two: the paths to it cross nothing.
func CrossesUnderlay(src Peer, t Target) bool {
	if t.Kind == External {
		return false
	}
	return src.Underlay != (t.Underlay || t.ViaUnderlay) || (src.Underlay && t.Kind == Service)
}

// Level is the evidence level of a probed cell: real Windows nodes when
// either end (or the node a NodePort goes through) is Windows, else real
// Linux nodes.
func (m *Matrix) Level(c *Cell) claims.Level {
	src, t := m.Peers(c)
	if w := string(corev1.Windows); src.OS == w || t.OS == w || t.ViaOS == w {
		return claims.WindowsNode
	}
	return claims.Linux
}

// Uncatalogued returns the cells that evidence no claim (control cells:
// a Linux pod to a Linux-backed Service, a node to a NodePort, ...).
func (m *Matrix) Uncatalogued() []*Cell {
	var out []*Cell
	for _, c := range m.Cells() {
		if len(c.Claims) == 0 {
			out = append(out, c)
		}
	}
	return out
}

// Evidence is what a claim's decided cells were obtained on: a level and,
// on Windows, the build of the Windows nodes the paths crossed, and those
// nodes.
type Evidence struct {
	Level claims.Level
	Build string // "" off Windows, or when the node's build is not known
	Cells int
	Nodes []string // on Windows, the Windows nodes of that build the cells crossed
}

// Evidence counts the decided cells (Cell.Decided: a flaky, unobserved or
// broken cell is no evidence) by level and Windows build, for the claim's
// spec to record (one record each, naming its nodes). A cell that crossed
// Windows nodes of two builds counts for each.
func (m *Matrix) Evidence(cells []*Cell) []Evidence {
	builds := m.nodeBuilds()
	type key struct {
		level claims.Level
		build string
	}
	byKey := map[key]*Evidence{}
	var order []key
	count := func(k key, nodes []string) {
		e := byKey[k]
		if e == nil {
			e = &Evidence{Level: k.level, Build: k.build}
			byKey[k] = e
			order = append(order, k)
		}
		e.Cells++
		for _, n := range nodes {
			if !slices.Contains(e.Nodes, n) {
				e.Nodes = append(e.Nodes, n)
			}
		}
	}
	for _, c := range cells {
		if !c.Decided() {
			continue
		}
		level := m.Level(c)
		if !level.OnWindows() {
			count(key{level: level}, nil)
			continue
		}
		byBuild := map[string][]string{}
		var order []string
		for _, n := range m.windowsNodesOf(c) {
			b := builds[n]
			if _, ok := byBuild[b]; !ok {
				order = append(order, b)
			}
			byBuild[b] = append(byBuild[b], n)
		}
		if len(order) == 0 {
			count(key{level: level}, nil)
		}
		for _, b := range order {
			count(key{level: level, build: b}, byBuild[b])
		}
	}
	out := make([]Evidence, 0, len(order))
	for _, k := range order {
		e := *byKey[k]
		sort.Strings(e.Nodes)
		out = append(out, e)
	}
	return out
}

// nodeBuilds maps the matrix's Windows nodes to their builds, from the
// peers that carry one.
func (m *Matrix) nodeBuilds() map[string]string {
	out := map[string]string{}
	add := func(p Peer) {
		if p.OS == string(corev1.Windows) && p.Node != "" && p.Build != "" {
			out[p.Node] = p.Build
		}
	}
	for _, s := range m.Sources {
		add(s.Peer())
	}
	for _, t := range m.Targets {
		add(t.Peer)
	}
	return out
}

// windowsNodesOf lists the Windows nodes cell c crossed, each once: its
// source's, its target's (a Service's backends'), the node a NodePort went
// through.
func (m *Matrix) windowsNodesOf(c *Cell) []string {
	src, t := m.Peers(c)
	var nodes []string
	w := string(corev1.Windows)
	if src.OS == w {
		nodes = append(nodes, src.Node)
	}
	if t.OS == w {
		nodes = append(nodes, t.Node)
		nodes = append(nodes, t.BackendNodes...)
	}
	if t.ViaOS == w {
		nodes = append(nodes, t.Via)
	}
	var out []string
	for _, n := range nodes {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
