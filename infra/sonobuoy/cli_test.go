package sonobuoy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the sonobuoy CLI: with fakeEnv set to a file,
// it appends its arguments there (one line a call) and acts per command.
const (
	fakeEnv        = "SONOBUOY_FAKE_RECORD"
	fakeVersionEnv = "SONOBUOY_FAKE_VERSION"
	fakeFailEnv    = "SONOBUOY_FAKE_FAIL" // a command to fail
	fakeSleepEnv   = "SONOBUOY_FAKE_SLEEP"
	// fakeStatusEnv lists what each `status --json` call answers, in turn
	// (the last one repeats; default complete): a run status, or "pending"
	// (the aggregator not yet tagged) or "error".
	fakeStatusEnv = "SONOBUOY_FAKE_STATUS"
)

func TestMain(m *testing.M) {
	if rec := os.Getenv(fakeEnv); rec != "" {
		os.Exit(fakeSonobuoy(rec, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeSonobuoy(record string, args []string) int {
	f, err := os.OpenFile(record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 99
	}
	fmt.Fprintln(f, strings.Join(args, " "))
	f.Close()
	if os.Getenv(fakeSleepEnv) != "" {
		time.Sleep(time.Minute)
	}
	if len(args) > 0 && args[0] == os.Getenv(fakeFailEnv) {
		fmt.Println("some output")
		fmt.Println("error: it broke")
		return 1
	}
	switch args[0] {
	case "version":
		v := os.Getenv(fakeVersionEnv)
		if v == "" {
			v = "v0.57.3"
		}
		fmt.Println(v)
	case "retrieve":
		name := args[slices.Index(args, "--filename")+1]
		data := tarGz(map[string]string{PluginResults + "summary.md": "# s"})
		if err := os.WriteFile(filepath.Join(args[1], name), data, 0o644); err != nil {
			return 98
		}
		fmt.Println(filepath.Join(args[1], name))
	case "results":
		fmt.Println(`{"name":"a spec","status":"passed"}`)
	case "status":
		return fakeStatus(record)
	}
	return 0
}

// fakeStatus answers `sonobuoy status --json` as Sonobuoy v0.57 does
// (cmd/sonobuoy/app/status.go): the aggregation Status as one line of JSON,
// exit 1 when it is failed; words and exit 0 while the aggregator has no
// status; an error on stderr and exit 1 when the cluster cannot be read.
func fakeStatus(record string) int {
	data, _ := os.ReadFile(record)
	n := 0 // this call's turn: the calls recorded so far, this one too
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "status ") {
			n++
		}
	}
	answers := strings.Split(os.Getenv(fakeStatusEnv), ",")
	if answers[0] == "" {
		answers = []string{"complete"}
	}
	answer := answers[min(n, len(answers))-1]
	switch answer {
	case "pending":
		fmt.Println("The Sonobuoy aggregator is in the 'Pending' state. This is normal as the pod is created and begins to run, but if this state persists, use kubectl to debug further.")
		return 0
	case "error":
		fmt.Fprintln(os.Stderr, `time="2026-11-25T21:00:00Z" level=error msg="error checking sonobuoy status: connection refused"`)
		return 1
	}
	fmt.Printf(`{"plugins":[{"plugin":"winconform","node":"global","status":%q,"result-status":"","result-counts":null}],"status":%q,"tar-info":{"name":"","created":"0001-01-01T00:00:00Z","sha256":"","size":0}}`+"\n", answer, answer)
	if answer == "failed" {
		return 1
	}
	return 0
}

// tarGz makes a gzipped tar of files, by name.
func tarGz(files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[n]))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func fakeCLI(t *testing.T) (CLI, func() []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "calls")
	t.Setenv(fakeEnv, record)
	var log bytes.Buffer
	c := CLI{Binary: exe, Kubeconfig: "/k/config", Namespace: "sono-test", Log: &log}
	return c, func() []string {
		data, _ := os.ReadFile(record)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
}

func TestRunStartsOnlyOurPlugin(t *testing.T) {
	c, calls := fakeCLI(t)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "winconform.yaml")
	err := c.Run(context.Background(), RunOptions{Plugin: plugin, AggregatorImage: "winconform.local/sonobuoy:v0.57.3", Timeout: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "sonobuoy-config.json")
	var cfg struct {
		Server map[string]any
	}
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil || len(cfg.Server) != 1 || cfg.Server["advertiseaddress"] != "sonobuoy-aggregator:8080" {
		t.Errorf("Sonobuoy configuration %s (%v): want only the aggregator's Service as its address", data, err)
	}
	got := calls()
	if len(got) != 2 || got[1] != "status --json --kubeconfig /k/config --namespace sono-test" {
		t.Fatalf("calls %q, want run, then status --json", got)
	}
	args := strings.Fields(got[0])
	want := []string{"run", "--config", config, "--plugin", plugin, "--sonobuoy-image", "winconform.local/sonobuoy:v0.57.3",
		"--image-pull-policy", "IfNotPresent", "--timeout", "90",
		"--kubeconfig", "/k/config", "--namespace", "sono-test"}
	if !slices.Equal(args, want) {
		t.Errorf("sonobuoy %q\nwant     %q", args, want)
	}
	if n := strings.Count(got[0], "--plugin"); n != 1 {
		t.Errorf("%d plugins given; only ours must run", n)
	}

	if err := c.Run(context.Background(), RunOptions{Plugin: "p"}); err == nil {
		t.Error("a run without a timeout")
	}
}

// TestRunWaitsForTheRunsEnd: Run reads the status until the run is
// complete, through the aggregator's start (no status yet) and a read that
// failed; a failed run (status printed, exit 1) is an error that says so.
func TestRunWaitsForTheRunsEnd(t *testing.T) {
	old := StatusPoll
	StatusPoll = 10 * time.Millisecond
	t.Cleanup(func() { StatusPoll = old })
	plugin := filepath.Join(t.TempDir(), "winconform.yaml")
	for _, tc := range []struct {
		statuses string
		want     string // in the error; "" for none
		reads    int
	}{
		{"pending,error,running,post-processing,complete", "", 5},
		{"running,failed", "sonobuoy's run failed: failed; winconform on global: failed", 2},
	} {
		t.Run(tc.statuses, func(t *testing.T) {
			c, calls := fakeCLI(t)
			t.Setenv(fakeStatusEnv, tc.statuses)
			err := c.Run(context.Background(), RunOptions{Plugin: plugin, Timeout: time.Minute})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Run: %v, want an error with %q", err, tc.want)
			}
			if n := len(calls()) - 1; n != tc.reads {
				t.Errorf("%d status reads, want %d: %q", n, tc.reads, calls())
			}
		})
	}
}

