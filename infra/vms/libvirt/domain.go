package libvirt

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/winconform/winconform/infra/vms"
)

// Namespace is the XML namespace of the provider's element in a domain's
// <metadata>: the run tags (vms.TagRun, vms.TagCreated, and vms.TagKeep
// when a user set it), the machine's name and, on a Docker network, the
// address the provider gave it.
const Namespace = "https://winconform.io/xmlns/vms/libvirt/1"

// metadataPrefix is the namespace's prefix in the domain XML.
const metadataPrefix = "winconform"

// metadata is the provider's element, as DomainGetMetadata returns it:
// libvirt keeps the element by its namespace, and answers it without one.
type metadata struct {
	XMLName xml.Name      `xml:"machine"`
	Name    string        `xml:"name"`
	Address string        `xml:"address,omitempty"`
	Tags    []metadataTag `xml:"tag"`
}

type metadataTag struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

func (m metadata) tag(name string) string {
	for _, t := range m.Tags {
		if t.Name == name {
			return t.Value
		}
	}
	return ""
}

// machine is the vms.Machine the metadata describes.
func (m metadata) machine(id string) (vms.Machine, error) {
	created, err := time.Parse(time.RFC3339, m.tag(vms.TagCreated))
	if err != nil {
		return vms.Machine{}, fmt.Errorf("domain %s (%s): its %s tag %q is not a time", m.Name, id, vms.TagCreated, m.tag(vms.TagCreated))
	}
	return vms.Machine{ID: id, Name: m.Name, RunID: m.tag(vms.TagRun), Created: created, Keep: vms.ParseKeep(m.tag(vms.TagKeep))}, nil
}

func parseMetadata(s string) (metadata, error) {
	var m metadata
	if err := xml.Unmarshal([]byte(s), &m); err != nil {
		return m, fmt.Errorf("the domain's winconform metadata: %w", err)
	}
	return m, nil
}

