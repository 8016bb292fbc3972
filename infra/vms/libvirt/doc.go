// Package libvirt is the VM provider of a libvirt host (KVM, or QEMU's TCG
// where there is no usable KVM), through libvirt's RPC protocol in pure Go
// (github.com/digitalocean/go-libvirt): qemu:///system, qemu+ssh://,
// qemu+tcp://.
//
// Each machine is a transient domain (DomainCreateXML: it is gone once
// destroyed, or once its QEMU exits) booting a qcow2 overlay of the golden
// image, made in a directory storage pool the provider owns (made when the
// host has none). The run tags (vms.TagRun, vms.TagCreated, and
// vms.TagKeep when a user sets it) are in the domain's <metadata>, in the
// provider's Namespace; the pool's files carry the run, the creation time,
// the domain's UUID and the machine's name in their names, so that List
// also returns an overlay whose domain is gone, and Delete removes it.
//
// A VM attaches to a libvirt network (NAT with libvirt's DHCP: the
// address comes from its lease, else the QEMU guest agent), or to a Docker
// network's bridge (kind's): then the provider gives each VM a static
// address from a block of the network that Docker never hands a container
// (the network has an ip-range that leaves it out, see
// docker.EnsureReservedNetwork), held by a volume of the pool named after
// it, and passes it to the guest on the kernel command line (ip=) and in
// the SMBIOS OEM strings.
//
// The serial console is logged to a volume of the pool, which ConsoleLog
// reads through libvirt. Import uploads a local file (a golden image, a
// kernel) into the pool.
//
// The stand-in golden image for tests and benchmarks is built by the
// standin package.
package libvirt
