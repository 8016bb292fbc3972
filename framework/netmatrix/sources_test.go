package netmatrix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/text"
)

// The sources are Sources.
var (
	_ Source = PodSource{}
	_ Source = LocalSource{}
	_ Source = RemoteSource{}
)

func TestProbingArgs(t *testing.T) {
	cases := []struct {
		p    Probing
		want []string
	}{
		{Probing{}, []string{"connect", "--timeout=3s", "--parallel=16", "a", "b"}},
		{Probing{Timeout: -time.Second, Parallel: -1}, []string{"connect", "--timeout=3s", "--parallel=16", "a", "b"}},
		{Probing{Timeout: 1500 * time.Millisecond, Parallel: 4}, []string{"connect", "--timeout=1.5s", "--parallel=4", "a", "b"}},
		{Probing{Timeout: 2 * time.Minute, Parallel: 1}, []string{"connect", "--timeout=2m0s", "--parallel=1", "a", "b"}},
	}
	for _, c := range cases {
		targets := []string{"a", "b"}
		got := c.p.args(targets)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v.args = %q, want %q", c.p, got, c.want)
		}
		got[3] = "changed"
		if targets[0] != "a" {
			t.Errorf("args aliases the caller's targets")
		}
	}
	if got := (Probing{}).args(nil); !reflect.DeepEqual(got, []string{"connect", "--timeout=3s", "--parallel=16"}) {
		t.Errorf("args(nil) = %q", got)
	}
}

func TestPodSourceRepro(t *testing.T) {
	s := PodSource{Self: peerWinA, Namespace: "netmatrix-abc", Pod: "windows-a", Container: "probe",
		Binary: `C:\probe\probe.exe`, Kubeconfig: "/home/me/.kube/config"}
	url := "http://10.244.0.10:8080/json"
	want := `kubectl --kubeconfig /home/me/.kube/config -n netmatrix-abc exec windows-a -c probe -- C:\probe\probe.exe connect --timeout=3s --parallel=16 ` + url
	if got := s.Repro(url); got != want {
		t.Errorf("Repro =\n%q\nwant\n%q", got, want)
	}
	s.Kubeconfig = ""
	s.Binary = "/probe"
	s.Probing = Probing{Timeout: 5 * time.Second, Parallel: 2}
	want = "kubectl -n netmatrix-abc exec windows-a -c probe -- /probe connect --timeout=5s --parallel=2 " + url
	if got := s.Repro(url); got != want {
		t.Errorf("Repro without a kubeconfig =\n%q\nwant\n%q", got, want)
	}
	if !reflect.DeepEqual(s.Peer(), peerWinA) {
		t.Errorf("Peer = %+v", s.Peer())
	}
}

// writeScript writes an executable shell script into a temporary directory.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX shell")
	}
	path := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeProbe answers `connect` with one JSON line per target, the target's
// position as the pod IP's last octet, and records its arguments, one a
// line, in args next to itself.
const fakeProbe = `printf '%s\n' "$@" > "$(dirname "$0")/args"
[ "$1" = connect ] || { echo "unknown command $1" >&2; exit 2; }
shift 3
i=0
for t in "$@"; do
  case "$t" in
    *refused*) printf '{"index":%d,"target":"%s","ok":false,"errorClass":"refused","error":"connection refused","attempts":2}\n' $i "$t" ;;
    *) printf '{"index":%d,"target":"%s","ok":true,"latencyMs":0.5,"attempts":1,"detail":{"podIP":"10.0.0.%d","statusCode":200}}\n' $i "$t" $i ;;
  esac
  i=$((i+1))
done
`

