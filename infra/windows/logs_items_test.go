package windows_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestCollectLogsGathersWhatFailuresLeave: besides the log files, the logs
// of a machine hold what the likeliest failures of a join leave on Windows:
// the service manager's errors (a service that did not start, did not answer
// or ended: events 7000, 7009, 7034 of the System log), the kubelet's command
// line as the service manager holds it, containerd's configuration, the
// routes and ipconfig /all.
func TestCollectLogsGathersWhatFailuresLeave(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := windows.CollectLogs(ctx, r.exec, dir); err != nil {
		t.Fatalf("CollectLogs: %v", err)
	}
	r.checkNoProblems()
	for file, want := range map[string]string{
		"service-events.log":     "service-events started on WIN-SIM",
		"kubelet-service.txt":    `C:\k\kubelet.exe --windows-service`,
		"containerd-config.toml": "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
		"routes.txt":             "routes started on WIN-SIM",
		"ipconfig.txt":           "ipconfig started on WIN-SIM",
	} {
		data, err := os.ReadFile(filepath.Join(dir, r.machine.Name, file))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %v\n%s", file, err, data)
		}
	}
}