// domainSpec is everything a domain's XML says.
type domainSpec struct {
	spec    vms.Spec
	uuid    string
	accel   string // kvm or qemu
	overlay string // the overlay's path on the host
	console string // the serial log's path on the host
	// bridge (a Docker network's) or network (a libvirt one).
	bridge, network string
	mac             string
	address         netip.Prefix // on a bridge: the VM's address and its subnet's length
	gateway         netip.Addr
	kernel, initrd  string
	cmdline         string
	diskBus         string
	nicModel        string
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// guestCmdline is the kernel command line: the block's, the machine's name
// (winconform.name=, which the stand-in's init makes the host name) and,
// on a bridge, the address in the kernel's ip= form
// (Documentation/admin-guide/nfs/nfsroot.rst:
// ip=<client-ip>:<server-ip>:<gw-ip>:<netmask>:<hostname>:<device>:<autoconf>).
func (d domainSpec) guestCmdline() string {
	parts := []string{}
	if d.cmdline != "" {
		parts = append(parts, d.cmdline)
	}
	parts = append(parts, "winconform.name="+d.spec.Name)
	if d.address.IsValid() {
		gw := ""
		if d.gateway.IsValid() {
			gw = d.gateway.String()
		}
		parts = append(parts, fmt.Sprintf("ip=%s::%s:%s:%s:eth0:off", d.address.Addr(), gw, netmask(d.address.Bits()), d.spec.Name))
	}
	return strings.Join(parts, " ")
}

func netmask(bits int) string {
	m := uint32(0xffffffff) << (32 - bits)
	return netip.AddrFrom4([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}).String()
}

// xml renders the domain: transient (the provider creates it with
// DomainCreateXML, so it is gone once destroyed or once its QEMU exits),
// its disk the overlay, its serial console logged to a file, and its
// address, on a bridge, also in the SMBIOS OEM strings (type 11), where a
// Windows golden image's first-boot script reads it
// (Win32_ComputerSystem.OEMStringArray) as the stand-in reads the kernel
// command line.
func (d domainSpec) xml() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	tags := d.spec.Tags()
	p(`<domain type='%s'>`, d.accel)
	p(`  <name>%s</name>`, esc(d.spec.Name))
	p(`  <uuid>%s</uuid>`, d.uuid)
	p(`  <title>winconform run %s</title>`, esc(d.spec.RunID))
	p(`  <metadata>`)
	p(`    <%s:machine xmlns:%[1]s='%s'>`, metadataPrefix, Namespace)
	p(`      <%s:name>%s</%[1]s:name>`, metadataPrefix, esc(d.spec.Name))
	if d.address.IsValid() {
		p(`      <%s:address>%s</%[1]s:address>`, metadataPrefix, d.address.Addr())
	}
	for _, k := range []string{vms.TagRun, vms.TagCreated} {
		p(`      <%s:tag name='%s'>%s</%[1]s:tag>`, metadataPrefix, k, esc(tags[k]))
	}
	p(`    </%s:machine>`, metadataPrefix)
	p(`  </metadata>`)
	p(`  <memory unit='MiB'>%d</memory>`, d.spec.MemoryMiB)
	p(`  <vcpu>%d</vcpu>`, d.spec.CPUs)
	if d.address.IsValid() {
		p(`  <sysinfo type='smbios'>`)
		p(`    <oemStrings>`)
		p(`      <entry>winconform-name=%s</entry>`, esc(d.spec.Name))
		p(`      <entry>winconform-address=%s</entry>`, d.address)
		if d.gateway.IsValid() {
			p(`      <entry>winconform-gateway=%s</entry>`, d.gateway)
		}
		p(`    </oemStrings>`)
		p(`  </sysinfo>`)
	}
	p(`  <os>`)
	p(`    <type arch='x86_64'>hvm</type>`)
	if d.kernel != "" {
		p(`    <kernel>%s</kernel>`, esc(d.kernel))
		if d.initrd != "" {
			p(`    <initrd>%s</initrd>`, esc(d.initrd))
		}
		p(`    <cmdline>%s</cmdline>`, esc(d.guestCmdline()))
	}
	p(`    <boot dev='hd'/>`)
	if d.address.IsValid() {
		p(`    <smbios mode='sysinfo'/>`)
	}
	p(`  </os>`)
	p(`  <features><acpi/><apic/></features>`)
	if d.accel == "kvm" {
		p(`  <cpu mode='host-passthrough'/>`)
	}
	// Windows keeps the hardware clock in local time unless told otherwise;
	// the stand-in's kernel in UTC.
	if d.kernel != "" {
		p(`  <clock offset='utc'/>`)
	} else {
		p(`  <clock offset='localtime'/>`)
	}
	p(`  <on_poweroff>destroy</on_poweroff>`)
	p(`  <on_reboot>restart</on_reboot>`)
	p(`  <on_crash>destroy</on_crash>`)
	p(`  <devices>`)
	target := map[string]string{"virtio": "vda", "sata": "sda", "scsi": "sda", "ide": "hda"}[d.diskBus]
	p(`    <disk type='file' device='disk'>`)
	p(`      <driver name='qemu' type='qcow2'/>`)
	p(`      <source file='%s'/>`, esc(d.overlay))
	p(`      <target dev='%s' bus='%s'/>`, target, d.diskBus)
	p(`    </disk>`)
	if d.bridge != "" {
		p(`    <interface type='bridge'>`)
		p(`      <source bridge='%s'/>`, esc(d.bridge))
	} else {
		p(`    <interface type='network'>`)
		p(`      <source network='%s'/>`, esc(d.network))
	}
	if d.mac != "" {
		p(`      <mac address='%s'/>`, d.mac)
	}
	p(`      <model type='%s'/>`, d.nicModel)
	p(`    </interface>`)
	p(`    <serial type='pty'>`)
	p(`      <log file='%s' append='off'/>`, esc(d.console))
	p(`      <target port='0'/>`)
	p(`    </serial>`)
	p(`    <console type='pty'><target type='serial' port='0'/></console>`)
	p(`    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>`)
	p(`    <memballoon model='none'/>`)
	p(`  </devices>`)
	p(`</domain>`)
	return b.String()
}

// macFor is the MAC address of the VM with addr on a bridge: QEMU's
// locally administered prefix 52:54:00 and the address's last three bytes,
// so that it is as unique on the bridge as the address.
func macFor(addr netip.Addr) string {
	a := addr.As4()
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", a[1], a[2], a[3])
}
