// Package netmatrix probes every network path between a set of sources
// (pods, nodes, a client outside the cluster) and targets (pods, Services by
// IP, name and NodePort, a server outside the cluster), compares each cell
// with what the documents lead one to expect for this cluster, and renders
// the result as a truth table.
//
// Probes run in batches: one `probe connect` per source carries all of its
// targets, and sources run in parallel on a small worker pool. A cell whose
// observation differs from its expectation is probed once more before it
// counts. "The probe itself failed" (!) is kept apart from "the path is
// blocked" (X).
package netmatrix

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/winconform/winconform/framework/probeclient"
)

// Kind is what a peer is.
type Kind string

// Kinds of peers.
const (
	Pod      Kind = "pod"
	Service  Kind = "service"
	Node     Kind = "node"
	External Kind = "external"
)

// Mode is how a target is addressed.
type Mode string

// Modes of addressing a target.
const (
	PodIP       Mode = "pod-ip"
	PodName     Mode = "pod-dns"
	Ping        Mode = "icmp"
	ClusterIP   Mode = "cluster-ip"
	ServiceName Mode = "service-dns"
	ServiceFQDN Mode = "service-fqdn"
	NodePort    Mode = "nodeport"
	Address     Mode = "address"
	// NodeIP is a node's own address, answered by a probe server in the
	// node's network namespace (a host-network pod), which says from which
	// address it was called.
	NodeIP Mode = "node-ip"
)

// Modes lists every mode the matrix probes.
var Modes = []Mode{PodIP, PodName, Ping, ClusterIP, ServiceName, ServiceFQDN, NodePort, Address, NodeIP}

// Peer is a source or the thing a target addresses.
type Peer struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// OS is the peer's OS; for a Service, the OS of its endpoints.
	OS string `json:"os,omitempty"`
	// Node is where a pod runs, or the node a node peer is.
	Node string `json:"node,omitempty"`
	// ControlPlane marks a control-plane node peer.
	ControlPlane bool `json:"controlPlane,omitempty"`
	// Build is the Windows build of the peer's node (node.kubernetes.io/windows-build).
	Build string `json:"build,omitempty"`
	// BackendNodes are the nodes that run a Service's endpoints.
	BackendNodes []string `json:"backendNodes,omitempty"`
	// BackendIPs are the IPs that may answer for the peer (a pod's IP, a
	// Service's endpoints); empty when any answer will do.
	BackendIPs []string `json:"backendIPs,omitempty"`
	// Underlay marks a pod or node on a node joined from outside the kind
	// network through the underlay (infra/underlay); for a Service, one of
	// its endpoints is.
	Underlay bool `json:"underlay,omitempty"`
	// Address is a node peer's own address, which a node-ip target must see
	// it calling from (no NAT between the two).
	Address string `json:"address,omitempty"`
}

// Target is one column: a peer addressed one way.
type Target struct {
	Peer
	Mode Mode `json:"mode"`
	// URL is what the probe is given (http://, icmp://).
	URL string `json:"url"`
	// Via names the node whose address a NodePort target uses, and ViaOS its OS.
	Via   string `json:"via,omitempty"`
	ViaOS string `json:"viaOS,omitempty"`
	// ViaUnderlay says that node joined through the underlay.
	ViaUnderlay bool `json:"viaUnderlay,omitempty"`
}

// ID names the target in tables: peer/mode, with @node for NodePorts.
func (t Target) ID() string {
	id := t.Name + "/" + string(t.Mode)
	if t.Via != "" {
		id += "@" + t.Via
	}
	return id
}

// Source runs probes from one place.
type Source interface {
	Peer() Peer
	// Probe runs one batch: one result per target, in order. An error means
	// the probe itself could not run (every cell of the batch is a probe error).
	Probe(ctx context.Context, targets []string) ([]probeclient.Result, error)
	// Repro is a command a person can run to probe target from this source.
	Repro(target string) string
}

// Observation is what probing a cell showed.
type Observation string

