package lifecycle

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/standin"
	"github.com/winconform/winconform/testing/vmstest"
)

// The machines of these tests answer WinRM through the stand-in
// (testing/standin), each on its own loopback address (127.0.0.x)
// and all on one port, as VMs on a network each have their address and
// WinRM on the same port. Timings are short: a settle time of 150 ms, a
// poll of 20 ms.
const (
	testSettle = 150 * time.Millisecond
	testPoll   = 20 * time.Millisecond
)

// lab is the machines' network: a port and the stand-ins on it.
type lab struct {
	t     *testing.T
	port  int
	hosts map[string]*standin.Server
}

// newLab starts a stand-in on each of the hosts (127.0.0.x), all on one
// port. The first host picks the port; a port another process holds on a
// later host makes it start over.
func newLab(t *testing.T, hosts ...string) *lab {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		l := &lab{t: t, hosts: map[string]*standin.Server{}}
		first, err := standin.Start(standin.WithAddr(hosts[0] + ":0"))
		if err != nil {
			t.Fatal(err)
		}
		l.port, l.hosts[hosts[0]] = first.Port(), first
		ok := true
		for _, h := range hosts[1:] {
			s, err := standin.Start(standin.WithAddr(net.JoinHostPort(h, strconv.Itoa(l.port))))
			if err != nil {
				ok = false
				break
			}
			l.hosts[h] = s
		}
		if ok {
			for _, s := range l.hosts {
				t.Cleanup(s.Close)
			}
			return l
		}
		for _, s := range l.hosts {
			s.Close()
		}
	}
	t.Fatal("no port free on every host")
	return nil
}

// mute listens on host at the lab's port, accepting connections and never
// answering: a port that is open before the service behind it is.
func (l *lab) mute(host string) {
	l.t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(l.port)))
	if err != nil {
		l.t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	l.t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
}

// vmFile is a VM file for the fake provider: count machines, reached with
// the stand-in's account on the lab's port.
func (l *lab) vmFile(count int) *vms.File { return l.vmFileWith(count, standin.DefaultPassword) }

// vmFileWith is vmFile with the machines' password password.
func (l *lab) vmFileWith(count int, password string) *vms.File {
	l.t.Helper()
	src := fmt.Sprintf(`provider: fake
connection: {endpoint: fake://lab}
image: golden
count: %d
machine:
  user: %s
  passwordFrom: {env: WIN_PW}
  winrm: {port: %d}
`, count, standin.DefaultUser, l.port)
	f, err := config.Parse[config.Machines]("vms.yaml", []byte(src), func(k string) (string, bool) {
		if k == "WIN_PW" {
			return password, true
		}
		return "", false
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return f
}

// plan is an address plan: per machine (by its number n, from 1), the
// addresses it has from an age on.
type plan map[int][]step

type step struct {
	from  time.Duration
	addrs []string
}

// of returns the fake's Plan: machine n's addresses at an age.
func (p plan) of() func(name string, age time.Duration) []string {
	return func(name string, age time.Duration) []string {
		n, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
		var out []string
		for _, s := range p[n] {
			if age >= s.from {
				out = s.addrs
			}
		}
		return out
	}
}

// options are a test run's options.
func testOptions(t *testing.T, runID string) (Options, *bytes.Buffer) {
	var log syncBuffer
	return Options{RunID: runID, Dir: t.TempDir(), Settle: testSettle, Poll: testPoll, ReadyTimeout: 5 * time.Second,
		CleanupTimeout: 10 * time.Second, Log: &log}, &log.Buffer
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

// left returns the machines the fake still has.
func left(t *testing.T, f *vmstest.Fake) []vms.Machine {
	t.Helper()
	ms, err := f.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