func TestLocalSourceProbe(t *testing.T) {
	bin := writeScript(t, fakeProbe)
	s := LocalSource{Self: outsideCli, Binary: bin, Probing: Probing{Timeout: 2 * time.Second, Parallel: 3}}
	targets := []string{"http://172.18.0.2:30080/json", "http://172.18.0.4:30080/refused", "http://[fd00::4]:30080/json"}
	res, err := s.Probe(context.Background(), targets)
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	args, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "args"))
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := append([]string{"connect", "--timeout=2s", "--parallel=3"}, targets...)
	if got := lines(string(args)); !reflect.DeepEqual(got, wantArgs) {
		t.Errorf("the probe ran with %q, want %q", got, wantArgs)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want 3", len(res))
	}
	for i, r := range res {
		if r.Index != i || r.Target != targets[i] {
			t.Errorf("result %d is %d %q", i, r.Index, r.Target)
		}
	}
	if !res[0].OK || res[0].Detail.PodIP != "10.0.0.0" || res[0].Detail.StatusCode != 200 || res[0].LatencyMs != 0.5 {
		t.Errorf("result 0 %+v, want OK from 10.0.0.0", res[0])
	}
	if res[1].OK || res[1].ErrorClass != "refused" || res[1].Error != "connection refused" || res[1].Attempts != 2 {
		t.Errorf("result 1 %+v, want refused", res[1])
	}
	if !res[2].OK || res[2].Detail.PodIP != "10.0.0.2" {
		t.Errorf("result 2 %+v", res[2])
	}
	if got, want := s.Repro(targets[0]), bin+" connect --timeout=2s --parallel=3 "+targets[0]; got != want {
		t.Errorf("Repro = %q, want %q", got, want)
	}
	if !reflect.DeepEqual(s.Peer(), outsideCli) {
		t.Errorf("Peer = %+v", s.Peer())
	}
}

func TestLocalSourceFailingProbe(t *testing.T) {
	bin := writeScript(t, "echo 'connect: bad --timeout' >&2\necho 'usage: probe connect ...' >&2\nexit 3\n")
	s := LocalSource{Self: outsideCli, Binary: bin}
	res, err := s.Probe(context.Background(), []string{"http://x/json"})
	if err == nil {
		t.Fatalf("Probe of a failing binary returned %+v and no error", res)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, bin+": ") || !strings.Contains(msg, "exit status 3") || !strings.HasSuffix(msg, ": connect: bad --timeout") {
		t.Errorf("error %q, want the binary, its exit status and stderr's first line", msg)
	}
	if strings.Contains(msg, "usage") {
		t.Errorf("error %q carries more than stderr's first line", msg)
	}
}

func TestLocalSourceBadOutput(t *testing.T) {
	// One line for two targets.
	bin := writeScript(t, `echo '{"index":0,"target":"a","ok":true}'`+"\n")
	s := LocalSource{Self: outsideCli, Binary: bin}
	if _, err := s.Probe(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "answered 1 of 2") {
		t.Errorf("Probe with a short answer: %v, want the parse error", err)
	}
	bin = writeScript(t, "echo not-json\n")
	s.Binary = bin
	if _, err := s.Probe(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "not-json") {
		t.Errorf("Probe with garbage: %v, want the parse error naming the line", err)
	}
}

func TestLocalSourceMissingBinary(t *testing.T) {
	s := LocalSource{Self: outsideCli, Binary: filepath.Join(t.TempDir(), "no-such-probe")}
	if _, err := s.Probe(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "no-such-probe") {
		t.Errorf("Probe with a missing binary: %v, want an error naming it", err)
	}
}

func TestLocalSourceHonoursContext(t *testing.T) {
	bin := writeScript(t, "exec sleep 10\n")
	s := LocalSource{Self: outsideCli, Binary: bin}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Probe(ctx, []string{"a"})
	if err == nil {
		t.Errorf("Probe past its deadline returned no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Probe took %v after a 200ms deadline", d)
	}
}

// fakeExec is a remote.Exec that records the scripts it runs.
type fakeExec struct {
	name   string
	result remote.Result
	err    error

	mu      sync.Mutex
	steps   []string
	scripts []string
}

func (f *fakeExec) Name() string { return f.name }

func (f *fakeExec) RunPS(ctx context.Context, step, script string) (remote.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = append(f.steps, step)
	f.scripts = append(f.scripts, script)
	r := f.result
	r.Machine, r.Step = f.name, step
	return r, f.err
}

