//go:build !windows

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

const protocolICMP = 1 // IANA protocol number of ICMP for IPv4

// echoICMP sends an echo request carrying payload to ip and waits, until
// ctx's deadline, for the reply carrying it back. It first tries an
// unprivileged ICMP datagram socket (Linux: net.ipv4.ping_group_range), then
// a raw socket (CAP_NET_RAW).
func echoICMP(ctx context.Context, ip net.IP, payload []byte) error {
	conn, raw, err := listenICMP()
	if err != nil {
		return withClass(classUnsupported, err)
	}
	defer conn.Close()
	defer bindDeadline(ctx, conn)()

	var idSeq [4]byte
	rand.Read(idSeq[:])
	id, seq := int(binary.BigEndian.Uint16(idSeq[:2])), int(binary.BigEndian.Uint16(idSeq[2:]))
	msg := icmp.Message{
		Type: ipv4.ICMPTypeEcho,
		Body: &icmp.Echo{ID: id, Seq: seq, Data: payload},
	}
	b, err := msg.Marshal(nil)
	if err != nil {
		return err
	}
	var dst net.Addr = &net.UDPAddr{IP: ip}
	if raw {
		dst = &net.IPAddr{IP: ip}
	}
	if _, err := conn.WriteTo(b, dst); err != nil {
		return err
	}
	buf := make([]byte, 1500)
	for {
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			return err
		}
		reply, err := icmp.ParseMessage(protocolICMP, buf[:n])
		if err != nil {
			continue
		}
		switch body := reply.Body.(type) {
		case *icmp.Echo:
			// The payload identifies our request; datagram sockets
			// rewrite the ID, raw sockets see every ICMP packet.
			if reply.Type == ipv4.ICMPTypeEchoReply && bytes.Equal(body.Data, payload) {
				return nil
			}
		case *icmp.DstUnreach:
			if quotesEcho(body.Data, ip, seq) {
				return withClass(classUnreachable, fmt.Errorf("ICMP destination unreachable (code %d) for %s", reply.Code, ip))
			}
		case *icmp.TimeExceeded:
			if quotesEcho(body.Data, ip, seq) {
				return withClass(classUnreachable, fmt.Errorf("ICMP time exceeded (code %d) for %s", reply.Code, ip))
			}
		}
	}
}

// listenICMP opens an ICMP datagram socket or, failing that, a raw one
// (raw reports true).
func listenICMP() (conn *icmp.PacketConn, raw bool, err error) {
	conn, dgramErr := icmp.ListenPacket("udp4", "0.0.0.0")
	if dgramErr == nil {
		return conn, false, nil
	}
	conn, rawErr := icmp.ListenPacket("ip4:icmp", "0.0.0.0")
	if rawErr == nil {
		return conn, true, nil
	}
	return nil, false, fmt.Errorf("cannot open an ICMP socket: datagram: %v; raw: %w", dgramErr, rawErr)
}

// quotesEcho reports whether an ICMP error's quoted datagram (the original
// IPv4 header plus the first 8 bytes of its payload) is our echo request to
// dst with sequence number seq.
func quotesEcho(quoted []byte, dst net.IP, seq int) bool {
	if len(quoted) < ipv4.HeaderLen {
		return false
	}
	ihl := int(quoted[0]&0x0f) * 4
	if ihl < ipv4.HeaderLen || len(quoted) < ihl+8 {
		return false
	}
	if !net.IP(quoted[16:20]).Equal(dst) || quoted[9] != protocolICMP {
		return false
	}
	echo := quoted[ihl:]
	return echo[0] == byte(ipv4.ICMPTypeEcho) && int(binary.BigEndian.Uint16(echo[6:8])) == seq
}
