package main

import (
	"net"
	"os"
)

// podIP returns $POD_IP when set, else the first IPv4 address of an up,
// non-loopback interface, preferring one that is not link-local
// (169.254.0.0/16, which Windows assigns to unconfigured adapters). It
// returns "" when there is none.
func podIP() string {
	if ip := os.Getenv("POD_IP"); ip != "" {
		return ip
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return ""
	}
	var linkLocal string
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			var ip net.IP
			switch a := a.(type) {
			case *net.IPNet:
				ip = a.IP
			case *net.IPAddr:
				ip = a.IP
			}
			ip4 := ip.To4()
			switch {
			case ip4 == nil || ip4.IsLoopback():
			case ip4.IsLinkLocalUnicast():
				if linkLocal == "" {
					linkLocal = ip4.String()
				}
			default:
				return ip4.String()
			}
		}
	}
	return linkLocal
}
