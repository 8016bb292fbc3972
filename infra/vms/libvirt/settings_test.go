package libvirt

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/configtest"
)

const fileHead = `provider: libvirt
image: /var/lib/libvirt/images/win2022.qcow2
count: 1
machine:
  user: Administrator
  passwordFrom: {env: PW}
`

// TestOpenBadEndpoint: a URI that is not one, and a libvirtd that is not
// there, fail Open naming connection.endpoint, within the dial timeout.
func TestOpenBadEndpoint(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ep := range []string{"not a uri", "qemu:///system?socket=/nonexistent/libvirt-sock"} {
		start := time.Now()
		f, err := config.Parse[config.Machines]("vms.yaml", []byte(fileHead+"connection: {endpoint: '"+ep+"'}\n"), func(string) (string, bool) { return "x", true })
		if err != nil {
			t.Fatal(err)
		}
		_, err = vms.Open(ctx, f)
		configtest.Refused(t, err, "connection.endpoint", "")
		if d := time.Since(start); d > dialTimeout+5*time.Second {
			t.Errorf("Open(%q) took %v", ep, d)
		}
	}
}

func TestVolumeNames(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, vn := range []volumeName{
		{runID: "nightly-42", created: created, uuid: newUUID(), name: "win-nightly-42-1", address: "172.18.255.241"},
		{runID: "r", created: created, uuid: newUUID(), name: "win-r-2"},
	} {
		for _, ext := range []string{overlayExt, consoleExt} {
			got, gotExt, ok := parseVolume(vn.base() + ext)
			if !ok || got != vn || gotExt != ext {
				t.Errorf("parseVolume(%s) = %+v %s %v, want %+v %s", vn.base()+ext, got, gotExt, ok, vn, ext)
			}
		}
	}
	for _, s := range []string{"win2022.qcow2", "standin-abc.qcow2", "winconform-ip_172.18.255.241", "winconform_r_1_notauuid_n_dhcp.qcow2",
		"winconform_r_x_" + newUUID() + "_n_dhcp.qcow2", "winconform_r_1_" + newUUID() + "_n_dhcp.img"} {
		if _, _, ok := parseVolume(s); ok {
			t.Errorf("parseVolume(%s) took a volume the provider did not make", s)
		}
	}
	u := newUUID()
	b, err := parseUUID(u)
	if err != nil || formatUUID(b) != u {
		t.Errorf("UUID %s round-trips as %s (%v)", u, formatUUID(b), err)
	}
}

func network(t *testing.T, subnet, ipRange string, containers map[string]string) dockerBridge {
	t.Helper()
	n := dockerBridge{Bridge: "br-test"}
	n.Name = "kind"
	n.Subnet = netip.MustParsePrefix(subnet)
	n.Gateway = n.Subnet.Addr().Next()
	if ipRange != "" {
		n.IPRange = netip.MustParsePrefix(ipRange)
	}
	n.Containers = map[string]netip.Addr{}
	for k, v := range containers {
		n.Containers[k] = netip.MustParseAddr(v)
	}
	return n
}

func TestVMBlock(t *testing.T) {
	n := network(t, "172.18.0.0/16", "172.18.0.0/17", map[string]string{"kind-control-plane": "172.18.0.2"})
	b, err := vmBlock(n, "")
	if err != nil || b.String() != "172.18.255.240-172.18.255.254" {
		t.Errorf("the default block = %v, %v; want 172.18.255.240-172.18.255.254 (the top /28 without the broadcast address)", b, err)
	}
	if _, err := vmBlock(n, "172.18.200.0/28"); err != nil {
		t.Errorf("a configured block outside the range: %v", err)
	}
	for _, c := range []struct {
		n          dockerBridge
		configured string
		says       string
	}{
		{network(t, "172.18.0.0/16", "", nil), "", "no ip-range"},
		{n, "172.18.1.0/28", "overlaps 172.18.0.0/17"},
		{n, "172.19.0.0/28", "outside"},
		{network(t, "172.18.0.0/16", "172.18.0.0/17", map[string]string{"stray": "172.18.255.245"}), "", "stray has 172.18.255.245"},
		{network(t, "172.18.0.0/27", "172.18.0.0/28", nil), "", "too small"},
	} {
		if _, err := vmBlock(c.n, c.configured); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("vmBlock(%s, %q) = %v, want an error saying %q", c.n.Subnet, c.configured, err, c.says)
		}
	}
}

