package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
)

// Rung is a step of the readiness ladder. A machine is ready when it has
// climbed all four, in order; one that runs out of time fails naming the
// rung it stopped on.
type Rung int

// The rungs.
const (
	// RungAddress: the provider reports an address that is not link-local
	// (169.254.0.0/16, fe80::/10: what Windows gives itself while DHCP does
	// not answer), and it stays the same for the settle time (Windows
	// changes its address during sysprep's specialize pass and again at
	// the first logon).
	RungAddress Rung = iota + 1
	// RungTCP: WinRM's port accepts a TCP connection.
	RungTCP
	// RungIdentify: WinRM answers the unauthenticated wsmid:Identify. A
	// port that accepts is not enough: a forwarded port accepts at once,
	// long before the guest's service answers.
	RungIdentify
	// RungCommand: one authenticated command runs (exit code 0): the
	// account of the VM file's machine block logs in.
	RungCommand
)

var rungNames = map[Rung]string{RungAddress: "address", RungTCP: "tcp", RungIdentify: "identify", RungCommand: "command"}

func (r Rung) String() string { return rungNames[r] }

// describe says what the rung waits for.
func (r Rung) describe(port int, settle time.Duration) string {
	switch r {
	case RungAddress:
		return fmt.Sprintf("an address that is not link-local, the same for %v", settle)
	case RungTCP:
		return fmt.Sprintf("WinRM's port %d accepting a TCP connection", port)
	case RungIdentify:
		return "WinRM answering the unauthenticated wsmid:Identify"
	case RungCommand:
		return "an authenticated command running"
	}
	return "?"
}

// fix says what to look at when a machine stops at the rung.
func (r Rung) fix() string {
	switch r {
	case RungAddress:
		return "the VM got no address from DHCP (or its provider cannot see it: a lease, the guest agent, VMware Tools, Hyper-V's KVP): check the VM's network and that the image's guest tools run; see the console log"
	case RungTCP:
		return "nothing accepts on WinRM's port: the guest has not booted, the image has no WinRM listener (winrm quickconfig; docs/vms.md, The golden image), or its firewall drops the port; see the console log"
	case RungIdentify:
		return "the port accepts but WinRM does not answer: the guest is still booting (sysprep, first logon), or something other than WinRM listens there; see the console log"
	case RungCommand:
		return "WinRM answers but the command fails: check machine.user and machine.passwordFrom (the image's administrator password) and machine.winrm against the image"
	}
	return ""
}

// NotReadyError is a machine that did not climb the readiness ladder in
// time: it names the rung it stopped on and what the last attempt said.
type NotReadyError struct {
	// Machine is the machine's name, ID its provider ID.
	Machine, ID string
	// Rung is the rung it stopped on; Address the address it had then ("" at
	// the first rung).
	Rung    Rung
	Address string
	// Waited is how long the ladder ran.
	Waited time.Duration
	// Last is the last attempt's failure.
	Last error
	// ConsoleLog is the file the machine's console log was written to, ""
	// when the provider keeps none.
	ConsoleLog string

	port   int
	settle time.Duration
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine %s is not ready after %v: it stopped at rung %d of 4, %s (%s)", e.Machine, e.Waited.Round(time.Second), e.Rung, e.Rung, e.Rung.describe(e.port, e.settle))
	if e.Address != "" {
		fmt.Fprintf(&b, " at %s", e.Address)
	}
	if e.Last != nil {
		fmt.Fprintf(&b, ": %v", e.Last)
	}
	b.WriteString("; " + e.Rung.fix())
	if e.ConsoleLog != "" {
		b.WriteString(" (" + e.ConsoleLog + ")")
	}
	return b.String()
}

func (e *NotReadyError) Unwrap() error { return e.Last }

// winrmClient is what the ladder asks of WinRM (remote.WinRM).
type winrmClient interface {
	Identify(ctx context.Context) (remote.Identification, error)
	RunPS(ctx context.Context, step, script string) (remote.Result, error)
	Close() error
}

// ladder readies one machine.
type ladder struct {
	p       vms.Provider
	id      string
	name    string
	machine func(addr string) (config.Machine, error)
	connect func(config.Machine) (winrmClient, error)
	settle  time.Duration
	budget  time.Duration
	poll    time.Duration
	grace   time.Duration // authGrace
	now     func() time.Time
	log     func(format string, args ...any)
}

// readyScript is the command of the last rung: it prints the machine's
// name, which the log shows.
const readyScript = `[Environment]::MachineName`

// Per-attempt bounds.
const (
	dialTimeout     = 5 * time.Second
	identifyTimeout = 30 * time.Second
	commandTimeout  = 2 * time.Minute
	// authGrace is how long the last rung retries a refused login: the
	// service answers Identify once it is up, and an account it refuses
	// that long is a wrong password, not a machine still starting.
	authGrace = 2 * time.Minute
)

