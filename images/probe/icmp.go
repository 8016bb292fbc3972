package main

import (
	"context"
	"net"
)

// checkICMP sends one ICMP echo request to the target's IPv4 address and
// succeeds when the matching reply arrives. When the OS or our privileges
// forbid sending ICMP, the error's class is unsupported.
func checkICMP(ctx context.Context, t target) (*detail, error) {
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", t.host)
	if err != nil {
		return &detail{}, err
	}
	ip := ips[0].To4()
	det := &detail{Remote: ip.String()}
	return det, echoICMP(ctx, ip, newNonce())
}
