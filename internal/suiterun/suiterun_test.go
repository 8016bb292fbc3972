package suiterun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/winconform/winconform/internal/runmark"
)

// The options reach the suite as Ginkgo reads them: its own flag sets
// parse what Command gives, the suite binary's (--ginkgo.*) alone, the
// CLI's (ginkgo run) in parallel, where the CLI reports for every process
// and a --ginkgo.v after -- would not reach its reporter.
func TestCommand(t *testing.T) {
	type read struct {
		procs, flakes  int
		timeout        time.Duration
		verbose, color bool
		rest           string
	}
	// parse reads args as Ginkgo does: the binary's flag set, or the CLI's
	// run command (after "run"; what follows the binary goes to the binary).
	parse := func(t *testing.T, name string, args []string) read {
		t.Helper()
		suite, reporter, cli, goFlags := types.NewDefaultSuiteConfig(), types.NewDefaultReporterConfig(), types.NewDefaultCLIConfig(), types.NewDefaultGoFlagsConfig()
		var fs types.GinkgoFlagSet
		var err error
		if name == "/b/ginkgo" {
			if len(args) == 0 || args[0] != "run" {
				t.Fatalf("the CLI's args %q do not start with run", args)
			}
			args = args[1:]
			fs, err = types.BuildRunCommandFlagSet(&suite, &reporter, &cli, &goFlags)
		} else {
			cli.Procs = 1
			// The suite binary's set (types.BuildTestSuiteFlagSet) on a
			// flag set of its own: the test binary has Ginkgo's already.
			var flags types.GinkgoFlags
			for _, f := range types.SuiteConfigFlags.CopyAppend(types.ParallelConfigFlags...).CopyAppend(types.ReporterConfigFlags...) {
				if !strings.HasPrefix(f.KeyPath, "D.") { // deprecated, bound to Ginkgo's own
					flags = append(flags, f)
				}
			}
			flags = flags.WithPrefix("ginkgo")
			fs, err = types.NewGinkgoFlagSet(flags, map[string]any{"S": &suite, "R": &reporter}, types.FlagSections)
		}
		if err != nil {
			t.Fatal(err)
		}
		// The suite's own flags are not Ginkgo's: they follow them, as
		// flag parsing stops at the first it does not know only if told;
		// read Ginkgo's up to the first of them.
		var own []string
		for k, a := range args {
			if a == "--" || !strings.HasPrefix(a, "--ginkgo.") && name != "/b/ginkgo" {
				own, args = args[k:], args[:k]
				break
			}
		}
		rest, err := fs.Parse(args)
		if err != nil {
			t.Fatalf("Ginkgo refuses %q: %v", args, err)
		}
		return read{cli.Procs, suite.FlakeAttempts, suite.Timeout, reporter.Verbose, !reporter.NoColor, strings.Join(append(rest, own...), " ")}
	}
	for _, tc := range []struct {
		o        Options
		wantName string
		want     read
	}{
		{Options{Procs: 1, Args: []string{"--kubeconfig=k", "--suite=networking"}}, "/b/e2e.test",
			read{1, 0, time.Hour, false, false, "--kubeconfig=k --suite=networking"}},
		{Options{Procs: 4, Args: []string{"--kubeconfig=k", "--suite=networking"}}, "/b/ginkgo",
			read{4, 0, time.Hour, false, false, "/b/e2e.test -- --kubeconfig=k --suite=networking"}},
		{Options{Procs: 1, Args: []string{"--suite=node"}, Timeout: 24 * time.Hour, Verbose: true, Color: true}, "/b/e2e.test",
			read{1, 0, 24 * time.Hour, true, true, "--suite=node"}},
		{Options{Procs: 2, Args: []string{"--suite=node"}, Timeout: 24 * time.Hour, Verbose: true}, "/b/ginkgo",
			read{2, 0, 24 * time.Hour, true, false, "/b/e2e.test -- --suite=node"}},
		// --flake-attempts: Ginkgo's own setting, alone and under its CLI.
		{Options{Procs: 1, Args: []string{"--suite=node"}, FlakeAttempts: 2}, "/b/e2e.test",
			read{1, 2, time.Hour, false, false, "--suite=node"}},
		{Options{Procs: 3, Args: []string{"--suite=node"}, FlakeAttempts: 2}, "/b/ginkgo",
			read{3, 2, time.Hour, false, false, "/b/e2e.test -- --suite=node"}},
	} {
		tc.o.Binary, tc.o.Ginkgo = "/b/e2e.test", "/b/ginkgo"
		name, args, err := tc.o.Command()
		if err != nil || name != tc.wantName {
			t.Fatalf("%+v: %s %q %v", tc.o, name, args, err)
		}
		if got := parse(t, name, args); got != tc.want {
			t.Errorf("%+v: %q reads as %+v, want %+v", tc.o, args, got, tc.want)
		}
	}
	o := Options{Binary: "/b/e2e.test", Procs: 2}
	if _, _, err := o.Command(); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("parallel without Ginkgo's CLI: %v", err)
	}
}

