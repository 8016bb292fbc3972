package runmark

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NodeChangePrefix, followed by a run's ID, is the annotation on a node
// that records what that run added to it: a node is the cluster's, not the
// run's, so a sweep takes back the run's changes and leaves the node.
const NodeChangePrefix = "changes.winconform.io/"

// NodeChange is what one run added to a node.
type NodeChange struct {
	Started time.Time         `json:"started"`
	Taints  []corev1.Taint    `json:"taints,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// ChangeNode adds taints and labels to n and records them, in the same
// object (one update: never a change without its record), under the run's
// annotation. A taint the node already has (by key and effect) is not
// added and not recorded: it is not the run's to take back. A label the
// node already has is refused, since the value it had could not be put
// back.
func (r Run) ChangeNode(n *corev1.Node, taints []corev1.Taint, labels map[string]string) error {
	rec, _ := NodeChanges(n)[r.ID]
	if rec.Started.IsZero() {
		rec.Started = r.Started.UTC()
	}
	for k, v := range labels {
		if old, ok := n.Labels[k]; ok {
			return fmt.Errorf("node %s already has the label %s=%s: a run changes only labels it adds", n.Name, k, old)
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[k] = v
		if rec.Labels == nil {
			rec.Labels = map[string]string{}
		}
		rec.Labels[k] = v
	}
	for _, t := range taints {
		if hasTaint(n.Spec.Taints, t) {
			continue
		}
		n.Spec.Taints = append(n.Spec.Taints, t)
		rec.Taints = append(rec.Taints, t)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[NodeChangePrefix+r.ID] = string(data)
	return nil
}

// NodeChanges are the changes recorded on n, by run ID. A record that
// cannot be read counts as a change of nothing (its annotation is still
// taken away with the run).
func NodeChanges(n *corev1.Node) map[string]NodeChange {
	out := map[string]NodeChange{}
	for k, v := range n.Annotations {
		id, ok := strings.CutPrefix(k, NodeChangePrefix)
		if !ok || id == "" {
			continue
		}
		var c NodeChange
		_ = json.Unmarshal([]byte(v), &c)
		out[id] = c
	}
	return out
}

// UndoNodeChange takes from n what run id recorded: its taints that are
// still there, its labels that still have the value it gave them, and the
// record. It says what it took ("taint os=windows:NoSchedule", "label
// k=v"), sorted.
func UndoNodeChange(n *corev1.Node, id string) []string {
	rec, ok := NodeChanges(n)[id]
	if !ok {
		return nil
	}
	var undone []string
	for k, v := range rec.Labels {
		if got, ok := n.Labels[k]; ok && got == v {
			delete(n.Labels, k)
			undone = append(undone, "label "+k+"="+v)
		}
	}
	for _, t := range rec.Taints {
		kept := n.Spec.Taints[:0]
		for _, have := range n.Spec.Taints {
			if sameTaint(have, t) && have.Value == t.Value {
				undone = append(undone, "taint "+TaintString(t))
				continue
			}
			kept = append(kept, have)
		}
		n.Spec.Taints = kept
	}
	if len(n.Spec.Taints) == 0 {
		n.Spec.Taints = nil
	}
	delete(n.Annotations, NodeChangePrefix+id)
	sort.Strings(undone)
	return undone
}

// TaintString is a taint as kubectl writes it: key=value:Effect.
func TaintString(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

func hasTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for _, have := range ts {
		if sameTaint(have, t) {
			return true
		}
	}
	return false
}

func sameTaint(a, b corev1.Taint) bool { return a.Key == b.Key && a.Effect == b.Effect }
