package underlay

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
)

// fakeRunner answers commands from a table (by their joined argv) and
// records them.
type fakeRunner struct {
	answers map[string]fakeAnswer
	ran     []string
}

type fakeAnswer struct {
	out, errOut string
	err         error
}

func (f *fakeRunner) Name() string { return "node-x" }

func (f *fakeRunner) Run(_ context.Context, argv ...string) (string, string, error) {
	cmd := strings.Join(argv, " ")
	f.ran = append(f.ran, cmd)
	a, ok := f.answers[cmd]
	if !ok {
		return "", "", nil
	}
	return a.out, a.errOut, a.err
}

// What iproute2 (Debian bookworm's, the node image's) prints.
func TestParseRouteGet(t *testing.T) {
	for _, c := range []struct {
		out  string
		want string
		err  bool
	}{
		{"172.18.0.4 via 192.168.80.1 dev eth0 src 192.168.80.2 uid 0 \\    cache ", "192.168.80.1", false},
		{"192.168.80.1 dev eth0 src 192.168.80.2 uid 0 \\    cache ", "invalid IP", false},
		{"unreachable 172.18.0.4 uid 0 \\    cache <rejected> ", "", true},
	} {
		got, err := parseRouteGet(c.out)
		if (err != nil) != c.err || (err == nil && got.String() != c.want) {
			t.Errorf("parseRouteGet(%q) = %v, %v; want %s (error %v)", c.out, got, err, c.want, c.err)
		}
		if c.err && !errors.Is(err, ErrNoRoute) {
			t.Errorf("parseRouteGet(%q): %v is not ErrNoRoute", c.out, err)
		}
	}
}

// ss -Htn state established drops the State column; the kubelet listens on
// IPv6's any address, so IPv4 peers show IPv4-mapped.
func TestParseSSPeers(t *testing.T) {
	out := "0      0      [::ffff:192.168.80.2]:10250 [::ffff:172.18.0.4]:49530\n0      0      192.168.80.2:10250 172.18.0.5:40000\n"
	got, err := parseSSPeers(out)
	want := []netip.Addr{netip.MustParseAddr("172.18.0.4"), netip.MustParseAddr("172.18.0.5")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("parseSSPeers = %v, %v; want %v", got, err, want)
	}
}

func TestLinuxSideRoute(t *testing.T) {
	r := Route{Machine: "node-x", Dest: netip.MustParsePrefix("172.18.0.0/16"), Via: netip.MustParseAddr("192.168.80.1")}
	f := &fakeRunner{answers: map[string]fakeAnswer{}}
	s := LinuxSide{Run: f}
	changed, err := s.EnsureRoute(context.Background(), r)
	if err != nil || !changed || f.ran[1] != "ip route replace 172.18.0.0/16 via 192.168.80.1 proto 211" {
		t.Fatalf("EnsureRoute: %v, %v, ran %v", changed, err, f.ran)
	}
	f = &fakeRunner{answers: map[string]fakeAnswer{"ip -4 route show 172.18.0.0/16 proto 211": {out: "172.18.0.0/16 via 192.168.80.1 dev eth0 \n"}}}
	s = LinuxSide{Run: f}
	if changed, err := s.EnsureRoute(context.Background(), r); err != nil || changed || len(f.ran) != 1 {
		t.Errorf("EnsureRoute on a machine that has it: %v, %v, ran %v", changed, err, f.ran)
	}
	f = &fakeRunner{answers: map[string]fakeAnswer{"ip -4 route show proto 211": {out: "172.18.0.0/16 via 192.168.80.1 dev eth0 \n"}}}
	s = LinuxSide{Run: f}
	removed, err := s.RemoveRoutes(context.Background())
	if err != nil || len(removed) != 1 || f.ran[1] != "ip route del 172.18.0.0/16 via 192.168.80.1 dev eth0" {
		t.Errorf("RemoveRoutes: %v, %v, ran %v", removed, err, f.ran)
	}
	if got := s.RouteCommand(r); got != "ip route replace 172.18.0.0/16 via 192.168.80.1 proto 211" {
		t.Errorf("RouteCommand = %s", got)
	}
}