// climb runs the ladder until the machine is ready, the budget runs out
// (a *NotReadyError) or ctx ends. It returns the inventory machine at the
// settled address.
func (l *ladder) climb(ctx context.Context) (config.Machine, error) {
	start := l.now()
	deadline := start.Add(l.budget)
	rung := RungAddress
	var (
		addr, candidate string
		since           time.Time
		last            error
		m               config.Machine
		client          winrmClient
		authSince       time.Time
	)
	defer func() {
		if client != nil {
			_ = client.Close()
		}
	}()
	fail := func(err error) (config.Machine, error) {
		if ctx.Err() != nil {
			return config.Machine{}, ctx.Err()
		}
		if err == nil {
			err = last
		}
		e := &NotReadyError{Machine: l.name, ID: l.id, Rung: rung, Waited: l.now().Sub(start), Last: err, settle: l.settle, port: int(m.WinRM.Port)}
		if rung > RungAddress {
			e.Address = addr
		}
		return config.Machine{}, e
	}
	for {
		if l.now().After(deadline) {
			return fail(nil)
		}
		if rung > RungAddress {
			// The address the provider sees still the settled one? Windows
			// changes it during sysprep: start again from the first rung.
			now, err := l.address(ctx)
			if err != nil && errors.Is(err, vms.ErrNotFound) {
				return fail(err)
			}
			if err == nil && now != addr {
				l.log("%s: its address changed from %s to %q: waiting for it to settle again", l.name, addr, now)
				rung, candidate, addr = RungAddress, "", ""
				if client != nil {
					_ = client.Close()
					client = nil
				}
			}
		}
		switch rung {
		case RungAddress:
			a, err := l.address(ctx)
			switch {
			case errors.Is(err, vms.ErrNotFound):
				last = err
				return fail(err)
			case err != nil:
				last = err
			case a == "":
				last = errors.New("the provider reports no address but link-local ones")
				candidate = ""
			case a != candidate:
				candidate, since = a, l.now()
				last = fmt.Errorf("address %s is new: it must stay the same for %v", a, l.settle)
			}
			if candidate != "" && l.now().Sub(since) >= l.settle {
				addr = candidate
				var err error
				if m, err = l.machine(addr); err != nil {
					return config.Machine{}, err
				}
				l.log("%s: address %s (the same for %v)", l.name, addr, l.settle)
				rung, last = RungTCP, nil
				continue
			}
		case RungTCP:
			if err := l.watch(ctx, addr, dialTimeout, func(actx context.Context) error { return l.dial(actx, m) }); err != nil {
				last = err
				break
			}
			rung, last = RungIdentify, nil
			continue
		case RungIdentify:
			if client == nil {
				var err error
				if client, err = l.connect(m); err != nil {
					return config.Machine{}, err // a config the file check let through: not the machine's fault
				}
			}
			var id remote.Identification
			err := l.watch(ctx, addr, min(identifyTimeout, time.Until(deadline)+time.Second), func(actx context.Context) (err error) {
				id, err = client.Identify(actx)
				return err
			})
			if err != nil {
				last = err
				break
			}
			l.log("%s: WinRM answers Identify (%s, %s)", l.name, id.ProductVendor, id.ProductVersion)
			rung, last = RungCommand, nil
			continue
		case RungCommand:
			var res remote.Result
			err := l.watch(ctx, addr, min(commandTimeout, time.Until(deadline)+time.Second), func(actx context.Context) (err error) {
				res, err = client.RunPS(actx, "ready", readyScript)
				return err
			})
			if err == nil {
				err = res.Err()
			}
			if err == nil {
				l.log("%s: ready (%s answers as %q) after %v", l.name, addr, strings.TrimSpace(res.Stdout), l.now().Sub(start).Round(time.Second))
				return m, nil
			}
			last = err
			if errors.Is(err, remote.ErrAuth) {
				if authSince.IsZero() {
					authSince = l.now()
				}
				if l.now().Sub(authSince) >= l.grace {
					return fail(err)
				}
			} else {
				authSince = time.Time{}
			}
		}
		if err := sleep(ctx, l.poll); err != nil {
			return fail(err)
		}
	}
}

// errAddressChanged ends an attempt whose machine's address changed.
var errAddressChanged = errors.New("the machine's address changed during the attempt")

// watch runs one attempt of a rung, bounded by timeout, while it watches
// the machine's address: when the provider sees another one (Windows
// renews its lease during sysprep), the attempt is cut short, since
// waiting on the old address is waiting on nothing.
func (l *ladder) watch(ctx context.Context, addr string, timeout time.Duration, attempt func(context.Context) error) error {
	actx, cancel := context.WithTimeoutCause(ctx, timeout, context.DeadlineExceeded)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	changed := make(chan struct{})
	go func() {
		t := time.NewTicker(l.poll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-actx.Done():
				return
			case <-t.C:
				if a, err := l.address(actx); err == nil && a != addr {
					close(changed)
					cancel()
					return
				}
			}
		}
	}()
	err := attempt(actx)
	select {
	case <-changed:
		return errAddressChanged
	default:
		return err
	}
}

// address returns the address to use among those the provider sees: the
// first IPv4 address that is not link-local, else the first other one
// (IPv6, a DNS name); "" when there is none.
func (l *ladder) address(ctx context.Context) (string, error) {
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	addrs, err := l.p.Addresses(actx, l.id)
	if err != nil {
		return "", err
	}
	return pickAddress(addrs), nil
}

// pickAddress picks the address to reach a machine at: IPv4 before
// anything else, never a link-local one, never one that is not usable
// (unspecified, multicast).
func pickAddress(addrs []string) string {
	var other string
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		ip, err := netip.ParseAddr(a)
		if err != nil {
			if other == "" {
				other = a // a DNS name, as a static inventory has
			}
			continue
		}
		ip = ip.Unmap()
		switch {
		case ip.IsLinkLocalUnicast(), ip.IsUnspecified(), ip.IsMulticast(), ip.Zone() != "":
			continue
		case ip.Is4():
			return ip.String()
		case other == "":
			other = ip.String()
		}
	}
	return other
}

// dial checks that WinRM's port accepts a connection.
func (l *ladder) dial(ctx context.Context, m config.Machine) error {
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(m.Address, strconv.Itoa(int(m.WinRM.Port))))
	if err != nil {
		return err
	}
	return c.Close()
}

// connectWinRM is the WinRM client of a machine.
func connectWinRM(m config.Machine) (winrmClient, error) {
	cfg := windows.RemoteConfig(m)
	cfg.ConnectTimeout = dialTimeout
	return remote.NewWinRM(cfg)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