// Observations.
const (
	Reachable Observation = "reachable"
	// Blocked: the path is closed (timeout, refused, reset, unreachable,
	// a name that does not resolve).
	Blocked Observation = "blocked"
	// WrongAnswer: something answered, but not what the target is (an HTTP
	// error status, another pod's answer, an unexpected reply).
	WrongAnswer Observation = "wrong-answer"
	// Unclassified: an error the probe could not put in a class; neither
	// a blocked path nor an answer.
	Unclassified Observation = "unclassified-error"
	// ProbeError: the probe could not test the path.
	ProbeError Observation = "probe-error"
	NotProbed  Observation = "skipped"
)

// Verdict compares a cell's observation with its expectation.
type Verdict string

// Verdicts.
const (
	OK         Verdict = "ok"
	Regression Verdict = "regression" // expected reachable, found blocked
	Drift      Verdict = "drift"      // a documented limitation that no longer holds
	// Wrong: an answer that is not the target's, or an error of no known
	// class; it fails the cell whatever was expected.
	Wrong Verdict = "wrong"
	// Flaky: the two probes of the cell disagreed (blocked, then reachable,
	// or the other way round).
	Flaky   Verdict = "flaky"
	Broken  Verdict = "probe-error"
	Skipped Verdict = "skipped"
	// Unobserved: a documented limitation's path was blocked, but its source
	// reached none of the paths it should reach (no control), so the
	// blocked path says nothing of the limitation.
	Unobserved Verdict = "unobserved"
)

// Decided says whether the cell's verdict is evidence of its claims: its
// path was probed, a second time where that matters (a mismatch, a
// documented limitation), the probes agreed, and a limitation's source
// reached a path it should reach. A flaky, unobserved, skipped or broken
// cell decides nothing: at most it is partial evidence.
func (c *Cell) Decided() bool {
	switch c.Verdict {
	case OK, Drift, Regression, Wrong:
		return true
	}
	return false
}

// Fails says whether a cell with verdict v fails its claim; a flaky cell
// fails unless flaky cells are allowed.
func (v Verdict) Fails(allowFlaky bool) bool {
	switch v {
	case Regression, Wrong, Broken:
		return true
	case Flaky:
		return !allowFlaky
	}
	return false
}

// Cell is one source-target pair.
type Cell struct {
	Source string   `json:"source"`
	Target string   `json:"target"`
	Claims []string `json:"claims,omitempty"`
	// Parts are the parts of the claims the cell matches.
	Parts    []ClaimPart        `json:"parts,omitempty"`
	Expect   Expectation        `json:"expect"`
	Observed Observation        `json:"observed"`
	Verdict  Verdict            `json:"verdict"`
	Result   probeclient.Result `json:"result"`
	// First is the first probe's result when the cell was probed again.
	First    *probeclient.Result `json:"first,omitempty"`
	Reprobed bool                `json:"reprobed,omitempty"`
	Repro    string              `json:"repro"`
	Why      string              `json:"why,omitempty"` // a skipped cell's reason, a probe error's cause
}

// Peers returns the source and the target of cell c.
func (m *Matrix) Peers(c *Cell) (Peer, Target) {
	var src Peer
	var tgt Target
	for _, s := range m.Sources {
		if s.Peer().Name == c.Source {
			src = s.Peer()
		}
	}
	for _, t := range m.Targets {
		if t.ID() == c.Target {
			tgt = t
		}
	}
	return src, tgt
}

// Matrix is a set of sources and targets and, once run, their cells.
type Matrix struct {
	Sources []Source
	Targets []Target
	Profile Profile
	// Claims says which documented claims a cell evidences; a cell with
	// none is a control cell (reported, but no claim's spec asserts it).
	Claims func(src Peer, t Target) []string
	// Parts says which parts of those claims a cell matches.
	Parts func(src Peer, t Target) []ClaimPart
	// Applies says whether a source probes a target at all.
	Applies func(src Peer, t Target) bool
	// Workers is how many sources probe at once.
	Workers int

	mu    sync.Mutex
	cells map[string]map[string]*Cell // source -> target -> cell
}

