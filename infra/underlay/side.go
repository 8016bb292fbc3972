package underlay

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Side is a machine's part of the underlay, on its own OS: its route to the
// kind network and the check's probes from it. LinuxSide and WindowsSide
// are the two; the plan, the host's rules and the check are the same for
// both.
type Side interface {
	// OS is linux or windows.
	OS() string
	// NextHop is the address the machine sends packets for addr through:
	// the zero Addr when addr is on one of its own networks (on-link), and
	// an error wrapping ErrNoRoute when it has no route to addr.
	NextHop(ctx context.Context, addr netip.Addr) (netip.Addr, error)
	// Dial opens a TCP connection from the machine to addr and closes it;
	// the error says why it could not (refused, timed out, no route).
	Dial(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error
	// Peers lists the remote addresses of the established TCP connections
	// to the machine's local port.
	Peers(ctx context.Context, port int) ([]netip.Addr, error)
	// RouteCommand is the command that gives the machine route r, for
	// messages.
	RouteCommand(r Route) string
}

// ErrNoRoute is a machine without a route to an address.
var ErrNoRoute = errors.New("no route")

// Runner runs a command on a Linux machine (docker exec, ssh) and returns
// what it printed; an error carries a command that ran and failed.
type Runner interface {
	Run(ctx context.Context, argv ...string) (stdout, stderr string, err error)
	// Name is the machine's name, for messages.
	Name() string
}

// LinuxSide is a Linux machine: iproute2's ip and ss, bash's /dev/tcp.
type LinuxSide struct{ Run Runner }

// OS is linux.
func (LinuxSide) OS() string { return Linux }

// RouteCommand is the ip route command that adds r with the harness's mark.
func (LinuxSide) RouteCommand(r Route) string {
	return fmt.Sprintf("ip route replace %s via %s proto %d", r.Dest, r.Via, LinuxRouteProtocol)
}

// EnsureRoute gives the machine route r, marked with the harness's
// protocol; changed is false when it had it.
func (s LinuxSide) EnsureRoute(ctx context.Context, r Route) (changed bool, err error) {
	proto := strconv.Itoa(LinuxRouteProtocol)
	out, stderr, err := s.Run.Run(ctx, "ip", "-4", "route", "show", r.Dest.String(), "proto", proto)
	if err != nil {
		return false, fmt.Errorf("%s: ip route show: %v: %s", s.Run.Name(), err, strings.TrimSpace(stderr))
	}
	if strings.Contains(out, "via "+r.Via.String()+" ") {
		return false, nil
	}
	if _, stderr, err := s.Run.Run(ctx, "ip", "route", "replace", r.Dest.String(), "via", r.Via.String(), "proto", proto); err != nil {
		return false, fmt.Errorf("%s: %s: %v: %s", s.Run.Name(), s.RouteCommand(r), err, strings.TrimSpace(stderr))
	}
	return true, nil
}

// RemoveRoutes deletes every route the harness's protocol marks, and
// returns them.
func (s LinuxSide) RemoveRoutes(ctx context.Context) ([]string, error) {
	proto := strconv.Itoa(LinuxRouteProtocol)
	out, stderr, err := s.Run.Run(ctx, "ip", "-4", "route", "show", "proto", proto)
	if err != nil {
		return nil, fmt.Errorf("%s: ip route show proto %s: %v: %s", s.Run.Name(), proto, err, strings.TrimSpace(stderr))
	}
	var removed []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		args := append([]string{"ip", "route", "del"}, strings.Fields(l)...)
		if _, stderr, err := s.Run.Run(ctx, args...); err != nil {
			return removed, fmt.Errorf("%s: ip route del %s: %v: %s", s.Run.Name(), l, err, strings.TrimSpace(stderr))
		}
		removed = append(removed, l)
	}
	return removed, nil
}

// NextHop reads `ip route get`.
func (s LinuxSide) NextHop(ctx context.Context, addr netip.Addr) (netip.Addr, error) {
	out, stderr, err := s.Run.Run(ctx, "ip", "-4", "-o", "route", "get", addr.String())
	if err != nil {
		if strings.Contains(stderr, "unreachable") {
			return netip.Addr{}, fmt.Errorf("%w to %s (ip route get: %s)", ErrNoRoute, addr, strings.TrimSpace(stderr))
		}
		return netip.Addr{}, fmt.Errorf("%s: ip route get %s: %v: %s", s.Run.Name(), addr, err, strings.TrimSpace(stderr))
	}
	return parseRouteGet(out)
}

// parseRouteGet reads the next hop of `ip -o route get` ("172.18.0.2 via
// 172.19.0.1 dev eth0 src ..."); none for an on-link address.
func parseRouteGet(out string) (netip.Addr, error) {
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "via":
			return netip.ParseAddr(f[i+1])
		case "unreachable", "blackhole", "prohibit":
			return netip.Addr{}, fmt.Errorf("%w: the route is %s (%s)", ErrNoRoute, f[i], strings.TrimSpace(out))
		}
	}
	if len(f) > 0 && (f[0] == "unreachable" || f[0] == "blackhole" || f[0] == "prohibit") {
		return netip.Addr{}, fmt.Errorf("%w: the route is %s", ErrNoRoute, f[0])
	}
	return netip.Addr{}, nil
}

// Dial connects with bash's /dev/tcp under timeout(1).
func (s LinuxSide) Dial(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error {
	secs := strconv.Itoa(int(timeout.Round(time.Second) / time.Second))
	_, stderr, err := s.Run.Run(ctx, "timeout", secs, "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/%s/%d", addr.Addr(), addr.Port()))
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(stderr)
	if msg == "" {
		msg = "timed out after " + timeout.String()
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "/dev/tcp") {
		msg = msg[i+2:]
	}
	return errors.New(msg)
}

// Hold opens a TCP connection from the machine to addr and keeps it open
// for d.
func (s LinuxSide) Hold(ctx context.Context, addr netip.AddrPort, d time.Duration) error {
	secs := int(d.Round(time.Second) / time.Second)
	_, stderr, err := s.Run.Run(ctx, "timeout", strconv.Itoa(secs+5), "bash", "-c",
		fmt.Sprintf("exec 3<>/dev/tcp/%s/%d && sleep %d", addr.Addr(), addr.Port(), secs))
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr))
	}
	return nil
}

// Peers reads `ss` (the kubelet listens on IPv6's any address, so its IPv4
// peers show as IPv4-mapped addresses).
func (s LinuxSide) Peers(ctx context.Context, port int) ([]netip.Addr, error) {
	out, stderr, err := s.Run.Run(ctx, "ss", "-Htn", "state", "established", fmt.Sprintf("( sport = :%d )", port))
	if err != nil {
		return nil, fmt.Errorf("%s: ss: %v: %s", s.Run.Name(), err, strings.TrimSpace(stderr))
	}
	return parseSSPeers(out)
}

// parseSSPeers reads the peer column of `ss -Htn state established`:
// Recv-Q Send-Q Local Peer, addresses as a.b.c.d:port or [v6]:port.
func parseSSPeers(out string) ([]netip.Addr, error) {
	var peers []netip.Addr
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		ap, err := netip.ParseAddrPort(f[3])
		if err != nil {
			return nil, fmt.Errorf("ss: peer %q: %w", f[3], err)
		}
		peers = append(peers, ap.Addr().Unmap())
	}
	return peers, nil
}
