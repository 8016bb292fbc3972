//go:build !linux

package wsmantest

import (
	"errors"
	"net/netip"
	"syscall"
)

func firewallControl([]netip.Prefix) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error {
		return errors.New("WithFirewall needs Linux's socket filters")
	}
}