// Run probes every applicable cell, probes mismatching cells and documented
// limitations once more (a limitation whose first probe broke, a third
// time: it holds only on two real probes), and prints each source's row of
// the truth table to out as it completes.
func (m *Matrix) Run(ctx context.Context, out io.Writer) {
	m.cells = map[string]map[string]*Cell{}
	for _, s := range m.Sources {
		row := map[string]*Cell{}
		for _, t := range m.Targets {
			if m.Applies != nil && !m.Applies(s.Peer(), t) {
				continue
			}
			c := &Cell{Source: s.Peer().Name, Target: t.ID(), Expect: m.Profile.Expect(s.Peer(), t), Observed: NotProbed, Verdict: Skipped, Repro: s.Repro(t.URL)}
			if m.Claims != nil {
				c.Claims = m.Claims(s.Peer(), t)
			}
			if m.Parts != nil {
				c.Parts = m.Parts(s.Peer(), t)
			}
			row[t.ID()] = c
		}
		m.cells[s.Peer().Name] = row
	}
	if out == nil {
		out = io.Discard
	}
	fmt.Fprint(out, m.header())
	m.forEachSource(ctx, func(s Source) {
		m.probeRow(ctx, s, func(c *Cell) bool { return true })
		// A mismatch is probed once more before it counts, and so is a
		// documented limitation seen to hold: a blocked path is the
		// easiest thing to see by accident.
		m.probeRow(ctx, s, func(c *Cell) bool {
			return c.Verdict == Regression || c.Verdict == Drift || c.Verdict == Broken || c.Verdict == Wrong ||
				(c.Verdict == OK && !c.Expect.Reachable)
		})
		// A limitation seen blocked once, after a probe error, gets its
		// second real probe.
		m.probeRow(ctx, s, func(c *Cell) bool { return c.Verdict == Unobserved && c.Observed == Blocked })
		m.confirmLimitations(s)
		// Rows go out whole, one worker at a time.
		m.mu.Lock()
		fmt.Fprint(out, m.rowLine(s))
		m.mu.Unlock()
	})
	fmt.Fprint(out, m.footer())
}

