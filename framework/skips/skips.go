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
	NoInventory         = Reason{"no-inventory", "no Windows machine inventory was given"}
	NoOutsidePeer       = Reason{"no-outside-peer", "no local probe binary (--probe-binary) to probe from outside the cluster"}
	ManagedControlPlane = Reason{"managed-control-plane", "the control plane is not visible in this cluster (a managed service)"}
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
)

// Skip records r (with detail, when given) and skips the current spec.
func Skip(r Reason, detail ...any) {
	msg := r.Text
	if len(detail) > 0 {
		msg += ": " + fmt.Sprint(detail...)
	}
	ginkgo.AddReportEntry(EntryName, r.Key, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(msg, 1)
}
