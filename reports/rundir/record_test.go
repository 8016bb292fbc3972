package rundir_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// A run claims its heartbeat, marks its report directory started, sweeps
// the dead before its specs (swept.json, and a line in summary.md), and
// marks the directory ended. A second claim of the live run's ID is
// refused before anything, and the run's objects stay.
func TestRecord(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	dead := "wc-20261125t170000-0000dead"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage-329", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	runmark.Run{ID: dead, Started: now.Add(-time.Hour)}.Mark(ns)
	cs := fake.NewSimpleClientset(ns)
	r := reporttest.IdealHybrid()
	r.NoRunFile = true
	dir := r.Write(t)
	run := runmark.Run{ID: r.ID, Started: now.Truncate(time.Second)}
	var log bytes.Buffer
	hb, err := rundir.Claim(ctx, cs, run, time.Minute, dir, &log)
	if err != nil {
		t.Fatal(err)
	}
	rec := rundir.Start(ctx, cs, dir, run, time.Minute, hb, &log)
	defer rec.StopHeartbeat()

	live := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage-330"}}
	run.Mark(live)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, live, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var inUse *runmark.InUseError
	if _, err := rundir.Claim(ctx, cs, runmark.Run{ID: run.ID, Started: now}, time.Minute, t.TempDir(), io.Discard); !errors.As(err, &inUse) ||
		!strings.Contains(err.Error(), "run "+run.ID+" is live") || !strings.Contains(err.Error(), dir) {
		t.Errorf("a second claim of the live run's ID: %v, want it refused naming the live run's report", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "storage-330", metav1.GetOptions{}); err != nil {
		t.Errorf("the live run's namespace after the refused second claim: %v", err)
	}
	if !strings.Contains(log.String(), "swept before the run: run "+dead+": dead (no heartbeat; its newest object is 1h0m0s old); removed namespace storage-329") {
		t.Errorf("log:\n%s", log.String())
	}
	if _, err := cs.CoordinationV1().Leases(runmark.LeaseNamespace).Get(ctx, run.ID, metav1.GetOptions{}); err != nil {
		t.Errorf("no heartbeat: %v", err)
	}
	var swept suiterun.SweepReport
	data, _ := os.ReadFile(filepath.Join(dir, rundir.SweptFile))
	if err := json.Unmarshal(data, &swept); err != nil || swept.Format != suiterun.SweepFormat || len(swept.Dead) != 1 || swept.Dead[0].ID != dead || swept.By != run.ID {
		t.Errorf("swept.json: %s (%v)", data, err)
	}
	if err := rundir.CheckFinished(dir); err == nil {
		t.Error("a run that has not ended reads as finished")
	}

	rec.Finish(errors.New("the suite exited with status 1"))
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "Before its specs, this run removed what 1 dead run(s) left (swept.json): run `"+dead+"` (no heartbeat; its newest object is 1h0m0s old): `namespace storage-329`.") {
		t.Errorf("summary.md:\n%s", md)
	}
	var st rundir.RunState
	data, _ = os.ReadFile(filepath.Join(dir, rundir.RunFile))
	if err := json.Unmarshal(data, &st); err != nil || st.Ended == nil || st.Outcome != "ended: the suite exited with status 1" || st.RunID != run.ID {
		t.Errorf("%s after the end: %s (%v)", rundir.RunFile, data, err)
	}
}

// A heartbeat the cluster refuses is said, and the run goes on.
func TestClaimRefusedGoesOn(t *testing.T) {
	cs := fake.NewSimpleClientset()
	cs.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("leases is forbidden")
	})
	var log bytes.Buffer
	if _, err := rundir.Claim(context.Background(), cs, runmark.Run{ID: "wc-261129090000-0001", Started: time.Now()}, time.Minute, t.TempDir(), &log); err != nil {
		t.Errorf("a heartbeat the cluster refuses: %v, want the run to go on", err)
	}
	if !strings.Contains(log.String(), "leases is forbidden") || !strings.Contains(log.String(), "may take this run's objects for a dead run's") {
		t.Errorf("log:\n%s", log.String())
	}
}
