//go:build killtest

// The kill test: real runs of the built CLI on a real cluster, killed with
// SIGKILL (the CLI and the suite's whole process group) during setup and in
// the middle of the storage spec that makes a Retain PersistentVolume, a
// parallel run while one of them is alive, then winconform sweep. It
// counts the cluster's namespaces, PersistentVolumes, ClusterRoles,
// RuntimeClasses, node labels and node taints before and after. It runs on
// the cluster `make test` makes (make kill-test KILL_TEST_KUBECONFIG=...),
// never skipped: without a cluster it fails.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/winconform/winconform/internal/runmark"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/reports/rundir"
)

// deadAfter is the runs' --dead-after: their CLIs renew the heartbeat every
// quarter of it (2.5 s), so a live run is never taken for dead.
const deadAfter = 10 * time.Second

type killTest struct {
	t          *testing.T
	bin        string
	kubeconfig string
	cs         kubernetes.Interface
	tmp        string
}

func TestKilledRunsLeaveNothing(t *testing.T) {
	kc := os.Getenv("KILL_TEST_KUBECONFIG")
	if kc == "" {
		t.Fatal("KILL_TEST_KUBECONFIG: give the kubeconfig of the cluster to kill runs on (make kill-test KILL_TEST_KUBECONFIG=_output/<name>.kubeconfig)")
	}
	kc, _ = filepath.Abs(kc)
	cli, _ := filepath.Abs(envOr("KILL_TEST_CLI", "../../_output/bin/winconform"))
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("the CLI %s: %v (make build)", cli, err)
	}
	cs, err := clientFor(kc)
	if err != nil {
		t.Fatal(err)
	}
	k := &killTest{t: t, bin: cli, kubeconfig: kc, cs: cs, tmp: t.TempDir()}
	ctx := context.Background()
	suffix := randomHex(3)
	setupRun, storageRun, parallelRun := "kt-"+suffix+"-setup", "kt-"+suffix+"-storage", "kt-"+suffix+"-parallel"
	deadNodeRun, liveNodeRun := "kt-"+suffix+"-deadnode", "kt-"+suffix+"-livenode"

	before := k.state(ctx)
	t.Logf("before: %s", summarize(before))

	// A live run that changed a node, with its heartbeat (on kind no spec
	// taints a node: SCH-04 does so on real Windows nodes only; the test
	// stands in for such runs).
	node := k.firstNode(ctx)
	live := runmark.Run{ID: liveNodeRun, Started: time.Now()}
	hb, err := runmark.Beat(ctx, cs, live, runmark.HeartbeatOptions{DeadAfter: deadAfter})
	if err != nil {
		t.Fatal(err)
	}
	k.changeNode(ctx, live, node, "winconform.io/killtest-live")

	// 1. Killed during setup: once its spec's namespace is there.
	t.Log("run 1: killed during setup (its spec's namespace made, nothing else)")
	r1 := k.start(setupRun, "VOL-06")
	k.waitFor("run 1's namespace", func() bool { return len(k.namespaces(ctx, setupRun)) > 0 })
	ns1 := k.namespaces(ctx, setupRun)
	r1.kill()
	t.Logf("run 1 killed; it left namespaces %v", ns1)

	// 2. Killed in the middle of the storage spec: its Retain volume bound
	// to the claim, its pods running. Frozen there while run 3 runs.
	t.Log("run 2: in the middle of the hostPath PersistentVolume spec")
	r2 := k.start(storageRun, "VOL-06")
	var pv *corev1.PersistentVolume
	k.waitFor("run 2's PersistentVolume to be bound", func() bool {
		pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: runmark.RunLabel + "=" + storageRun})
		if err != nil || len(pvs.Items) == 0 || pvs.Items[0].Status.Phase != corev1.VolumeBound {
			return false
		}
		pv = &pvs.Items[0]
		return true
	})
	r2.freezeSuite()
	ns2 := k.namespaces(ctx, storageRun)
	t.Logf("run 2 has PersistentVolume %s (reclaim %s) and namespaces %v; its suite frozen (SIGSTOP), its CLI's heartbeat going",
		pv.Name, pv.Spec.PersistentVolumeReclaimPolicy, ns2)
	if !strings.HasSuffix(pv.Name, "-windows-pv-claim") || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("the volume is not the issue's (<namespace>-windows-pv-claim, Retain): %s %s", pv.Name, pv.Spec.PersistentVolumeReclaimPolicy)
	}

	// 2b. A second run of run 2's ID while run 2 is live: refused before
	// anything (exit 2), and run 2's objects stay. Before, it took run 2's
	// heartbeat over and its cleanup terminated run 2's namespaces.
	dup := filepath.Join(k.tmp, "dup-of-"+storageRun)
	code, dupOut := k.cli("e2e", "--kubeconfig", k.kubeconfig, "--claim", "LIM-01", "--run-id", storageRun, "--dead-after", deadAfter.String(),
		"--report-dir", dup, "-q", "--no-color")
	if code != 2 || !strings.Contains(dupOut, "run "+storageRun+" is live") || !strings.Contains(dupOut, r2.dir) {
		t.Errorf("a second e2e of live run 2's ID: exit %d, want 2 saying the run is live and where it reports:\n%s", code, dupOut)
	}
	if entries, _ := os.ReadDir(dup); len(entries) > 0 {
		t.Errorf("the refused run wrote %d file(s) into its report directory", len(entries))
	}
	for _, ns := range ns2 {
		if got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || got.DeletionTimestamp != nil {
			t.Errorf("run 2's namespace %s after the refused second run: %v", ns, err)
		}
	}

	// 3. A second run at once, after run 1's heartbeat died, and after a
	// run that changed a node died an hour ago: it sweeps run 1 and the
	// dead node change, never run 2 nor the live node change.
	time.Sleep(deadAfter + 5*time.Second)
	k.changeNode(ctx, runmark.Run{ID: deadNodeRun, Started: time.Now().Add(-time.Hour)}, node, "winconform.io/killtest-dead")
	t.Log("run 3: a run beside run 2")
	r3 := k.start(parallelRun, "LIM-01")
	if err := r3.wait(10 * time.Minute); err != nil {
		t.Errorf("run 3: %v\n%s", err, r3.output())
	}
	var swept suiterun.SweepReport
	if data, err := os.ReadFile(filepath.Join(r3.dir, rundir.SweptFile)); err != nil || json.Unmarshal(data, &swept) != nil {
		t.Fatalf("run 3's %s: %v %s", rundir.SweptFile, err, data)
	}
	byRun := map[string][]string{}
	for _, d := range swept.Dead {
		for _, l := range d.Left {
			byRun[d.ID] = append(byRun[d.ID], l.Kind+" "+l.Name)
		}
	}
	t.Logf("run 3's swept.json: %v; live: %v", byRun, swept.Live)
	for _, ns := range ns1 {
		if !slices.Contains(byRun[setupRun], "namespace "+ns) {
			t.Errorf("run 3 did not remove (or report) run 1's namespace %s: %v", ns, byRun)
		}
	}
	for _, want := range []string{"node taint " + node + " winconform.io/killtest-dead=" + deadNodeRun + ":NoSchedule",
		"node label " + node + " winconform.io/killtest-dead=" + deadNodeRun} {
		if !slices.Contains(byRun[deadNodeRun], want) {
			t.Errorf("run 3 did not remove (or report) the dead run's %s: %v", want, byRun[deadNodeRun])
		}
	}
	for _, id := range []string{storageRun, liveNodeRun} {
		if len(byRun[id]) > 0 {
			t.Errorf("run 3 removed what live run %s owns: %v", id, byRun[id])
		}
	}
	if _, err := cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("run 2's volume, of a live run, is gone after run 3: %v", err)
	}
	for _, ns := range ns2 {
		if got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || got.DeletionTimestamp != nil {
			t.Errorf("run 2's namespace %s, of a live run, was deleted by run 3: %v", ns, err)
		}
	}
	if md, _ := os.ReadFile(filepath.Join(r3.dir, "summary.md")); !strings.Contains(string(md), "Before its specs, this run removed what") ||
		!strings.Contains(string(md), setupRun) {
		t.Errorf("run 3's summary.md does not say what it removed:\n%s", md)
	}

	// 4. Run 2 killed; once its heartbeat is dead, winconform sweep.
	r2.kill()
	t.Log("run 2 killed")
	time.Sleep(deadAfter + 5*time.Second)
	mid := k.state(ctx)
	dry := k.cliOut("sweep", "--kubeconfig", k.kubeconfig, "--older-than", deadAfter.String(), "--dry-run")
	t.Logf("winconform sweep --dry-run:\n%s", dry)
	if after := k.state(ctx); !slices.Equal(mid, after) {
		t.Errorf("--dry-run changed the cluster: %s", changes(mid, after))
	}
	out := k.cliOut("sweep", "--kubeconfig", k.kubeconfig, "--older-than", deadAfter.String())
	t.Logf("winconform sweep:\n%s", out)
	for _, want := range append([]string{"persistentvolume " + pv.Name, "run " + storageRun + ": dead (heartbeat stopped",
		"run " + liveNodeRun + ": alive"}, prefixAll("namespace ", ns2)...) {
		if !strings.Contains(out, want) {
			t.Errorf("winconform sweep does not name %q", want)
		}
		if !strings.Contains(dry, want) {
			t.Errorf("winconform sweep --dry-run does not name %q", want)
		}
	}

	// The live run ends: its change taken back as a spec's cleanup does.
	hb.Stop()
	if _, err := suiterun.Sweep(ctx, cs, liveNodeRun, time.Minute); err != nil {
		t.Error(err)
	}
	after := k.state(ctx)
	t.Logf("after: %s", summarize(after))
	if !slices.Equal(before, after) {
		t.Errorf("the cluster is not as the runs found it: %s", changes(before, after))
	}

	// The killed runs' report directories: killed before the end, no verdict.
	for _, r := range []*cliRun{r1, r2} {
		code, out := k.cli("results", r.dir)
		if code != exitFailed || !strings.Contains(out, "killed before the end: run "+r.id) {
			t.Errorf("winconform results %s: exit %d\n%s", r.dir, code, out)
		}
		code, out = k.cli("gate", "--report", r.dir, "--policy", "../../policies/linux-only.yaml")
		if code != exitUnusable || !strings.Contains(out, "killed before the end") || strings.Contains(out, "SHIP") {
			t.Errorf("winconform gate --report %s: exit %d\n%s", r.dir, code, out)
		}
	}
	_, res := k.cli("results", r1.dir)
	t.Logf("winconform results of run 1's report directory:\n%s", res)
}

