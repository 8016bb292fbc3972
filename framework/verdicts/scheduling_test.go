package verdicts

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/framework/ledger"
)

// SCH-02 is decided by the scheduler: the pod that selects
// beta.kubernetes.io/os was placed (works: the node carries the label, or
// the scheduler would not have placed it), or the scheduler found it
// Unschedulable (limited). A pod still Pending without the scheduler's
// verdict when the wait ended, or never read, decides nothing.
func TestLegacyLabelDecidedByTheScheduler(t *testing.T) {
	pending := pod("legacy-selector", "", corev1.PodPending, corev1.ContainerState{}, false)
	want(t, "Pending, no verdict of the scheduler", LegacyLabel(LegacySelection{OS: "windows", Carrying: 2, Nodes: 2, Pod: &pending}), ledger.Unobserved, "Pending")
	want(t, "never read", LegacyLabel(LegacySelection{OS: "windows", Carrying: 2, Nodes: 2}), ledger.Unobserved, "")
	unschedulable := pending
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint(s)."}}
	want(t, "Unschedulable", LegacyLabel(LegacySelection{OS: "windows", Nodes: 2, Pod: &unschedulable}), ledger.Limited, "didn't match")
	placed := pod("legacy-selector", "win-1", corev1.PodRunning, running(), true)
	want(t, "placed", LegacyLabel(LegacySelection{OS: "windows", Carrying: 2, Nodes: 2, Pod: &placed}), ledger.Works, "win-1")
	want(t, "placed on a node that gained the label after the setup", LegacyLabel(LegacySelection{OS: "windows", Carrying: 0, Nodes: 2, Pod: &placed}), ledger.Works, "win-1")
}