func TestProcs(t *testing.T) {
	for _, c := range []struct {
		value string
		want  int
		err   string
	}{
		{"1", 1, ""}, {"4", 4, ""},
		{"0", 0, "--procs (PROCS) 0: at least one process"},
		{"-2", 0, "--procs (PROCS) -2: at least one process"},
		{"four", 0, `--procs (PROCS) "four" is not a number`},
		{"", 0, `--procs (PROCS) "" is not a number`},
		{"9", 0, "--procs (PROCS) 9 is more than the cluster can hold (2 Ready nodes, 4 CPUs): use at most 4"},
	} {
		got, err := Procs(c.value, 4, "2 Ready nodes, 4 CPUs")
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("Procs(%q) = %d, %v; want %d", c.value, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Procs(%q) error %v, want %q", c.value, err, c.err)
		}
	}
}

func TestFocusSelectsExactlyOneSpec(t *testing.T) {
	names := []string{
		"network matrix NET-07: A Linux pod reaches another Linux pod by its IP, on the same node and on another node.",
		"network matrix NET-07: A Linux pod reaches another Linux pod by its IP, on the same node and on another node. too",
		"volumes a hostPath written with escaped backslashes (C:\\\\etc\\\\foo) mounts [read-only] windows",
	}
	for i, n := range names {
		re := regexp.MustCompile(Focus("winconform", n))
		for j, m := range names {
			// What Ginkgo matches a focus against.
			if got := re.MatchString("winconform " + m); got != (i == j) {
				t.Errorf("Focus(%q) matches %q: %v", n, m, got)
			}
		}
	}
}

// script writes an executable shell script standing in for the suite.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunPassesTheExitStatus(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), Options{Binary: script(t, `echo "args: $*"; exit 3`), Procs: 1, Args: []string{"--a", "b"}, Stdout: &out, Color: true})
	var exit ExitError
	if !errors.As(err, &exit) || exit.Code != 3 || out.String() != "args: --a b\n" {
		t.Errorf("Run = %v, output %q", err, out.String())
	}
	if err := Run(context.Background(), Options{Binary: script(t, "exit 0"), Procs: 1}); err != nil {
		t.Errorf("a passing suite: %v", err)
	}
	if err := Run(context.Background(), Options{Binary: filepath.Join(t.TempDir(), "missing"), Procs: 1}); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("a missing binary: %v", err)
	}
}

// An interrupt reaches the suite once, and the suite gets its grace to
// clean up and report.
func TestRunInterruptsOnceAndWaitsForCleanup(t *testing.T) {
	dir := t.TempDir()
	body := `n=0
trap 'n=$((n+1)); echo $n > ` + dir + `/ints; sleep 1; echo cleaned > ` + dir + `/cleanup; exit 130' INT
i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
exit 0
`
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(500 * time.Millisecond); cancel() }()
	start := time.Now()
	err := Run(ctx, Options{Binary: script(t, body), Procs: 1, Grace: 30 * time.Second})
	var exit ExitError
	if !errors.As(err, &exit) || exit.Code != 130 {
		t.Errorf("Run = %v, want the suite's own exit status 130", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %s", d)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "ints")); strings.TrimSpace(string(data)) != "1" {
		t.Errorf("the suite saw %q interrupts, want 1", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "cleanup")); strings.TrimSpace(string(data)) != "cleaned" {
		t.Errorf("the suite did not get to clean up: %q", data)
	}
}

func TestRunKillsASuiteThatIgnoresTheInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	start := time.Now()
	err := Run(ctx, Options{Binary: script(t, "trap '' INT\nsleep 30\n"), Procs: 1, Grace: time.Second})
	if err == nil {
		t.Error("a killed suite reported success")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the suite was not killed after its grace: %s", d)
	}
}

func TestOwnGroup(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer kill(cmd)
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	if err != nil || pgid != cmd.Process.Pid || pgid == syscall.Getpgrp() {
		t.Errorf("the suite's process group is %d (%v), want its own (%d), not ours (%d)", pgid, err, cmd.Process.Pid, syscall.Getpgrp())
	}
}

func TestSweepDeletesOnlyTheRunsObjects(t *testing.T) {
	const run = "run-1"
	mine := map[string]string{runmark.RunLabel: run}
	cs := fake.NewSimpleClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-storage-abc", Labels: map[string]string{runmark.E2ERunLabel: run}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "netmatrix-xyz", Labels: mine}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-other-run", Labels: map[string]string{runmark.E2ERunLabel: "run-2"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "wc-sched-abc-17763", Labels: mine}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "winconform-worker"}},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "winconform-hyperv", Labels: mine}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Labels: mine}},
	)
	left, err := Sweep(context.Background(), cs, run, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range left {
		if !l.Deleted {
			t.Errorf("%s not deleted", l)
		}
		got = append(got, l.String())
	}
	want := "namespace e2e-storage-abc, namespace netmatrix-xyz, node wc-sched-abc-17763, persistentvolume pv-1, runtimeclass winconform-hyperv"
	if strings.Join(got, ", ") != want {
		t.Errorf("swept %q, want %q", strings.Join(got, ", "), want)
	}
	for _, ns := range []string{"e2e-other-run", "kube-system"} {
		if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s of no run of ours was touched: %v", ns, err)
		}
	}
	if _, err := cs.CoreV1().Nodes().Get(context.Background(), "winconform-worker", metav1.GetOptions{}); err != nil {
		t.Errorf("a node of the cluster was touched: %v", err)
	}
	if left, err := Sweep(context.Background(), cs, run, time.Second); err != nil || len(left) != 0 {
		t.Errorf("a second sweep found %v, %v", left, err)
	}
	if _, err := Sweep(context.Background(), cs, "", time.Second); err == nil {
		t.Error("a sweep without a run ID would take everything")
	}
}