func TestRemoteSourceScriptQuoting(t *testing.T) {
	s := RemoteSource{Self: nodeWin1}
	targets := []string{"http://10.96.0.100:80/json", "http://it's.example:80/a''b"}
	want := `& 'C:\winconform\probe.exe' 'connect' '--timeout=3s' '--parallel=16' 'http://10.96.0.100:80/json' 'http://it''s.example:80/a''''b'` +
		"\nexit $LASTEXITCODE"
	if got := s.script(targets); got != want {
		t.Errorf("script =\n%s\nwant\n%s", got, want)
	}
	if targets[1] != "http://it's.example:80/a''b" {
		t.Errorf("script changed the caller's targets: %q", targets)
	}
	s.Binary = `D:\tools\it's probe.exe`
	s.Probing = Probing{Timeout: 10 * time.Second, Parallel: 2}
	want = `& 'D:\tools\it''s probe.exe' 'connect' '--timeout=10s' '--parallel=2' 'icmp://10.244.2.10'` + "\nexit $LASTEXITCODE"
	if got := s.script([]string{"icmp://10.244.2.10"}); got != want {
		t.Errorf("script =\n%s\nwant\n%s", got, want)
	}
}

func TestPSQuote(t *testing.T) {
	cases := map[string]string{
		"":        "''",
		"plain":   "'plain'",
		"it's":    "'it''s'",
		"''":      "''''''",
		"$env:x":  "'$env:x'",
		`a"b c`:   `'a"b c'`,
		"`n; rm ": "'`n; rm '",
	}
	for in, want := range cases {
		if got := psQuote(in); got != want {
			t.Errorf("psQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRemoteSourceRepro(t *testing.T) {
	s := RemoteSource{Self: nodeWin1}
	want := `on win-1 (PowerShell): & 'C:\winconform\probe.exe' 'connect' '--timeout=3s' '--parallel=16' 'http://x''y/json'`
	if got := s.Repro("http://x'y/json"); got != want {
		t.Errorf("Repro =\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(s.Repro("a"), "LASTEXITCODE") {
		t.Errorf("Repro carries the exit line")
	}
	if !reflect.DeepEqual(s.Peer(), nodeWin1) {
		t.Errorf("Peer = %+v", s.Peer())
	}
}

func TestRemoteSourceProbe(t *testing.T) {
	targets := []string{"http://10.96.0.200:80/json", "http://172.18.0.4:30081/json"}
	// Windows line ends and a blank line.
	stdout := `{"index":0,"target":"http://10.96.0.200:80/json","ok":false,"errorClass":"timeout","error":"i/o timeout","attempts":1}` + "\r\n\r\n" +
		`{"index":1,"target":"http://172.18.0.4:30081/json","ok":true,"detail":{"podIP":"10.244.2.10"}}` + "\r\n"
	e := &fakeExec{name: "win-1", result: remote.Result{Stdout: stdout, ExitCode: 0}}
	s := RemoteSource{Self: nodeWin1, Exec: e, Binary: `C:\p.exe`}
	res, err := s.Probe(context.Background(), targets)
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if len(e.scripts) != 1 || e.steps[0] != "network probe from win-1" || e.scripts[0] != s.script(targets) {
		t.Errorf("ran %q %q, want one step with the probe script", e.steps, e.scripts)
	}
	if !strings.HasSuffix(e.scripts[0], "\nexit $LASTEXITCODE") {
		t.Errorf("the script does not pass the probe's exit code on: %q", e.scripts[0])
	}
	if len(res) != 2 || res[0].OK || res[0].ErrorClass != "timeout" || !res[1].OK || res[1].Detail.PodIP != "10.244.2.10" {
		t.Errorf("results %+v", res)
	}
}

func TestRemoteSourceProbeErrors(t *testing.T) {
	targets := []string{"http://a/json"}

	// A non-zero exit code is an error, with stderr.
	e := &fakeExec{name: "win-1", result: remote.Result{Stdout: "", Stderr: "probe.exe: not found\n", ExitCode: 1}}
	s := RemoteSource{Self: nodeWin1, Exec: e}
	_, err := s.Probe(context.Background(), targets)
	if err == nil || !errors.Is(err, remote.ErrExit) {
		t.Fatalf("exit code 1: %v, want an ErrExit", err)
	}
	if !strings.Contains(err.Error(), "exited with code 1") || !strings.Contains(err.Error(), "probe.exe: not found") {
		t.Errorf("exit error %q lacks the code or stderr", err)
	}

	// A non-zero exit code fails even when the output parses.
	e.result = remote.Result{Stdout: `{"index":0,"target":"http://a/json","ok":true}`, ExitCode: 2}
	if _, err := s.Probe(context.Background(), targets); !errors.Is(err, remote.ErrExit) {
		t.Errorf("exit code 2 with output: %v, want an ErrExit", err)
	}

	// RunPS's own error is returned as is.
	boom := &remote.Error{Machine: "win-1", Step: "network probe from win-1", Op: "creating the shell", Kind: remote.ErrUnreachable, Detail: "no route"}
	e.result, e.err = remote.Result{ExitCode: -1}, boom
	if _, err := s.Probe(context.Background(), targets); !errors.Is(err, remote.ErrUnreachable) || !errors.Is(err, boom) {
		t.Errorf("RunPS error: %v, want it returned", err)
	}

	// Output that does not answer every target.
	e.result, e.err = remote.Result{Stdout: "", ExitCode: 0}, nil
	if _, err := s.Probe(context.Background(), targets); err == nil || !strings.Contains(err.Error(), "answered 0 of 1") {
		t.Errorf("empty output: %v, want a parse error", err)
	}
}

// A failing remote source, in a matrix, makes its cells probe errors with
// the remote error as the reason.
func TestRemoteSourceErrorInMatrix(t *testing.T) {
	ts := []Target{podTargets(peerLinA)[0]}
	e := &fakeExec{name: "win-1", result: remote.Result{Stderr: "boom\n", ExitCode: 5}}
	m := &Matrix{Sources: []Source{RemoteSource{Self: nodeWin1, Exec: e}}, Targets: ts, Applies: Applicable}
	m.Run(context.Background(), nil)
	c := cellOf(t, m, win1, ts[0].ID())
	if c.Verdict != Broken || !strings.Contains(c.Why, "exited with code 5: boom") || !c.Reprobed {
		t.Errorf("cell %+v, want a re-probed probe error naming the exit code", c)
	}
	if len(e.scripts) != 2 {
		t.Errorf("%d scripts run, want 2 (the probe and its re-probe)", len(e.scripts))
	}
	if want := `on win-1 (PowerShell): & 'C:\winconform\probe.exe' 'connect' '--timeout=3s' '--parallel=16' '` + ts[0].URL + `'`; c.Repro != want {
		t.Errorf("repro %q, want %q", c.Repro, want)
	}
}

func TestFirstLine(t *testing.T) {
	cases := map[string]string{
		"":                      "",
		"one":                   "one",
		"\n\n  first\nsecond\n": "first",
	}
	for in, want := range cases {
		if got := text.FirstLine(in); got != want {
			t.Errorf("text.FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWebURL(t *testing.T) {
	cases := []struct {
		host string
		port int
		want string
	}{
		{"10.244.0.10", 8080, "http://10.244.0.10:8080/json"},
		{"fd00:10:244::a", 8080, "http://[fd00:10:244::a]:8080/json"},
		{"::1", 80, "http://[::1]:80/json"},
		{"linux-a.matrix", 8080, "http://linux-a.matrix:8080/json"},
		{"svc-linux.ns.svc.cluster.local", 80, "http://svc-linux.ns.svc.cluster.local:80/json"},
	}
	for _, c := range cases {
		if got := webURL(c.host, c.port); got != c.want {
			t.Errorf("webURL(%q, %d) = %q, want %q", c.host, c.port, got, c.want)
		}
	}
}

func TestHasOS(t *testing.T) {
	peers := map[string]Peer{"linux-a": peerLinA, "linux-b": peerLinB}
	if !hasOS(peers, "linux") || hasOS(peers, "windows") {
		t.Errorf("hasOS on Linux peers: linux %v windows %v", hasOS(peers, "linux"), hasOS(peers, "windows"))
	}
	peers["windows-a"] = peerWinA
	if !hasOS(peers, "windows") {
		t.Errorf("hasOS misses the Windows peer")
	}
	if hasOS(nil, "linux") || hasOS(map[string]Peer{}, "linux") {
		t.Errorf("hasOS of no peers")
	}
	if hasOS(map[string]Peer{"x": {Name: "x"}}, "linux") {
		t.Errorf("hasOS counts a peer of no OS")
	}
}
