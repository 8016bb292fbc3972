package sonobuoy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
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
	if len(got) != 1 {
		t.Fatalf("calls %q", got)
	}
	args := strings.Fields(got[0])
	want := []string{"run", "--config", config, "--plugin", plugin, "--sonobuoy-image", "winconform.local/sonobuoy:v0.57.3",
		"--image-pull-policy", "IfNotPresent", "--timeout", "90", "--wait=2", "--wait-output", "progress",
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
