package windows_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
	"github.com/winconform/winconform/testing/wsmantest"
)

// addMachine puts a second simulated machine, called name, beside the
// rig's, in the same cluster.
func (r *rig) addMachine(name string, cfg simmachine.Config) (config.Machine, *simmachine.Machine) {
	r.t.Helper()
	cfg.Password = testPassword
	sim := simmachine.New(cfg)
	sim.OnJoin = r.cluster.joinFor(sim)
	srv := wsmantest.New(r.t, wsmantest.WithCredentials("Administrator", testPassword),
		wsmantest.WithHandler(sim.Handler()), wsmantest.WithIntercept(sim.Intercept()))
	m := r.machine
	m.Name, m.Address, m.WinRM.Port = name, srv.Host(), config.Port(srv.Port())
	return m, sim
}

// unreachable is the machine at an address where nothing listens.
func (r *rig) unreachable(name string) config.Machine {
	r.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	m := r.machine
	m.Name, m.Address, m.WinRM.Port = name, "127.0.0.1", config.Port(port)
	return m
}

func fleetContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func readReport(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func assertTranscript(t *testing.T, dir, machine string) {
	t.Helper()
	for _, ext := range []string{".transcript.log", ".transcript.json"} {
		if fi, err := os.Stat(filepath.Join(dir, machine+ext)); err != nil || fi.Size() == 0 {
			t.Errorf("transcript %s%s in %s: %v", machine, ext, dir, err)
		}
	}
}

// JoinAll joins each machine in turn; one that fails does not stop the
// next. Each has its report and transcript under the artifacts; the one
// that failed has its logs too; nothing holds a password or a token.
func TestJoinAllSavesEachMachine(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	old, oldSim := r.addMachine("win-2016-b", simmachine.Config{Build: "10.0.14393.7259"})
	third, _ := r.addMachine("win-2022-c", simmachine.Config{ContainersInstalled: true})
	artifacts := t.TempDir()
	var log strings.Builder
	results, err := windows.JoinAll(fleetContext(t), []config.Machine{r.machine, old, third}, r.cluster,
		windows.FleetOptions{Artifacts: artifacts, Log: &syncWriter{w: &log}, Timeouts: testTimeouts()})

	var fe *windows.FleetError
	if !errors.As(err, &fe) || err.Error() != "1 of 3 machines did not join: win-2016-b" || !errors.Is(err, windows.ErrBuildTooOld) {
		t.Fatalf("err = %v, want a *FleetError naming win-2016-b, errors.Is ErrBuildTooOld", err)
	}
	var got []string
	for _, res := range results {
		got = append(got, res.Machine)
	}
	if !slices.Equal(got, []string{r.machine.Name, old.Name, third.Name}) {
		t.Fatalf("results for %v, want every machine in turn", got)
	}
	if results[0].Err != nil || results[2].Err != nil || !errors.Is(results[1].Err, windows.ErrBuildTooOld) {
		t.Errorf("errors %v, %v, %v; want only the second machine's", results[0].Err, results[1].Err, results[2].Err)
	}
	if !slices.Equal(results[2].Report.Order, windows.JoinSteps()) {
		t.Errorf("the machine after the failed one ran %v", results[2].Report.Order)
	}
	// Its join stopped at preflight; then its logs were collected.
	if got := slices.DeleteFunc(oldSim.Steps(), func(s string) bool { return s == windows.StepCollectLogs }); !slices.Equal(got, []string{windows.StepPreflight}) {
		t.Errorf("the machine of a build too old ran %v", oldSim.Steps())
	}

	for i, m := range []config.Machine{r.machine, old, third} {
		dir := filepath.Join(artifacts, m.Name)
		var rep windows.JoinReport
		readReport(t, filepath.Join(dir, "join-report.json"), &rep)
		if rep.Machine != m.Name || (rep.Error != "") != (i == 1) {
			t.Errorf("%s/join-report.json: machine %q, error %q", m.Name, rep.Machine, rep.Error)
		}
		assertTranscript(t, dir, m.Name)
	}
	logs := filepath.Join(artifacts, "logs")
	if _, err := os.Stat(filepath.Join(logs, old.Name, "kubelet.log")); err != nil {
		t.Errorf("the failed machine's logs: %v", err)
	}
	for _, m := range []config.Machine{r.machine, third} {
		if _, err := os.Stat(filepath.Join(logs, m.Name)); !os.IsNotExist(err) {
			t.Errorf("logs of %s, which joined, were collected without CollectLogs: %v", m.Name, err)
		}
	}
	for _, want := range []string{
		"win-2016-b: join failed: machine win-2016-b: step \"preflight\": Windows build 10.0.14393.7259 is too old",
		"win-2016-b: its logs are in " + filepath.Join(logs, old.Name) + "\n",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
	assertNoSecrets(t, append(r.cluster.issuedTokens(), testPassword), artifacts, log.String())
}

// With CollectLogs, the logs of a machine that joined are collected too.
func TestJoinAllCollectsLogs(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	artifacts := t.TempDir()
	_, err := windows.JoinAll(fleetContext(t), []config.Machine{r.machine}, r.cluster,
		windows.FleetOptions{Artifacts: artifacts, CollectLogs: true, Timeouts: testTimeouts()})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range windows.LogItems {
		if _, err := os.Stat(filepath.Join(artifacts, "logs", r.machine.Name, it.File)); err != nil {
			t.Errorf("%s: %v", it.Item, err)
		}
	}
	assertNoPassword(t, artifacts)
}

// ResetAll resets each machine in turn and saves its report and
// transcript; one it cannot reach is named in the error.
func TestResetAllSavesEachMachine(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := r.unreachable("win-gone")
	artifacts := t.TempDir()
	var log strings.Builder
	results, err := windows.ResetAll(fleetContext(t), []config.Machine{gone, r.machine}, r.cluster,
		windows.FleetOptions{Artifacts: artifacts, Log: &syncWriter{w: &log}, Timeouts: testTimeouts()})
	if err == nil || err.Error() != "1 of 2 machines were not reset: win-gone" {
		t.Fatalf("err = %v, want the unreachable machine named", err)
	}
	if len(results) != 2 || results[1].Err != nil || !slices.Equal(results[1].Report.Order, windows.ResetSteps()) {
		t.Fatalf("results %+v: want the reachable machine reset after the other failed", results)
	}
	if r.sim.Joined() {
		t.Error("the machine is still joined")
	}
	for _, m := range []config.Machine{gone, r.machine} {
		var rep windows.ResetReport
		readReport(t, filepath.Join(artifacts, m.Name, "reset-report.json"), &rep)
		if rep.Machine != m.Name || (rep.Error != "") != (m.Name == gone.Name) {
			t.Errorf("%s/reset-report.json: machine %q, error %q", m.Name, rep.Machine, rep.Error)
		}
		assertTranscript(t, filepath.Join(artifacts, m.Name), m.Name)
	}
	if !strings.Contains(log.String(), "win-gone: reset failed: machine win-gone: step \"kubeadm-reset\"") {
		t.Errorf("the log does not name the failed reset:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(artifacts, "logs")); !os.IsNotExist(err) {
		t.Errorf("ResetAll collected logs: %v", err)
	}
	assertNoPassword(t, artifacts, log.String())
}

// JoinAll tries no machine once its context has ended; ResetAll tries
// each.
func TestFleetWhenCancelled(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	b, bSim := r.addMachine("win-2022-b", simmachine.Config{ContainersInstalled: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	machines := []config.Machine{r.machine, b}
	joined, err := windows.JoinAll(ctx, machines, r.cluster, windows.FleetOptions{Timeouts: testTimeouts()})
	if len(joined) != 1 || !errors.Is(err, context.Canceled) || len(bSim.Steps()) != 0 {
		t.Errorf("JoinAll: %d results, err %v, the second machine ran %v; want it stopped after the first", len(joined), err, bSim.Steps())
	}
	reset, err := windows.ResetAll(ctx, machines, r.cluster, windows.FleetOptions{Timeouts: testTimeouts()})
	if len(reset) != 2 || err == nil || !strings.HasPrefix(err.Error(), "2 of 2 machines were not reset") {
		t.Errorf("ResetAll: %d results, err %v; want both tried", len(reset), err)
	}
}

// A caller's Connect is used and its connections are the caller's; a
// failure to connect stops the fleet with that error.
func TestFleetConnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	b, _ := r.addMachine("win-2022-b", simmachine.Config{ContainersInstalled: true})
	refused := errors.New("no connection to win-2022-b")
	connect := func(m config.Machine) (windows.Conn, error) {
		if m.Name == r.machine.Name {
			return r.exec, nil
		}
		return nil, refused
	}
	results, err := windows.JoinAll(fleetContext(t), []config.Machine{r.machine, b}, r.cluster,
		windows.FleetOptions{Connect: connect, Timeouts: testTimeouts()})
	var fe *windows.FleetError
	if !errors.Is(err, refused) || errors.As(err, &fe) || len(results) != 1 || results[0].Err != nil {
		t.Fatalf("err = %v, results %+v: want the first joined and the connection error", err, results)
	}
	if len(r.exec.Transcript().Entries()) == 0 {
		t.Error("the caller's connection was not used")
	}
}
