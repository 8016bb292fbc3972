package kind

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
)

// reserveNetwork makes kind's Docker network before kind does, when it
// does not exist yet, with an ip-range of the lower half of its subnet
// (docker.EnsureReservedNetwork): kind's nodes take their addresses from
// there, and the upper half is left to MetalLB's pool and to the VMs the
// libvirt provider attaches to the network's bridge (infra/vms/libvirt),
// whose addresses Docker's allocator does not know. kind uses a network
// that exists as it is (sigs.k8s.io/kind
// pkg/cluster/internal/providers/docker/network.go, ensureNetwork), so the
// network is made with kind's own options: IP masquerading, the default
// bridge's MTU, and the IPv6 ULA subnet kind derives from the name (without
// IPv6 when the host has none, as kind retries). A network kind made
// earlier keeps its shape: Docker cannot add a range to it (the libvirt
// provider then says how to make it anew).
func (c *Cluster) reserveNetwork(ctx context.Context) error {
	name := dockerNetworkName()
	if _, ok, err := c.dockerNetwork(ctx); err != nil || ok {
		return err
	}
	opts := []string{"-o", "com.docker.network.bridge.enable_ip_masquerade=true"}
	if out, err := c.docker.Output(ctx, nil, "network", "inspect", "bridge", "-f", `{{ index .Options "com.docker.network.driver.mtu" }}`); err == nil {
		if mtu := strings.TrimSpace(string(out)); mtu != "" && mtu != "<no value>" {
			opts = append(opts, "-o", "com.docker.network.driver.mtu="+mtu)
		}
	}
	if _, err := c.docker.EnsureReservedNetwork(ctx, name, append(opts, "--ipv6", "--subnet", kindULASubnet(name))...); err == nil {
		return nil
	}
	if _, err := c.docker.EnsureReservedNetwork(ctx, name, opts...); err != nil {
		return fmt.Errorf("making kind's Docker network %s with a range for the nodes: %w", name, err)
	}
	return nil
}

// kindULASubnet is the IPv6 subnet kind gives a network of that name on
// its first attempt: fc00: and bytes 2 to 7 of the SHA-1 of the name
// followed by the attempt (0) as a little-endian int32, a /64.
func kindULASubnet(name string) string {
	h := sha1.New()
	h.Write([]byte(name))
	_ = binary.Write(h, binary.LittleEndian, int32(0))
	sum := h.Sum(nil)
	ip := make(net.IP, 16)
	ip[0] = 0xfc
	copy(ip[2:8], sum[2:8])
	return (&net.IPNet{IP: ip, Mask: net.CIDRMask(64, 128)}).String()
}
