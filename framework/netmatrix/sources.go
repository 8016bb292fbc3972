package netmatrix

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/winconform/winconform/framework/podexec"
	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/text"
)

// Probing is how every source runs the probe: per-target timeout and how
// many targets it probes at once.
type Probing struct {
	Timeout  time.Duration
	Parallel int
}

func (p Probing) args(targets []string) []string {
	t, n := p.Timeout, p.Parallel
	if t <= 0 {
		t = 3 * time.Second
	}
	if n <= 0 {
		n = 16
	}
	return append([]string{"connect", "--timeout=" + t.String(), fmt.Sprintf("--parallel=%d", n)}, targets...)
}

// PodSource probes from inside a pod that runs the probe image.
type PodSource struct {
	Self       Peer
	Exec       podexec.Client
	Namespace  string
	Pod        string
	Container  string
	Binary     string // the probe's path in the container
	Kubeconfig string // for the reproduction command
	Probing
}

// Peer is the pod.
func (s PodSource) Peer() Peer { return s.Self }

// Probe runs one `probe connect` in the pod for all targets.
func (s PodSource) Probe(ctx context.Context, targets []string) ([]probeclient.Result, error) {
	stdout, stderr, err := s.Exec.Exec(ctx, s.Namespace, s.Pod, s.Container, append([]string{s.Binary}, s.args(targets)...))
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, text.FirstLine(stderr))
	}
	return probeclient.Parse(stdout, targets)
}

// Repro is the kubectl exec command that probes target from this pod.
func (s PodSource) Repro(target string) string {
	kc := ""
	if s.Kubeconfig != "" {
		kc = " --kubeconfig " + s.Kubeconfig
	}
	return fmt.Sprintf("kubectl%s -n %s exec %s -c %s -- %s %s", kc, s.Namespace, s.Pod, s.Container, s.Binary,
		strings.Join(s.args([]string{target}), " "))
}

// LocalSource probes from the machine the harness runs on (a client outside
// the cluster), with the same probe program, run locally.
type LocalSource struct {
	Self   Peer
	Binary string
	Probing
}

// Peer is the local machine.
func (s LocalSource) Peer() Peer { return s.Self }

// Probe runs the local probe once for all targets.
func (s LocalSource) Probe(ctx context.Context, targets []string) ([]probeclient.Result, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, s.Binary, s.args(targets)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", s.Binary, err, text.FirstLine(errb.String()))
	}
	return probeclient.Parse(out.String(), targets)
}

// Repro is the local command line.
func (s LocalSource) Repro(target string) string {
	return s.Binary + " " + strings.Join(s.args([]string{target}), " ")
}

// WindowsProbePath is where the join puts the probe on Windows nodes.
const WindowsProbePath = `C:\winconform\probe.exe`

// RemoteSource probes from a Windows node's host, over the remote-exec
// interface (WinRM), with the probe the join installed there.
type RemoteSource struct {
	Self   Peer
	Exec   remote.Exec
	Binary string
	Probing
}

// Peer is the node.
func (s RemoteSource) Peer() Peer { return s.Self }

// Probe runs the probe on the node once for all targets.
func (s RemoteSource) Probe(ctx context.Context, targets []string) ([]probeclient.Result, error) {
	res, err := s.Exec.RunPS(ctx, "network probe from "+s.Self.Name, s.script(targets))
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return probeclient.Parse(res.Stdout, targets)
}

func (s RemoteSource) script(targets []string) string {
	args := s.args(targets)
	for i, a := range args {
		args[i] = psQuote(a)
	}
	return "& " + psQuote(s.binary()) + " " + strings.Join(args, " ") + "\nexit $LASTEXITCODE"
}

func (s RemoteSource) binary() string {
	if s.Binary == "" {
		return WindowsProbePath
	}
	return s.Binary
}

// Repro is the PowerShell line to run on the node.
func (s RemoteSource) Repro(target string) string {
	return "on " + s.Self.Name + " (PowerShell): " + strings.SplitN(s.script([]string{target}), "\n", 2)[0]
}

// psQuote quotes s for PowerShell: single quotes, with ' doubled.
func psQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
