// Package skips makes a spec skip with a reason that reports can count: the
// reason's key goes into the spec's report entries, its text into Ginkgo's
// skip message. A spec that lacks what it needs skips; it never passes.
package skips

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"
)

// EntryName is the report entry that carries a skip's reason key.
const EntryName = "winconform.skip"

// Reason is why a spec cannot run on this cluster.
type Reason struct {
	Key  string // stable, for counting
	Text string // what the log and reports say
}

// The reasons specs skip for.
var (
	NoWindowsNode       = Reason{"no-windows-node", "no Windows node in this cluster"}
	SimulatedOnly       = Reason{"simulated-node-only", "this needs a real kubelet and the only nodes of that OS are simulated"}
	TooFewNodes         = Reason{"too-few-nodes", "the cluster has too few schedulable nodes of that OS"}
	NoLoadBalancer      = Reason{"no-load-balancer", "the cluster has no LoadBalancer implementation"}
	NoActiveDirectory   = Reason{"no-active-directory", "no Active Directory domain and gMSA credential spec are configured"}
	NoInventory         = Reason{"no-inventory", "no Windows machine inventory was given, so Windows nodes' hosts cannot be reached"}
	NoOutsidePeer       = Reason{"no-outside-peer", "no local probe binary (--probe-binary) or --external-url for the client and server outside the cluster"}
	ManagedControlPlane = Reason{"managed-control-plane", "no Linux control-plane node is visible in this cluster (a managed control plane)"}
	// NoVMs: the inventory's machines were not made for the run (no state
	// file of `winconform vms up` beside the inventory, or a static one).
	NoVMs = Reason{"no-vms", "the inventory's machines were not made for this run by winconform vms up"}
	// NotDisruptive: the spec would reboot, shut down or starve a node;
	// the run did not allow it (--disruptive).
	NotDisruptive = Reason{"not-disruptive", "this disrupts a node (reboot, shutdown, memory pressure): pass --disruptive to allow it"}
	// FeatureGateOff: the API server dropped a field its feature gate guards.
	FeatureGateOff = Reason{"feature-gate-off", "the feature gate this needs is off on the API server"}
	// KubeletNotConfigured: the node's kubelet is not configured for what
	// the spec checks (as its /configz says).
	KubeletNotConfigured = Reason{"kubelet-not-configured", "the node's kubelet is not configured for this"}
	// NoRuntimeClass: the cluster offers no RuntimeClass for the handler.
	NoRuntimeClass = Reason{"no-runtime-class", "the cluster has no RuntimeClass for the runtime handler this needs"}
	// Inconclusive is no lack of the cluster: the spec ran, but could not
	// observe what it needed. Reports count it apart from skips.
	Inconclusive = Reason{"inconclusive", "inconclusive: the spec could not observe what it needed"}
	// NoMatrixCells: the network matrix has no control cell (a path no
	// claim names) on this cluster.
	NoMatrixCells = Reason{"no-cells", "the matrix has no control cell on this cluster"}
	// NotProbed: the matrix has cells of the claim, and none could be probed.
	NotProbed = Reason{"not-probed", "no cell of this claim could be probed"}
	// NoUnderlayNode: no node joined through the underlay.
	NoUnderlayNode = Reason{"no-underlay-node", "no node joined from outside the kind network through the underlay (remoteNodes in the cluster file, or a routed inventory's machines)"}
	// NoDefenderMachine: no inventory machine asks for Defender exclusions.
	NoDefenderMachine = Reason{"no-defender-machine", "no inventory machine asks for Defender exclusions (defenderExclusions: true)"}
)

// Saying is r with another text, for a spec that says more of the same
// reason; the key, which reports count and the record checks, stays.
func (r Reason) Saying(text string) Reason {
	r.Text = text
	return r
}

// Reasons are every reason a spec may skip for: a record that names
// another skipped for a reason the harness does not have.
var Reasons = []Reason{NoWindowsNode, SimulatedOnly, TooFewNodes, NoLoadBalancer, NoActiveDirectory, NoInventory, NoOutsidePeer,
	ManagedControlPlane, NoVMs, NotDisruptive, FeatureGateOff, KubeletNotConfigured, NoRuntimeClass, Inconclusive, NoMatrixCells,
	NotProbed, NoUnderlayNode, NoDefenderMachine}

// Known says whether key is the key of one of Reasons.
func Known(key string) bool {
	for _, r := range Reasons {
		if r.Key == key {
			return true
		}
	}
	return false
}

// Skip records r (with detail, when given) and skips the current spec.
func Skip(r Reason, detail ...any) {
	msg := r.Text
	if len(detail) > 0 {
		msg += ": " + fmt.Sprint(detail...)
	}
	ginkgo.AddReportEntry(EntryName, r.Key, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(msg, 1)
}