// TestVMBlockNeverMetalLBs: MetalLB's default pool (a /28 of the upper half
// placed by the control plane's address) is never the VM block, whatever
// the control plane's address, on networks the size kind's are.
func TestVMBlockNeverMetalLBs(t *testing.T) {
	for _, subnet := range []string{"172.18.0.0/16", "10.89.0.0/24", "192.168.96.0/20"} {
		n := network(t, subnet, "", nil)
		n.IPRange = lowerHalf(n.Subnet)
		block, err := vmBlock(n, "")
		if err != nil {
			t.Fatal(err)
		}
		for a := n.Subnet.Addr().Next().Next(); n.IPRange.Contains(a); a = a.Next() {
			pool, err := metallb.DefaultPool(n.Network, a)
			if err != nil {
				t.Fatalf("%s, control plane %s: %v", subnet, a, err)
			}
			if !pool.Last.Less(block.First) && !block.Last.Less(pool.First) {
				t.Fatalf("%s, control plane %s: MetalLB's pool %s overlaps the VM block %s", subnet, a, pool, block)
			}
		}
	}
}

func TestParseDockerNetwork(t *testing.T) {
	out := []byte(`[{"Name":"kind","Id":"937411d63a1c15f0c9ae12f04b43606f80c3f8fcc75ee76f27fbefee1112ead2","Driver":"bridge",
"IPAM":{"Config":[{"Subnet":"172.18.0.0/16","Gateway":"172.18.0.1","IPRange":"172.18.0.0/17"},{"Subnet":"fc00:f853:ccd:e793::/64"}]},
"Options":{"com.docker.network.bridge.enable_ip_masquerade":"true"},"Containers":{}}]`)
	n, err := parseDockerNetwork(out)
	if err != nil || n.Bridge != "br-937411d63a1c" || n.IPRange.String() != "172.18.0.0/17" || n.Gateway.String() != "172.18.0.1" {
		t.Errorf("parseDockerNetwork = %+v, %v; want bridge br-937411d63a1c, range 172.18.0.0/17, gateway 172.18.0.1", n, err)
	}
	named := []byte(`[{"Name":"lab","Id":"0123456789abcdef","Driver":"bridge","IPAM":{"Config":[{"Subnet":"10.1.0.0/16","IPRange":"10.1.0.0/17"}]},
"Options":{"com.docker.network.bridge.name":"lab0"}}]`)
	if n, err := parseDockerNetwork(named); err != nil || n.Bridge != "lab0" {
		t.Errorf("a network with its own bridge name: %+v, %v; want lab0", n, err)
	}
	overlay := []byte(`[{"Name":"swarm","Id":"0123456789abcdef","Driver":"overlay","IPAM":{"Config":[{"Subnet":"10.1.0.0/16"}]}}]`)
	if _, err := parseDockerNetwork(overlay); err == nil || !strings.Contains(err.Error(), "not a bridge") {
		t.Errorf("an overlay network: %v, want an error saying it is not a bridge", err)
	}
}

// TestDomainXML: the domain carries the run tags in the provider's
// metadata namespace (what List reads back), and on a bridge the address in
// the kernel's ip= form and in the SMBIOS OEM strings.
func TestDomainXML(t *testing.T) {
	spec := vms.Spec{Name: "win-r-1", RunID: "r", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CPUs: 1, MemoryMiB: 256}
	d := domainSpec{spec: spec, uuid: newUUID(), accel: "qemu", overlay: "/p/o.qcow2", console: "/p/o.log", bridge: "br-x",
		mac: macFor(netip.MustParseAddr("172.18.255.241")), address: netip.MustParsePrefix("172.18.255.241/16"),
		gateway: netip.MustParseAddr("172.18.0.1"), kernel: "/p/k", initrd: "/p/i", cmdline: "console=ttyS0", diskBus: "virtio", nicModel: "virtio"}
	x := d.xml()
	for _, want := range []string{
		"<domain type='qemu'>", "xmlns:winconform='" + Namespace + "'",
		"<winconform:tag name='winconform-run'>r</winconform:tag>", "<winconform:tag name='winconform-created'>2026-01-02T03:04:05Z</winconform:tag>",
		"<winconform:address>172.18.255.241</winconform:address>",
		"<cmdline>console=ttyS0 winconform.name=win-r-1 ip=172.18.255.241::172.18.0.1:255.255.0.0:win-r-1:eth0:off</cmdline>",
		"<entry>winconform-address=172.18.255.241/16</entry>", "<smbios mode='sysinfo'/>",
		"<source bridge='br-x'/>", "<mac address='52:54:00:12:ff:f1'/>", "<log file='/p/o.log' append='off'/>",
	} {
		if !strings.Contains(x, want) {
			t.Errorf("the domain XML has no %s:\n%s", want, x)
		}
	}
	md, err := parseMetadata(`<machine><name>win-r-1</name><address>172.18.255.241</address><tag name="winconform-run">r</tag>` +
		`<tag name="winconform-created">2026-01-02T03:04:05Z</tag><tag name="winconform-keep">true</tag></machine>`)
	if err != nil {
		t.Fatal(err)
	}
	m, err := md.machine("id")
	if err != nil || m.Name != "win-r-1" || m.RunID != "r" || !m.Created.Equal(spec.Created) || !m.Keep {
		t.Errorf("metadata reads as %+v, %v", m, err)
	}
}
