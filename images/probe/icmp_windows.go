package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Windows forbids raw sockets to non-administrators (and Windows containers
// run as ContainerUser by default), so the echo goes through IcmpSendEcho of
// iphlpapi.dll, the API behind ping.exe, which needs no privilege.
var (
	iphlpapi            = syscall.NewLazyDLL("iphlpapi.dll")
	procIcmpCreateFile  = iphlpapi.NewProc("IcmpCreateFile")
	procIcmpCloseHandle = iphlpapi.NewProc("IcmpCloseHandle")
	procIcmpSendEcho    = iphlpapi.NewProc("IcmpSendEcho")
)

// IP_STATUS values (ipexport.h) of an echo reply or of IcmpSendEcho's last error.
const (
	ipSuccess             = 0
	ipDestNetUnreachable  = 11002
	ipDestHostUnreachable = 11003
	ipDestProtUnreachable = 11004
	ipDestPortUnreachable = 11005
	ipReqTimedOut         = 11010
	ipTTLExpiredTransit   = 11013
	ipTTLExpiredReassem   = 11014
	ipDestUnreachable     = 11040
	ipTimeExceeded        = 11041
)

// Win32 errors IcmpSendEcho may report instead of an IP_STATUS.
const (
	errorAccessDenied = 5  // ERROR_ACCESS_DENIED
	errorNotSupported = 50 // ERROR_NOT_SUPPORTED
)

// icmpEchoReply is ICMP_ECHO_REPLY of ipexport.h.
type icmpEchoReply struct {
	Address       uint32
	Status        uint32
	RoundTripTime uint32
	DataSize      uint16
	Reserved      uint16
	Data          uintptr
	Options       struct {
		TTL, TOS, Flags, OptionsSize uint8
		OptionsData                  uintptr
	}
}

// echoICMP sends an echo request carrying payload to ip and waits, until
// ctx's deadline, for the reply.
func echoICMP(ctx context.Context, ip net.IP, payload []byte) error {
	if err := procIcmpSendEcho.Find(); err != nil {
		return withClass(classUnsupported, err)
	}
	h, _, err := procIcmpCreateFile.Call()
	if syscall.Handle(h) == syscall.InvalidHandle {
		return withClass(classUnsupported, fmt.Errorf("IcmpCreateFile: %w", err))
	}
	defer procIcmpCloseHandle.Call(h)

	timeout := time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout < time.Millisecond {
		return os.ErrDeadlineExceeded
	}
	// The reply buffer holds one ICMP_ECHO_REPLY, the echoed data, 8 bytes
	// for an ICMP error and an IO_STATUS_BLOCK, as the documentation asks.
	reply := make([]byte, int(unsafe.Sizeof(icmpEchoReply{}))+len(payload)+8+16)
	// IPAddr is the address as it lies in memory, in network byte order.
	dst := binary.NativeEndian.Uint32(ip.To4())
	n, _, err := procIcmpSendEcho.Call(h, uintptr(dst),
		uintptr(unsafe.Pointer(&payload[0])), uintptr(len(payload)), 0,
		uintptr(unsafe.Pointer(&reply[0])), uintptr(len(reply)),
		uintptr(timeout.Milliseconds()))
	if n == 0 {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			return err
		}
		return ipStatusError(uint32(errno), ip)
	}
	r := (*icmpEchoReply)(unsafe.Pointer(&reply[0]))
	if r.Status != ipSuccess {
		return ipStatusError(r.Status, ip)
	}
	return nil
}

// ipStatusError classifies an IP_STATUS or Win32 error code of IcmpSendEcho.
func ipStatusError(status uint32, ip net.IP) error {
	err := fmt.Errorf("ICMP echo to %s: status %d", ip, status)
	switch status {
	case ipReqTimedOut:
		return withClass(classTimeout, fmt.Errorf("ICMP echo to %s: %w", ip, os.ErrDeadlineExceeded))
	case ipDestNetUnreachable, ipDestHostUnreachable, ipDestProtUnreachable, ipDestPortUnreachable,
		ipTTLExpiredTransit, ipTTLExpiredReassem, ipDestUnreachable, ipTimeExceeded:
		return withClass(classUnreachable, err)
	case errorAccessDenied, errorNotSupported:
		return withClass(classUnsupported, fmt.Errorf("ICMP echo to %s: %w", ip, syscall.Errno(status)))
	}
	return withClass(classOther, err)
}
