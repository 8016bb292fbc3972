package main

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/reports/rundir"
)

// claimRun claims the run's ID in the cluster (rundir.Claim), with
// --dead-after's default; a run ID another invocation keeps alive is
// refused, naming --run-id.
func claimRun(ctx context.Context, cs kubernetes.Interface, rf *runFlags, log io.Writer) (*runmark.Heartbeat, error) {
	if rf.deadAfter <= 0 {
		rf.deadAfter = runmark.DefaultDeadAfter
	}
	hb, err := rundir.Claim(ctx, cs, runmark.Run{ID: rf.runID, Started: rf.started}, rf.deadAfter, abs(rf.reportDir), log)
	if err != nil {
		return nil, fmt.Errorf("--run-id %s: %w (nothing was moved or made)", rf.runID, err)
	}
	return hb, nil
}

// startRun starts the run's record (rundir.Start): its report directory
// marked, its heartbeat hb kept, the dead runs swept before it.
func startRun(ctx context.Context, cs kubernetes.Interface, rf *runFlags, hb *runmark.Heartbeat, log io.Writer) *rundir.Record {
	return rundir.Start(ctx, cs, rf.reportDir, runmark.Run{ID: rf.runID, Started: rf.started}, rf.deadAfter, hb, log)
}
