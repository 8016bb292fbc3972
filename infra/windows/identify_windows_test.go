package windows

import (
	"os"
	"strings"
	"testing"
)

// On the Windows runners: the runner, a real Windows Server, says what it
// is through the harness's own command line (remote.Local), and its answer
// reads as a Windows machine's: a caption "Microsoft Windows ...", a build
// with its revision, its computer name, and the hardware configuration its
// kubelet would report as the node's systemUUID.
func TestRealPowerShellSaysWhatTheMachineIs(t *testing.T) {
	r, ctx := realRunner(), realContext(t)
	id, err := Identify(ctx, r.exec)
	if err != nil {
		t.Fatalf("the runner did not say what it is: %v", err)
	}
	t.Logf("the runner: %+v", id)
	if host := os.Getenv("COMPUTERNAME"); !strings.EqualFold(id.Hostname, host) {
		t.Errorf("hostname %q, want %q", id.Hostname, host)
	}
	if !strings.HasPrefix(id.Caption, "Microsoft Windows Server") {
		t.Errorf("caption %q: the runners run Windows Server", id.Caption)
	}
}
