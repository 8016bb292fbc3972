package main

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
)

// saturatedListener returns the address of a loopback TCP socket listening
// with a backlog of 0 whose accept queue is already full, so that Linux
// drops further SYNs and connecting there times out.
func saturatedListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			if classify(err) != classTimeout {
				t.Fatalf("filling the accept queue: %v", err)
			}
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the accept queue does not fill up")
	return ""
}

func TestConnectTCPTimeout(t *testing.T) {
	addr := saturatedListener(t)
	start := time.Now()
	r := connectOne(t, connectOptions{timeout: 300 * time.Millisecond}, "tcp://"+addr)
	wantClass(t, r, classTimeout)
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("took %v with a 300ms timeout", elapsed)
	}
	if r.Attempts != 1 {
		t.Errorf("attempts %d", r.Attempts)
	}
}
