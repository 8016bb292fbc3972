package windows_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

func TestCollectLogs(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	r.sim.AddHNSNetwork("flannel.4096")
	// A log that holds the password (a careless script on the machine):
	// the remote exec redacts it.
	r.sim.AddLogLine("E0101 bad credentials: " + testPassword)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := windows.CollectLogs(ctx, r.exec, dir); err != nil {
		t.Fatalf("CollectLogs: %v", err)
	}
	for _, it := range windows.LogItems {
		data, err := os.ReadFile(filepath.Join(dir, r.machine.Name, it.File))
		if err != nil {
			t.Errorf("%s: %v", it.Item, err)
			continue
		}
		text := string(data)
		if strings.Contains(text, `"step":"collect-logs"`) {
			t.Errorf("%s holds the status line", it.File)
		}
		if strings.HasSuffix(it.File, ".json") {
			var v any
			if err := json.Unmarshal(data, &v); err != nil || it.Item == "hns-networks" && !strings.Contains(text, "flannel.4096") {
				t.Errorf("%s is not the HNS JSON: %v\n%s", it.File, err, text)
			}
		} else if it.Item == "kubelet-service" {
			// The service manager's copy of the kubelet's command line.
			if !strings.Contains(text, `C:\k\kubelet.exe --windows-service`) {
				t.Errorf("%s:\n%s", it.File, text)
			}
		} else if it.Item == "containerd-config" {
			// The configuration the join wrote.
			if !strings.Contains(text, "version = 4") {
				t.Errorf("%s:\n%s", it.File, text)
			}
		} else if !strings.Contains(text, it.Item+" started on WIN-SIM") || !strings.Contains(text, "bad credentials: ********") {
			t.Errorf("%s:\n%s", it.File, text)
		}
	}
	assertNoPassword(t, dir)
}

func TestCollectLogsOfASimulatedMachineThatWentAway(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{RebootTime: time.Hour})
	r.sim.RebootDuring = map[string][]int{"preflight": {1}}
	opts := windows.JoinOptions{Timeouts: testTimeouts(), LogsDir: t.TempDir(), ConnRetries: -1}
	_, err := r.join(opts)
	if err == nil {
		t.Fatal("Join of a machine that went away succeeded")
	}
	// Every item says why it is missing; nothing hangs.
	data, rerr := os.ReadFile(filepath.Join(opts.LogsDir, r.machine.Name, "kubelet.log"))
	if rerr != nil || !strings.Contains(string(data), "could not collect kubelet") {
		t.Errorf("kubelet.log: %v\n%s", rerr, data)
	}
	assertNoPassword(t, opts.LogsDir)
}
