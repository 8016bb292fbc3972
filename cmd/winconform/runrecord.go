package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports/rundir"
)

// runRecord is what keeps a run findable while it runs and after a kill:
// its report directory marked started (rundir.RunFile) until it ends, and
// its heartbeat in the cluster.
type runRecord struct {
	dir   string
	hb    *runmark.Heartbeat
	swept *suiterun.SweepReport
	log   io.Writer
}

// claimRun claims the run's ID in the cluster (runmark.Claim): its
// heartbeat, which it keeps renewing. A run ID whose heartbeat another
// invocation keeps alive is refused (*runmark.InUseError). A heartbeat
// that cannot be written otherwise is said, and the run goes on: on a
// cluster where it may not write Leases, it runs as before, unseen by
// other runs' sweeps (and unguarded).
func claimRun(ctx context.Context, cs kubernetes.Interface, rf *runFlags, log io.Writer) (*runmark.Heartbeat, error) {
	if rf.deadAfter <= 0 {
		rf.deadAfter = runmark.DefaultDeadAfter
	}
	host, _ := os.Hostname()
	token := make([]byte, 8)
	_, _ = rand.Read(token)
	run := runmark.Run{ID: rf.runID, Started: rf.started}
	hb, err := runmark.Claim(ctx, cs, run, hex.EncodeToString(token), runmark.HeartbeatOptions{DeadAfter: rf.deadAfter, Log: log,
		Holder:      fmt.Sprintf("winconform e2e %s/%d", host, os.Getpid()),
		Annotations: map[string]string{"winconform.io/report-dir": abs(rf.reportDir), "winconform.io/host": host}})
	var inUse *runmark.InUseError
	switch {
	case errors.As(err, &inUse):
		return nil, fmt.Errorf("--run-id %s: %w (nothing was moved or made)", rf.runID, err)
	case err != nil:
		fmt.Fprintf(log, "winconform: %v: a run on the same cluster may take this run's objects for a dead run's\n", err)
	}
	return hb, nil
}

// startRun marks the report directory, keeps the run's heartbeat hb, and
// removes what dead runs left (SweepDead, their heartbeat silent longer
// than rf.deadAfter), writing it to swept.json. Failures are said and the
// run goes on.
func startRun(ctx context.Context, cs kubernetes.Interface, rf *runFlags, hb *runmark.Heartbeat, log io.Writer) *runRecord {
	rec := &runRecord{dir: rf.reportDir, log: log, hb: hb}
	if err := rundir.MarkStarted(rf.reportDir, rf.runID, rf.started); err != nil {
		fmt.Fprintf(log, "winconform: marking %s as the report of run %s: %v\n", rf.reportDir, rf.runID, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	rep, err := suiterun.SweepDead(sctx, cs, suiterun.SweepOptions{OlderThan: rf.deadAfter, Except: rf.runID, Log: prefixed{log, "swept before the run: "}})
	if err != nil {
		fmt.Fprintf(log, "winconform: removing what dead runs left: %v\n", err)
	}
	rec.swept = &rep
	stamped := struct {
		version.Stamp
		suiterun.SweepReport
	}{version.For(rf.runID), rep}
	if err := writeJSON(filepath.Join(rf.reportDir, rundir.SweptFile), stamped); err != nil {
		fmt.Fprintf(log, "winconform: writing %s: %v\n", rundir.SweptFile, err)
	}
	return rec
}

// stopHeartbeat stops renewing the run's heartbeat (its own sweep then removes it).
func (r *runRecord) stopHeartbeat() { r.hb.Stop() }

// finish says in summary.md what the sweep before the run removed, and
// marks the report directory ended.
func (r *runRecord) finish(runErr error) {
	if r.swept != nil && len(r.swept.Dead) > 0 {
		if err := appendSweptLine(filepath.Join(r.dir, "summary.md"), *r.swept); err != nil {
			fmt.Fprintf(r.log, "winconform: %v\n", err)
		}
	}
	outcome := "ended"
	if runErr != nil {
		outcome = "ended: " + runErr.Error()
	}
	if err := rundir.MarkEnded(r.dir, outcome); err != nil {
		fmt.Fprintf(r.log, "winconform: marking the report %s ended: %v\n", r.dir, err)
	}
}

// appendSweptLine adds to the summary (when the suite wrote one) what the
// sweep before the run removed, and from which runs.
func appendSweptLine(path string, rep suiterun.SweepReport) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	var runs []string
	for _, d := range rep.Dead {
		items := make([]string, len(d.Left))
		for i, l := range d.Left {
			items[i] = "`" + l.Kind + " " + l.Name + "`"
		}
		if len(items) == 0 {
			items = []string{"nothing but its heartbeat"}
		}
		runs = append(runs, fmt.Sprintf("run `%s` (%s): %s", d.ID, d.Why, strings.Join(items, ", ")))
	}
	_, err = fmt.Fprintf(f, "\nBefore its specs, this run removed what %d dead run(s) left (%s): %s.\n", len(rep.Dead), rundir.SweptFile, strings.Join(runs, "; "))
	return err
}

// prefixed writes each line with a prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	var sb strings.Builder
	for _, l := range lines {
		if l != "" {
			sb.WriteString(p.prefix + l)
		}
	}
	if _, err := io.WriteString(p.w, sb.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
