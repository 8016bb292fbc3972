package rundir

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

	"github.com/winconform/winconform/internal/atomicfile"
	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/internal/version"
)

// Claim claims run's ID in the cluster (runmark.Claim) for a run of the
// suites whose report goes to dir (an absolute path): its heartbeat, which
// it keeps renewing, silent deadAfter before it counts as dead. A run ID
// whose heartbeat another invocation keeps alive is refused (the error is
// a *runmark.InUseError). A heartbeat that cannot be written otherwise is
// said in log, and the run goes on (no error): on a cluster where it may
// not write Leases, it runs as before, unseen by other runs' sweeps (and
// unguarded).
func Claim(ctx context.Context, cs kubernetes.Interface, run runmark.Run, deadAfter time.Duration, dir string, log io.Writer) (*runmark.Heartbeat, error) {
	host, _ := os.Hostname()
	token := make([]byte, 8)
	_, _ = rand.Read(token)
	hb, err := runmark.Claim(ctx, cs, run, hex.EncodeToString(token), runmark.HeartbeatOptions{DeadAfter: deadAfter, Log: log,
		Holder:      fmt.Sprintf("winconform e2e %s/%d", host, os.Getpid()),
		Annotations: map[string]string{"winconform.io/report-dir": dir, "winconform.io/host": host}})
	var inUse *runmark.InUseError
	switch {
	case errors.As(err, &inUse):
		return nil, err
	case err != nil:
		fmt.Fprintf(log, "winconform: %v: a run on the same cluster may take this run's objects for a dead run's\n", err)
	}
	return hb, nil
}

// Record is what keeps a run findable while it runs and after a kill:
// its report directory marked started (RunFile) until it ends, and its
// heartbeat in the cluster.
type Record struct {
	dir   string
	runID string
	hb    *runmark.Heartbeat
	swept *suiterun.SweepReport
	log   io.Writer
}

// Start marks the report directory dir started for run, keeps the run's
// heartbeat hb (Claim), and removes what dead runs left
// (suiterun.SweepDead, their heartbeat silent longer than deadAfter; its
// lines in log, each after "swept before the run: "), writing it to
// SweptFile. Failures are said in log and the run goes on.
func Start(ctx context.Context, cs kubernetes.Interface, dir string, run runmark.Run, deadAfter time.Duration, hb *runmark.Heartbeat, log io.Writer) *Record {
	rec := &Record{dir: dir, runID: run.ID, log: log, hb: hb}
	if err := MarkStarted(dir, run.ID, run.Started); err != nil {
		fmt.Fprintf(log, "winconform: marking %s as the report of run %s: %v\n", dir, run.ID, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	rep, err := suiterun.SweepDead(sctx, cs, suiterun.SweepOptions{OlderThan: deadAfter, Except: run.ID, Log: prefixed{log, "swept before the run: "}})
	if err != nil {
		fmt.Fprintf(log, "winconform: removing what dead runs left: %v\n", err)
	}
	rec.swept = &rep
	stamped := struct {
		version.Stamp
		suiterun.SweepReport
	}{version.For(run.ID), rep}
	if err := atomicfile.WriteJSON(filepath.Join(dir, SweptFile), stamped); err != nil {
		fmt.Fprintf(log, "winconform: writing %s: %v\n", SweptFile, err)
	}
	return rec
}

// StopHeartbeat stops renewing the run's heartbeat (its own sweep then
// removes it).
func (r *Record) StopHeartbeat() { r.hb.Stop() }

// Finish says in summary.md what the sweep before the run removed, marks
// the report directory ended, with runErr as its outcome, and seals it
// (Seal) with what the CLI added after the suite (node logs, run.json
// ended).
func (r *Record) Finish(runErr error) {
	if r.swept != nil && len(r.swept.Dead) > 0 {
		if err := appendSweptLine(filepath.Join(r.dir, "summary.md"), *r.swept); err != nil {
			fmt.Fprintf(r.log, "winconform: %v\n", err)
		}
	}
	outcome := "ended"
	if runErr != nil {
		outcome = "ended: " + runErr.Error()
	}
	if err := MarkEnded(r.dir, outcome); err != nil {
		fmt.Fprintf(r.log, "winconform: marking the report %s ended: %v\n", r.dir, err)
	}
	if err := Seal(r.dir, r.runID); err != nil {
		fmt.Fprintf(r.log, "winconform: %v\n", err)
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
	_, err = fmt.Fprintf(f, "\nBefore its specs, this run removed what %d dead run(s) left (%s): %s.\n", len(rep.Dead), SweptFile, strings.Join(runs, "; "))
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
