package windows

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows/remote"
)

// These tests run on Windows only (the Windows runners of
// .github/workflows/windows.yml): the steps that only read the machine run
// for real on the runner, rendered as the harness renders them, sent as it
// sends them (remote.Local: the WinRM command line and the stdin bootstrap
// through the real powershell.exe), their status parsed and their failures
// classified by the harness's own code.

func realRunner() *runner {
	return &runner{machine: "runner", exec: remote.Local{MachineName: "runner"}, t: Timeouts{}.withDefaults()}
}

func realContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRealPowerShellRunsPingAndPreflight(t *testing.T) {
	r, ctx := realRunner(), realContext(t)
	var sr StepReport
	st, err := r.runStep(ctx, &sr, StepPing, nil)
	if err != nil {
		t.Fatalf("ping: %v", err)
	}
	// [Environment]::MachineName is the NetBIOS name, as COMPUTERNAME.
	if host := os.Getenv("COMPUTERNAME"); !strings.EqualFold(st.str("hostname"), host) {
		t.Errorf("ping: hostname %q, want %q", st.str("hostname"), host)
	}
	if _, err := time.Parse(time.RFC3339Nano, st.str("bootTime")); err != nil {
		t.Errorf("ping: bootTime %q: %v", st.str("bootTime"), err)
	}

	st, err = r.runStep(ctx, &sr, StepPreflight, nil)
	if err != nil {
		t.Fatalf("preflight: %v", err)
	}
	t.Logf("preflight: %v", sr.Status)
	j := &joinRun{runner: r, m: config.Machine{Name: "runner"}, report: &JoinReport{}}
	if err := j.checkPreflight(st); err != nil {
		t.Errorf("the runner (an administrator's account on Windows Server) does not pass preflight: %v", err)
	}
	if !j.build.Build.Supported() || j.build.UBR == 0 || st.str("productName") == "" || st.str("user") == "" {
		t.Errorf("preflight reported build %s, product %q, user %q", j.build, st.str("productName"), st.str("user"))
	}
	if st.Changed {
		t.Error("preflight reported a change")
	}
	// The machine's clock, read through CIM (Win32_OperatingSystem's
	// LocalDateTime, in local time) and written in UTC: the runner's own.
	if at, err := time.Parse(time.RFC3339Nano, st.str("utcNow")); err != nil || time.Since(at).Abs() > time.Minute {
		t.Errorf("preflight: utcNow %q (%v), want the runner's clock, %s", st.str("utcNow"), err, time.Now().UTC().Format(time.RFC3339))
	}
}

func TestRealPowerShellCollectsHNSNetworks(t *testing.T) {
	r, ctx := realRunner(), realContext(t)
	var sr StepReport
	st, err := r.runStep(ctx, &sr, StepCollectLogs, fixed([]Param{{"Item", "hns-networks"}, {"Lines", "10"}}))
	if err != nil {
		t.Fatalf("collect-logs: %v", err)
	}
	if st.str("item") != "hns-networks" || !strings.HasPrefix(strings.TrimSpace(sr.Output), "[") {
		t.Errorf("status %v, output %q: want the HNS networks as a JSON list", sr.Status, sr.Output)
	}
}

// TestRealPowerShellStepFailureIsClassified: a step that throws fails as the
// harness classifies a failed step (ErrStepFailed, exit code 1), with the
// script's error in plain text, decoded from PowerShell's CLIXML.
func TestRealPowerShellStepFailureIsClassified(t *testing.T) {
	r, ctx := realRunner(), realContext(t)
	var sr StepReport
	_, err := r.runStep(ctx, &sr, StepCollectLogs, fixed([]Param{{"Item", "registry"}, {"Lines", "10"}}))
	var se *StepError
	if !errors.As(err, &se) || !errors.Is(err, ErrStepFailed) || se.ExitCode != 1 {
		t.Fatalf("err = %v, want ErrStepFailed with exit code 1", err)
	}
	if !strings.Contains(err.Error(), "unknown log item registry") || strings.Contains(err.Error(), "<Objs") || strings.Contains(err.Error(), "CLIXML") {
		t.Errorf("the error does not show the script's error plainly: %v", err)
	}
}