func TestLinuxSideDial(t *testing.T) {
	ap := netip.MustParseAddrPort("172.18.0.4:6443")
	f := &fakeRunner{answers: map[string]fakeAnswer{
		"timeout 5 bash -c exec 3<>/dev/tcp/172.18.0.4/6443": {errOut: "bash: connect: Connection refused\nbash: line 1: /dev/tcp/172.18.0.4/6443: Connection refused\n", err: errors.New("exit status 1")},
	}}
	err := LinuxSide{Run: f}.Dial(context.Background(), ap, 5*time.Second)
	if err == nil || err.Error() != "Connection refused" {
		t.Errorf("Dial refused: %v", err)
	}
	f = &fakeRunner{answers: map[string]fakeAnswer{
		"timeout 5 bash -c exec 3<>/dev/tcp/172.18.0.4/6443": {err: errors.New("exit status 124")},
	}}
	if err := (LinuxSide{Run: f}).Dial(context.Background(), ap, 5*time.Second); err == nil || !strings.Contains(err.Error(), "timed out after 5s") {
		t.Errorf("Dial timing out: %v", err)
	}
}

// fakeExec answers WinRM scripts by a substring of the script.
type fakeExec struct {
	answers map[string]string
	scripts []string
}

func (f *fakeExec) Name() string { return "win-a" }

func (f *fakeExec) RunPS(_ context.Context, step, script string) (remote.Result, error) {
	f.scripts = append(f.scripts, script)
	for k, v := range f.answers {
		if strings.Contains(script, k) {
			return remote.Result{Machine: "win-a", Step: step, Stdout: v}, nil
		}
	}
	return remote.Result{Machine: "win-a", Step: step, ExitCode: 1, Stderr: "no answer"}, nil
}

// Find-NetRoute's route objects (MSFT_NetRoute) give an on-link
// destination the next hop 0.0.0.0; Get-NetTCPConnection's RemoteAddress is
// a string, IPv4-mapped for a socket on IPv6's any address.
func TestWindowsSide(t *testing.T) {
	f := &fakeExec{answers: map[string]string{
		"Find-NetRoute -RemoteIPAddress '172.18.0.4'": "nexthop=10.1.0.1\r\n",
		"Find-NetRoute -RemoteIPAddress '10.1.0.9'":   "nexthop=0.0.0.0\r\n",
		"Find-NetRoute -RemoteIPAddress '172.19.0.1'": "noroute=No matching MSFT_NetRoute objects found\r\n",
		"Get-NetTCPConnection -LocalPort 10250":       "peer=172.18.0.4\r\npeer=::ffff:172.18.0.5\r\n",
		"ConnectAsync('172.18.0.4', 6443)":            "dial=ok\r\n",
		"ConnectAsync('172.18.0.9', 6443)":            "dial=No connection could be made because the target machine actively refused it 172.18.0.9:6443\r\n",
	}}
	s := WindowsSide{Exec: f}
	ctx := context.Background()
	if hop, err := s.NextHop(ctx, netip.MustParseAddr("172.18.0.4")); err != nil || hop.String() != "10.1.0.1" {
		t.Errorf("NextHop through a gateway: %v, %v", hop, err)
	}
	if hop, err := s.NextHop(ctx, netip.MustParseAddr("10.1.0.9")); err != nil || hop.IsValid() {
		t.Errorf("NextHop on-link: %v, %v", hop, err)
	}
	if _, err := s.NextHop(ctx, netip.MustParseAddr("172.19.0.1")); !errors.Is(err, ErrNoRoute) {
		t.Errorf("NextHop without a route: %v", err)
	}
	peers, err := s.Peers(ctx, 10250)
	if err != nil || fmt.Sprint(peers) != "[172.18.0.4 172.18.0.5]" {
		t.Errorf("Peers = %v, %v", peers, err)
	}
	if err := s.Dial(ctx, netip.MustParseAddrPort("172.18.0.4:6443"), 5*time.Second); err != nil {
		t.Errorf("Dial: %v", err)
	}
	if err := s.Dial(ctx, netip.MustParseAddrPort("172.18.0.9:6443"), 5*time.Second); err == nil || !strings.Contains(err.Error(), "actively refused") {
		t.Errorf("Dial refused: %v", err)
	}
	// Persistent without an interface, as the join's underlay-route step
	// adds it, so that it survives HNS's virtual switch (winside.go).
	if got := s.RouteCommand(Route{Dest: netip.MustParsePrefix("172.18.0.0/16"), Via: netip.MustParseAddr("10.1.0.1")}); got != "route -p add 172.18.0.0 mask 255.255.0.0 10.1.0.1 metric 211" {
		t.Errorf("RouteCommand = %s", got)
	}
}