// state is what runs can leave (suiterun.Footprint) but the heartbeats'
// own namespace, which stays.
func (k *killTest) state(ctx context.Context) []string {
	k.t.Helper()
	all, err := suiterun.Footprint(ctx, k.cs)
	if err != nil {
		k.t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(s string) bool { return s == "namespace "+runmark.LeaseNamespace })
}

func summarize(state []string) string {
	counts := map[string]int{}
	for _, s := range state {
		kind, _, _ := strings.Cut(s, " ")
		counts[kind]++
	}
	var parts []string
	for _, kind := range []string{"namespace", "persistentvolume", "clusterrole", "runtimeclass", "node", "node-label", "node-taint", "node-change", "heartbeat"} {
		parts = append(parts, fmt.Sprintf("%s %d", kind, counts[kind]))
	}
	return strings.Join(parts, ", ")
}

func changes(a, b []string) string {
	var gone, added []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			gone = append(gone, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			added = append(added, x)
		}
	}
	return fmt.Sprintf("gone %q, added %q", gone, added)
}

func (k *killTest) firstNode(ctx context.Context) string {
	nodes, err := k.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		k.t.Fatalf("no node: %v", err)
	}
	return nodes.Items[len(nodes.Items)-1].Name
}

// changeNode adds a taint and a label keyed key to node, recorded as r's.
func (k *killTest) changeNode(ctx context.Context, r runmark.Run, node, key string) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := k.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := r.ChangeNode(n, []corev1.Taint{{Key: key, Value: r.ID, Effect: corev1.TaintEffectNoSchedule}}, map[string]string{key: r.ID}); err != nil {
			return err
		}
		_, err = k.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.t.Fatal(err)
	}
}

