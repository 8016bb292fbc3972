//go:build !windows

package main

import (
	"net"
	"testing"
)

func TestQuotesEcho(t *testing.T) {
	// An IPv4 header (IHL 5, protocol ICMP, destination 10.0.0.9) followed
	// by the first 8 bytes of an echo request with ID 0x1234 and seq 0x0102.
	quoted := []byte{
		0x45, 0, 0, 84, 0, 0, 0x40, 0, 64, 1, 0, 0,
		10, 0, 0, 1, // source
		10, 0, 0, 9, // destination
		8, 0, 0, 0, 0x12, 0x34, 0x01, 0x02,
	}
	dst := net.IPv4(10, 0, 0, 9)
	if !quotesEcho(quoted, dst, 0x0102) {
		t.Error("our own echo request is not recognised")
	}
	if quotesEcho(quoted, dst, 0x0103) {
		t.Error("another sequence number is recognised")
	}
	if quotesEcho(quoted, net.IPv4(10, 0, 0, 8), 0x0102) {
		t.Error("another destination is recognised")
	}
	if quotesEcho(quoted[:24], dst, 0x0102) {
		t.Error("a truncated quote is recognised")
	}
	notICMP := append([]byte(nil), quoted...)
	notICMP[9] = 17
	if quotesEcho(notICMP, dst, 0x0102) {
		t.Error("a quoted UDP datagram is recognised")
	}
}
