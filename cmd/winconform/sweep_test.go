package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// Bad flags are usage errors (exit 2) before any cluster or machine is
// reached: a bad --older-than, --vms without --older-than, a cluster that
// is not there.
func TestSweepRefusesBadInput(t *testing.T) {
	vmsFile := filepath.Join(t.TempDir(), "vms.yaml")
	if err := os.WriteFile(vmsFile, []byte("provider: nosuch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--older-than", "two minutes"}, `invalid argument "two minutes" for "--older-than"`},
		{[]string{"sweep", "--older-than", "-5m"}, `invalid argument "-5m" for "--older-than" flag: want a positive duration`},
		{[]string{"sweep", "--vms", vmsFile}, "--vms needs --older-than"},
		{[]string{"sweep", "--vms", vmsFile, "--older-than", "24h"}, "nosuch"},
		{[]string{"sweep", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, "missing does not exist: check the path of the kubeconfig"},
		{[]string{"sweep", "--name", "no-such-cluster"}, "no cluster to sweep: the local cluster's kubeconfig"},
		{[]string{"e2e", "--dead-after", "-1m"}, `invalid argument "-1m" for "--dead-after" flag: want a positive duration`},
		{[]string{"e2e", "--run-id", "Not_A_Label", "--suite-binary", "/nonexistent"}, "--run-id: run ID \"Not_A_Label\""},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %s; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// sweep's output: a line per run, then the counts; --dry-run removes nothing.
func TestSweepCluster(t *testing.T) {
	now := time.Now()
	renewed := metav1.NewMicroTime(now.Add(-10 * time.Minute))
	secs := int32(120)
	dead := "wc-20261125t170000-0000dead"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage-329", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	runmark.Run{ID: dead, Started: now.Add(-time.Hour)}.Mark(ns)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "storage-329-windows-pv-claim", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	runmark.Run{ID: dead, Started: now.Add(-time.Hour)}.Mark(pv)
	cs := fake.NewSimpleClientset(ns, pv, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: dead, Namespace: runmark.LeaseNamespace},
		Spec: coordinationv1.LeaseSpec{RenewTime: &renewed, LeaseDurationSeconds: &secs}})
	var out bytes.Buffer
	if _, err := sweepCluster(context.Background(), cs, 2*time.Minute, true, &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"run " + dead + ": dead (heartbeat stopped 10m0s ago", "would remove namespace storage-329, persistentvolume storage-329-windows-pv-claim",
		"cluster: 1 dead run(s), would remove (dry run: nothing was removed) 2 object(s)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("dry run's output lacks %q:\n%s", w, out.String())
		}
	}
	if _, err := cs.CoreV1().PersistentVolumes().Get(context.Background(), pv.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("a dry run deleted: %v", err)
	}
	out.Reset()
	if _, err := sweepCluster(context.Background(), cs, 2*time.Minute, false, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed namespace storage-329, persistentvolume storage-329-windows-pv-claim") ||
		!strings.Contains(out.String(), "cluster: 1 dead run(s), removed 2 object(s) and node change(s); 0 live run(s) left alone") {
		t.Errorf("output:\n%s", out.String())
	}
	if _, err := cs.CoreV1().PersistentVolumes().Get(context.Background(), pv.Name, metav1.GetOptions{}); err == nil {
		t.Error("the dead run's volume is still there")
	}
}

// e2e's run record (rundir.Claim, rundir.Start, tested there) as the
// commands read it: a second e2e of the live run's ID is refused naming
// --run-id; killed before its end, results and gate say so and give no
// verdict; ended, results reads it.
func TestRunRecord(t *testing.T) {
	now := time.Now()
	cs := fake.NewSimpleClientset()
	r := reporttest.IdealHybrid()
	r.NoRunFile = true
	dir := r.Write(t)
	rf := runFlags{reportDir: dir, runID: r.ID, started: now.Truncate(time.Second)}
	var log bytes.Buffer
	hb, err := claimRun(context.Background(), cs, &rf, &log)
	if err != nil {
		t.Fatal(err)
	}
	if rf.deadAfter != runmark.DefaultDeadAfter {
		t.Errorf("--dead-after unset: %v, want %v", rf.deadAfter, runmark.DefaultDeadAfter)
	}
	rec := startRun(context.Background(), cs, &rf, hb, &log)
	defer rec.StopHeartbeat()
	second := runFlags{reportDir: t.TempDir(), runID: rf.runID, started: now, deadAfter: time.Minute}
	if _, err := claimRun(context.Background(), cs, &second, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "--run-id "+rf.runID+": ") ||
		!strings.Contains(err.Error(), "another --run-id") || !strings.HasSuffix(err.Error(), "(nothing was moved or made)") {
		t.Errorf("a second e2e of the live run's ID: %v, want it refused naming --run-id and the fix", err)
	}

	// Killed here: the directory says started, and its process (this
	// test's, here) is still there; once it is gone, killed.
	code, out, _ := runCLI(t, "results", dir)
	if code != exitFailed || !strings.Contains(out, "still running") {
		t.Errorf("results during the run: exit %d\n%s", code, out)
	}
	st := map[string]any{}
	data, _ := os.ReadFile(filepath.Join(dir, rundir.RunFile))
	_ = json.Unmarshal(data, &st)
	st["pid"] = 1 << 30
	data, _ = json.Marshal(st)
	_ = os.WriteFile(filepath.Join(dir, rundir.RunFile), data, 0o644)
	code, out, _ = runCLI(t, "results", dir)
	if code != exitFailed || !strings.Contains(out, "killed before the end: run "+rf.runID) || strings.Contains(out, "CLAIM") {
		t.Errorf("results of a killed run: exit %d\n%s", code, out)
	}
	code, out, stderr := runCLI(t, "gate", "--report", dir, "--policy", "../../policies/linux-only.yaml")
	if code != exitUnusable || !strings.Contains(stderr, "killed before the end") || strings.Contains(out+stderr, "SHIP") {
		t.Errorf("gate of a killed run: exit %d\n%s%s", code, out, stderr)
	}

	rec.Finish(nil)
	if code, out, _ := runCLI(t, "results", dir); code != 0 || !strings.Contains(out, "CLAIM") {
		t.Errorf("results of a run that ended: exit %d\n%s", code, out)
	}
}
