package remote_test

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// blackholePort returns a loopback port that answers no connection attempt:
// a listener with a backlog of 0, never accepted from, whose queue is full,
// so that the kernel drops further SYNs, as a firewall or an unroutable
// address does.
func blackholePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	raw, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var listenErr error
	if err := raw.Control(func(fd uintptr) { listenErr = syscall.Listen(int(fd), 0) }); err != nil || listenErr != nil {
		t.Skipf("cannot shrink the backlog: %v %v", err, listenErr)
	}
	for range 8 {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 100*time.Millisecond)
		if err != nil {
			return ln.Addr().(*net.TCPAddr).Port // the queue is full
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the listen queue never filled")
	return 0
}