// TestWaitEnds: a run that never ends, or whose status is never read,
// ends the wait at its timeout with what was last seen; the caller's
// context ending ends it too, as that.
func TestWaitEnds(t *testing.T) {
	old := StatusPoll
	StatusPoll = 10 * time.Millisecond
	t.Cleanup(func() { StatusPoll = old })
	for statuses, want := range map[string]string{
		"running": "sonobuoy's run did not end within 2s (last status: running; winconform on global: running)",
		"error":   "sonobuoy's run did not end within 2s, its status never read (last: sonobuoy status: exit status 1:",
		"pending": "sonobuoy's run did not end within 2s, its status never read (last: The Sonobuoy aggregator is in the 'Pending' state",
	} {
		c, _ := fakeCLI(t)
		t.Setenv(fakeStatusEnv, statuses)
		if err := c.wait(context.Background(), 2*time.Second); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", statuses, err, want)
		}
	}
	c, _ := fakeCLI(t)
	t.Setenv(fakeStatusEnv, "running")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.wait(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait whose context ended: %v, want the context's error", err)
	}
}

func TestCheckVersion(t *testing.T) {
	c, _ := fakeCLI(t)
	if err := c.Check(context.Background(), "v0.57.3"); err != nil {
		t.Errorf("the right version: %v", err)
	}
	t.Setenv(fakeVersionEnv, "v0.56.0")
	if err := c.Check(context.Background(), "v0.57.3"); err == nil || !strings.Contains(err.Error(), "is Sonobuoy v0.56.0; want v0.57.3") {
		t.Errorf("another version: %v", err)
	}
	c.Binary = filepath.Join(t.TempDir(), "sonobuoy")
	if err := c.Check(context.Background(), "v0.57.3"); err == nil || !strings.Contains(err.Error(), "make sonobuoy") {
		t.Errorf("no binary: %v", err)
	}
}

func TestRetrieveAndExtract(t *testing.T) {
	c, calls := fakeCLI(t)
	dir := t.TempDir()
	tarball, err := c.Retrieve(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if tarball != filepath.Join(dir, "sonobuoy-results.tar.gz") {
		t.Errorf("tarball %s", tarball)
	}
	if got := calls()[0]; got != "retrieve "+dir+" --filename sonobuoy-results.tar.gz --kubeconfig /k/config --namespace sono-test" {
		t.Errorf("sonobuoy %s", got)
	}
	files, err := Extract(tarball, filepath.Join(dir, "report"))
	if err != nil || !slices.Equal(files, []string{"summary.md"}) {
		t.Errorf("extracted %q, %v", files, err)
	}
}

func TestFailuresCarryTheOutput(t *testing.T) {
	c, _ := fakeCLI(t)
	t.Setenv(fakeFailEnv, "delete")
	err := c.Delete(context.Background(), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "sonobuoy delete") || !strings.Contains(err.Error(), "error: it broke") {
		t.Errorf("a failed delete: %v, want the command and its last output", err)
	}
}

func TestCommandsHaveATimeLimit(t *testing.T) {
	c, _ := fakeCLI(t)
	t.Setenv(fakeSleepEnv, "1")
	start := time.Now()
	err := c.run(context.Background(), 300*time.Millisecond, &bytes.Buffer{}, "status")
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Errorf("a hung command: %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the hung command was given up on after %s", took)
	}
}
