package main

import (
	"errors"
	"io"
	"net"
	"time"
)

// acceptRetryDelay paces Accept after a transient failure such as EMFILE.
const acceptRetryDelay = 50 * time.Millisecond

// serveTCPEcho echoes every connection's bytes back until the peer's EOF. It
// returns nil once ln is closed.
func (r *running) serveTCPEcho(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			time.Sleep(acceptRetryDelay)
			continue
		}
		if !r.track(c) {
			c.Close()
			return nil
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(c)
			io.Copy(c, c)
			c.Close()
		}()
	}
}

// track registers an open echo connection so that stop can close it; it
// reports false when r is already stopping.
func (r *running) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *running) untrack(c net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conns, c)
}

// serveUDPEcho sends every datagram back to its sender. It returns nil once
// pc is closed.
func (r *running) serveUDPEcho(pc net.PacketConn) error {
	buf := make([]byte, 64<<10)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// E.g. Windows reports an earlier reply's ICMP port
			// unreachable as WSAECONNRESET on the next read.
			continue
		}
		pc.WriteTo(buf[:n], addr)
	}
}