func (k *killTest) namespaces(ctx context.Context, run string) []string {
	nss, err := k.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: runmark.RunLabel + "=" + run})
	if err != nil {
		return nil
	}
	var out []string
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp == nil { // not one the run is deleting itself
			out = append(out, ns.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (k *killTest) waitFor(what string, cond func() bool) {
	k.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		k.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// cliRun is a run of winconform e2e.
type cliRun struct {
	t       *testing.T
	id, dir string
	cmd     *exec.Cmd
	out     *bytes.Buffer
	done    chan error
}

func (k *killTest) start(id, claim string) *cliRun {
	k.t.Helper()
	r := &cliRun{t: k.t, id: id, dir: filepath.Join(k.tmp, id), out: &bytes.Buffer{}, done: make(chan error, 1)}
	r.cmd = exec.Command(k.bin, "e2e", "--kubeconfig", k.kubeconfig, "--claim", claim, "--run-id", id, "--dead-after", deadAfter.String(),
		"--report-dir", r.dir, "-q", "--no-color")
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	return r
}

func (r *cliRun) output() string { return r.out.String() }

func (r *cliRun) wait(d time.Duration) error {
	select {
	case err := <-r.done:
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %s", d)
	}
}

// suiteGroup is the process group of the suite the CLI runs (its own group).
func (r *cliRun) suiteGroup() int {
	r.t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", r.cmd.Process.Pid))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			pid, _ := strconv.Atoi(field)
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				return pid
			}
		}
	}
	r.t.Fatalf("run %s: no suite process under the CLI (pid %d)\n%s", r.id, r.cmd.Process.Pid, r.output())
	return 0
}

// freezeSuite stops the suite where it is (SIGSTOP to its group); the CLI
// and its heartbeat go on.
func (r *cliRun) freezeSuite() {
	if err := syscall.Kill(-r.suiteGroup(), syscall.SIGSTOP); err != nil {
		r.t.Fatal(err)
	}
}

// kill is SIGKILL for the CLI and the suite's whole group, with no chance
// of cleanup: the CLI is stopped first so that it does not see its suite
// end (and sweep after it).
func (r *cliRun) kill() {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		r.t.Fatalf("run %s ended before it could be killed: %v\n%s", r.id, err, r.output())
	}
	_ = syscall.Kill(-r.suiteGroup(), syscall.SIGKILL)
	_ = r.cmd.Process.Kill()
	if err := r.wait(time.Minute); err == nil {
		r.t.Errorf("run %s was not killed", r.id)
	}
}

func (k *killTest) cli(args ...string) (int, string) {
	cmd := exec.Command(k.bin, args...)
	out, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return 0, string(out)
}

func (k *killTest) cliOut(args ...string) string {
	code, out := k.cli(args...)
	if code != 0 {
		k.t.Errorf("winconform %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
