package wsmantest

import (
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// skfNetOff is SKF_NET_OFF (linux/filter.h): a classic BPF load at this
// offset reads from the packet's network header, here the IPv4 header.
const skfNetOff = 0xfff00000

// firewallControl attaches to the listening socket a filter that drops the
// packets (the SYNs) of every IPv4 source outside allowed, in the kernel:
// the connection is never made, and a client elsewhere waits out its
// connect timeout, as behind a Windows Firewall rule that does not match
// its address.
func firewallControl(allowed []netip.Prefix) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		prog := []bpf.Instruction{}
		for _, p := range allowed {
			if !p.Addr().Is4() {
				return fmt.Errorf("the firewall range %s is not IPv4", p)
			}
			a := p.Masked().Addr().As4()
			mask := uint32(0)
			if p.Bits() > 0 {
				mask = ^uint32(0) << (32 - p.Bits())
			}
			prog = append(prog,
				bpf.LoadAbsolute{Off: skfNetOff + 12, Size: 4}, // the source address
				bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: mask},
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]), SkipFalse: 1},
				bpf.RetConstant{Val: 0xffffffff},
			)
		}
		prog = append(prog, bpf.RetConstant{Val: 0})
		raw, err := bpf.Assemble(prog)
		if err != nil {
			return err
		}
		filter := make([]unix.SockFilter, len(raw))
		for i, r := range raw {
			filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
		}
		fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog)
		}); err != nil {
			return err
		}
		return serr
	}
}
