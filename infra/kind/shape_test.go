package kind

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// A cluster is reused only when it records the shape asked for; one that
// records none, or another, is refused naming what differs and the fix.
// What does not change the cluster (the ready timeout) is not its shape.
func TestAClusterIsReusedOnlyInItsShape(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	made := DefaultConfig()
	var log bytes.Buffer
	if err := CompareShape(ctx, cs, made, &log); err == nil || !strings.Contains(err.Error(), "records no shape") || !strings.Contains(err.Error(), "winconform down --name "+made.Name) {
		t.Fatalf("no shape recorded: %v", err)
	}
	if err := RecordShape(ctx, cs, made); err != nil {
		t.Fatal(err)
	}
	if err := RecordShape(ctx, cs, made); err != nil { // again: updated, not refused
		t.Fatal(err)
	}
	patient := made
	patient.ReadyTimeout.Duration = time.Hour
	if err := CompareShape(ctx, cs, patient, &log); err != nil || !strings.Contains(log.String(), "same shape") {
		t.Fatalf("the same shape, another ready timeout: %v (%s)", err, log.String())
	}
	other := made
	other.Workers = made.Workers + 1
	err := CompareShape(ctx, cs, other, &log)
	if err == nil || !strings.Contains(err.Error(), "workers") || !strings.Contains(err.Error(), "asked for") {
		t.Fatalf("another shape: %v, want the field named", err)
	}
}