func (m *Matrix) forEachSource(ctx context.Context, f func(Source)) {
	workers := m.Workers
	if workers < 1 {
		workers = 4
	}
	jobs := make(chan Source)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				f(s)
			}
		}()
	}
	for _, s := range m.Sources {
		if ctx.Err() != nil {
			break // no source starts after a cancellation
		}
		select {
		case jobs <- s:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
}

// probeRow probes, in one batch, the cells of source s that want says to.
func (m *Matrix) probeRow(ctx context.Context, s Source, want func(*Cell) bool) {
	m.mu.Lock()
	var cells []*Cell
	var urls []string
	var targets []Target
	for _, t := range m.Targets {
		c := m.cells[s.Peer().Name][t.ID()]
		if c == nil || !want(c) {
			continue
		}
		cells, urls, targets = append(cells, c), append(urls, t.URL), append(targets, t)
	}
	m.mu.Unlock()
	if len(cells) == 0 {
		return
	}
	results, err := s.Probe(ctx, urls)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range cells {
		first, firstWhy := c.Observed, c.Why
		if first != NotProbed {
			prev := c.Result
			c.First, c.Reprobed = &prev, true
		}
		if err != nil {
			c.Observed, c.Why = ProbeError, err.Error()
			c.Result = probeclient.Result{Index: i, Target: urls[i], ErrorClass: "probe-error", Error: err.Error()}
		} else {
			c.Result = results[i]
			c.Observed, c.Why = observe(results[i], targets[i])
			if c.Observed == Reachable {
				c.Observed, c.Why = observeCaller(s.Peer(), results[i], targets[i])
			}
		}
		c.Verdict = verdict(c.Expect, c.Observed)
		switch {
		case wrong(first) && !wrong(c.Observed):
			// Something that is not the target answered: a right answer
			// the second time does not make the path right.
			c.Verdict = Wrong
			c.Why = fmt.Sprintf("%s on the first probe (%s), %s on the second", first, firstWhy, c.Observed)
			c.Observed = first
		case (first == Blocked && c.Observed == Reachable) || (first == Reachable && c.Observed == Blocked):
			c.Verdict = Flaky
			c.Why = fmt.Sprintf("%s on the first probe, %s on the second", first, c.Observed)
		case !c.Expect.Reachable && c.Verdict == OK && first != NotProbed && first != Blocked:
			// A probe error observed nothing: this is the first real probe
			// that saw the path blocked, and a limitation holds only on two
			// (Run probes it once more).
			c.Verdict = Unobserved
			c.Why = fmt.Sprintf("blocked on one real probe, after a %s: a documented limitation holds only when two real probes see its path blocked", first)
		}
	}
}

func wrong(o Observation) bool { return o == WrongAnswer || o == Unclassified }

// confirmLimitations leaves a documented limitation's blocked cells
// undecided when their source reached none of the paths it should reach:
// a source that reaches nothing (a host whose network is down, a probe that
// cannot leave its compartment) sees every path blocked, the documented
// ones included.
func (m *Matrix) confirmLimitations(s Source) {
	m.mu.Lock()
	defer m.mu.Unlock()
	row := m.cells[s.Peer().Name]
	for _, c := range row {
		if c.Expect.Reachable && c.Verdict == OK {
			return // a control: the source reaches what it should
		}
	}
	for _, c := range row {
		if !c.Expect.Reachable && c.Verdict == OK {
			c.Verdict = Unobserved
			c.Why = "the source reached none of the paths it should reach, so this blocked path says nothing of the limitation"
		}
	}
}

// The probe's error classes that mean the path is blocked.
var blockedClasses = []string{"timeout", "refused", "reset", "unreachable", "dns"}

// observe classifies a probe's result for target t: the probe could not
// test the path (!), the path is blocked (X), something answered that is
// not the target or an error of no known class (?), or it answered, from a
// peer allowed to answer for t.
func observe(r probeclient.Result, t Target) (Observation, string) {
	switch {
	case r.OK && len(t.BackendIPs) > 0 && t.Mode != Ping && !slices.Contains(t.BackendIPs, r.Detail.PodIP):
		return WrongAnswer, fmt.Sprintf("answered by %s, which is not %s", r.Detail.PodIP, strings.Join(t.BackendIPs, " or "))
	case r.OK:
		return Reachable, ""
	case r.ErrorClass == "unsupported" || r.ErrorClass == "invalid-target" || r.ErrorClass == "probe-error":
		return ProbeError, r.Error
	case slices.Contains(blockedClasses, r.ErrorClass):
		return Blocked, ""
	case r.ErrorClass == "http-status" || r.ErrorClass == "mismatch":
		return WrongAnswer, fmt.Sprintf("%s: %s", r.ErrorClass, r.Error)
	default:
		return Unclassified, fmt.Sprintf("%s: %s", r.ErrorClass, r.Error)
	}
}

// observeCaller checks, for a node-ip target, that it saw the source node
// calling from its own address: a node that sees another address (the
// kind host's, Docker's MASQUERADE) is not the tunnel endpoint flannel
// advertised, which Linux VXLAN forgives and Windows' overlay and a lab's
// routers may not.
func observeCaller(src Peer, r probeclient.Result, t Target) (Observation, string) {
	if t.Mode != NodeIP || src.Address == "" || r.Detail.Caller == "" || r.Detail.Caller == src.Address {
		return Reachable, ""
	}
	return WrongAnswer, fmt.Sprintf("%s saw the call coming from %s, not from %s's own address %s: something between them translates addresses", t.Name, r.Detail.Caller, src.Name, src.Address)
}

func verdict(e Expectation, o Observation) Verdict {
	switch {
	case o == NotProbed:
		return Skipped
	case o == ProbeError:
		return Broken
	case o == WrongAnswer || o == Unclassified:
		return Wrong
	case e.Reachable && o == Blocked:
		return Regression
	case !e.Reachable && o == Reachable:
		return Drift
	default:
		return OK
	}
}

// Cells returns every cell, by source then target order.
func (m *Matrix) Cells() []*Cell {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Cell
	for _, s := range m.Sources {
		for _, t := range m.Targets {
			if c := m.cells[s.Peer().Name][t.ID()]; c != nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// CellsFor returns the cells that evidence claim.
func (m *Matrix) CellsFor(claim string) []*Cell {
	var out []*Cell
	for _, c := range m.Cells() {
		if slices.Contains(c.Claims, claim) {
			out = append(out, c)
		}
	}
	return out
}

// ClaimIDsPlanned returns every claim some applicable cell will evidence,
// sorted; it needs no run.
func (m *Matrix) ClaimIDsPlanned() []string {
	seen := map[string]bool{}
	for _, s := range m.Sources {
		for _, t := range m.Targets {
			if (m.Applies == nil || m.Applies(s.Peer(), t)) && m.Claims != nil {
				for _, id := range m.Claims(s.Peer(), t) {
					seen[id] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
