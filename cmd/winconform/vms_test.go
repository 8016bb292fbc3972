package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/testing/standin"
	"github.com/winconform/winconform/testing/vmstest"
)

// runVMs runs `winconform vms args...` and returns its stdout, stderr and
// error.
func runVMs(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := vmsCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// Bad input is refused before any machine work, naming the field (or the
// flag) and the fix: no state file is written, no Create is called.
func TestVMsRefusesBadInputBeforeMachineWork(t *testing.T) {
	dir := t.TempDir()
	vmsDir = filepath.Join(dir, "runs")
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	fake := vmstest.New()
	defer vmstest.Serve("cli", fake)()
	good := "provider: fake\nconnection: {endpoint: fake://cli}\nimage: golden\ncount: 1\nmachine: {user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}}\n"
	for _, tc := range []struct {
		name, file string
		args       []string
		want       []string
	}{
		{"unknown provider", strings.Replace(good, "provider: fake", "provider: vsphre", 1), nil, []string{"provider:", "is not a provider this harness has", "static"}},
		{"missing image", strings.Replace(good, "image: golden\n", "", 1), nil, []string{"image: is missing", "golden image"}},
		{"zero count", strings.Replace(good, "count: 1", "count: 0", 1), nil, []string{"count: 0 is not a number of machines", "from 1 to"}},
		{"negative count", strings.Replace(good, "count: 1", "count: -2", 1), nil, []string{"count: -2"}},
		{"credentials inline", strings.Replace(good, "endpoint: fake://cli}", "endpoint: fake://cli, credentials: {token: s3cr3t}}", 1), nil, []string{"connection.credentials[token]", "inline secret is refused", "{env: VARIABLE}"}},
		{"password unset", strings.Replace(good, "WINCONFORM_TEST_PASSWORD", "WINCONFORM_UNSET", 1), nil, []string{"machine.passwordFrom.env", "WINCONFORM_UNSET is not set"}},
		{"unreachable provider endpoint", strings.Replace(good, "fake://cli", "fake://nowhere", 1), nil, []string{"connection.endpoint", "cannot reach", "connection refused"}},
		{"no VM file", "", []string{"--vms", filepath.Join(dir, "missing.yaml")}, []string{"missing.yaml: the file does not exist"}},
		{"bad run ID", good, []string{"--run-id", "Nightly_1"}, []string{"--run-id", "lower-case"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "vms.yaml")
			write(t, path, tc.file)
			args := append([]string{"up", "--vms", path}, tc.args...)
			_, _, err := runVMs(t, args...)
			if err == nil {
				t.Fatal("refused nothing")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error shows the secret: %v", err)
			}
			if fake.Creates() != 0 {
				t.Errorf("%d machines created", fake.Creates())
			}
			if _, err := os.Stat(vmsDir); err == nil {
				t.Errorf("a run directory was made: %s", vmsDir)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"down"}, "--state FILE"},
		{[]string{"down", "--run-id", "a", "--state", "x"}, "not both"},
		{[]string{"down", "--state", filepath.Join(dir, "nothing")}, "does not exist"},
		{[]string{"sweep", "--vms", filepath.Join(dir, "vms.yaml")}, "--older-than"},
	} {
		if _, _, err := runVMs(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("vms %s: %v, want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// The commands end to end with the fake provider and a stand-in machine:
// up prints the inventory, list shows the run, down --state deletes it and
// a second down finds nothing.
func TestVMsUpListDown(t *testing.T) {
	srv := standin.New(t, standin.WithAddr("127.0.0.2:0"))
	dir := t.TempDir()
	vmsDir = filepath.Join(dir, "runs")
	t.Setenv("WINCONFORM_TEST_PASSWORD", standin.DefaultPassword)
	fake := vmstest.New()
	fake.Plan = func(string, time.Duration) []string { return []string{"169.254.1.1", "127.0.0.2"} }
	defer vmstest.Serve("e2e", fake)()
	path := filepath.Join(dir, "vms.yaml")
	write(t, path, fmt.Sprintf("provider: fake\nconnection: {endpoint: fake://e2e}\nimage: golden\ncount: 1\nmachine: {user: %s, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}, winrm: {port: %d}}\n",
		standin.DefaultUser, srv.Port()))

	out, log, err := runVMs(t, "up", "--vms", path, "--run-id", "cli1", "--settle", "50ms")
	if err != nil {
		t.Fatalf("up: %v\n%s", err, log)
	}
	inv := strings.TrimSpace(out)
	if inv != filepath.Join(vmsDir, "cli1", lifecycle.InventoryFile) {
		t.Errorf("up printed %q", out)
	}
	out, _, err = runVMs(t, "list", "--vms", path)
	if err != nil || !strings.Contains(out, "cli1") || !strings.Contains(out, "win-cli1-1") {
		t.Errorf("list: %v\n%s", err, out)
	}
	// The run ID is the live run's: a second up is refused (exit 2),
	// nothing made.
	if _, _, err := runVMs(t, "up", "--vms", path, "--run-id", "cli1", "--settle", "50ms"); err == nil || !strings.Contains(err.Error(), "run cli1 is ready") {
		t.Errorf("a second up of the live run cli1: %v, want it refused", err)
	} else if code := exitStatus(context.Background(), "winconform vms up", err, io.Discard); code != exitUsage {
		t.Errorf("a second up of the live run: exit %d, want %d", code, exitUsage)
	}
	if _, log, err := runVMs(t, "down", "--state", filepath.Join(vmsDir, "cli1")); err != nil {
		t.Fatalf("down: %v\n%s", err, log)
	}
	if _, log, err := runVMs(t, "down", "--run-id", "cli1", "--vms", path); err != nil {
		t.Fatalf("a second down: %v\n%s", err, log)
	}
	if ms, _ := fake.List(t.Context()); len(ms) != 0 {
		t.Errorf("left %v", ms)
	}
	// down retired the state file: the run ID is free again.
	st, _, err := lifecycle.LoadState(filepath.Join(vmsDir, "cli1", lifecycle.EndedStateFile))
	if err != nil || st.Phase != lifecycle.PhaseDeleted || !st.Machines[0].Deleted {
		t.Errorf("the retired state %+v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(vmsDir, "cli1", lifecycle.StateFile)); err == nil {
		t.Error("the run's state file is still in place after down")
	}
}

// vms up --check checks the VM file alone: a provider that cannot be
// reached is not contacted, a file of bad values is refused (issue 31
// item 3).
func TestVMsUpCheckContactsNoProvider(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	path := filepath.Join(dir, "vms.yaml")
	write(t, path, "provider: fake\nconnection: {endpoint: fake://nowhere}\nimage: golden\ncount: 1\nmachine: {user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}}\n")
	if _, errOut, err := runVMs(t, "up", "--check", "--vms", path); err != nil || !strings.Contains(errOut, "can be used") {
		t.Errorf("--check of a good file whose provider is unreachable: %v %s", err, errOut)
	}
	write(t, path, "provider: fake\nconnection: {endpoint: fake://nowhere}\nimage: golden\ncount: 0\n")
	if _, _, err := runVMs(t, "up", "--check", "--vms", path); err == nil || !strings.Contains(err.Error(), "count: 0") {
		t.Errorf("--check of a bad file: %v", err)
	}
}
