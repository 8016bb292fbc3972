// Package runmark marks what a run of the suites makes or changes in a
// cluster with the run's ID and start time (a label and an annotation on
// every object it creates; a record, on each node it changes, of the
// labels and taints it added), and keeps the run's heartbeat in the
// cluster while it runs (a Lease named by the run). A later run, or
// `winconform sweep`, finds by them what a run that was killed left, and
// tells a dead run from a live one.
package runmark

import (
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// RunLabel carries the run's ID on every object a run creates.
	RunLabel = "winconform.io/run"
	// E2ERunLabel is the e2e framework's own run label on the namespaces
	// it makes (the same ID).
	E2ERunLabel = "e2e-run"
	// StartedAnnotation is when the run started (RFC 3339), on every
	// object it creates.
	StartedAnnotation = "winconform.io/run-started"
	// LeaseNamespace holds the runs' heartbeats, one Lease per run.
	LeaseNamespace = "winconform-runs"
	// PartOfLabel marks the harness's own objects that belong to no run
	// (the heartbeats' namespace), which a sweep never removes.
	PartOfLabel = "app.kubernetes.io/part-of"
	// PartOf is PartOfLabel's value.
	PartOf = "winconform"
)

// Run is a run of the suites: its ID, a label value and a Lease's name,
// and when it started.
type Run struct {
	ID      string
	Started time.Time
}

// Labels are the labels that mark an object as the run's.
func (r Run) Labels() map[string]string { return map[string]string{RunLabel: r.ID} }

// Annotations are the annotations every object of the run carries.
func (r Run) Annotations() map[string]string {
	return map[string]string{StartedAnnotation: r.Started.UTC().Format(time.RFC3339)}
}

// Mark labels and annotates o as the run's.
func (r Run) Mark(o metav1.Object) {
	o.SetLabels(merged(o.GetLabels(), r.Labels()))
	o.SetAnnotations(merged(o.GetAnnotations(), r.Annotations()))
}

// merged is m (made when nil) with add's keys set.
func merged(m, add map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, add)
	return m
}

// Of is the run that made o, and when o was made: its RunLabel (else the
// e2e framework's label, for namespaces), and its creation time.
func Of(o metav1.Object) (id string, created time.Time) {
	id = o.GetLabels()[RunLabel]
	if id == "" {
		id = o.GetLabels()[E2ERunLabel]
	}
	return id, o.GetCreationTimestamp().Time
}

// StartedOf is when the run that made o started (its annotation), or zero.
func StartedOf(o metav1.Object) time.Time {
	t, err := time.Parse(time.RFC3339, o.GetAnnotations()[StartedAnnotation])
	if err != nil {
		return time.Time{}
	}
	return t
}
