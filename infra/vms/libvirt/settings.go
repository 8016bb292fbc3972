package libvirt

import (
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/vms"
)

// Settings is the VM file's libvirt block.
type Settings struct {
	// Network is the libvirt network the VMs attach to (NAT with DHCP:
	// libvirt's "default"); Addresses then come from its DHCP leases.
	// Empty when DockerNetwork is set.
	Network string
	// DockerNetwork is a Docker network (kind's, "kind") whose bridge the
	// VMs attach to, sharing the kind nodes' L2. The provider gives each VM
	// a static address from Addresses.
	DockerNetwork string
	// Addresses is the block of DockerNetwork's subnet the provider hands
	// VMs (a range or a CIDR); empty: the top /28 of the subnet, without
	// its broadcast address (see vmBlock).
	Addresses string
	// Pool is the storage pool of the overlays, the console logs and the
	// imported images; it is made as a directory pool at PoolPath when
	// the host has none of that name.
	Pool, PoolPath string
	// Accel is the domain type: kvm, qemu (TCG: no hardware
	// virtualization, slow but works anywhere) or auto (kvm when the host
	// offers it).
	Accel string
	// Kernel, Initrd and Cmdline boot the VM's kernel directly (libvirt's
	// <kernel>, <initrd> and <cmdline>): for stand-in images. Each file is
	// a path on the libvirt host or a volume of Pool. Empty: the VM boots
	// from its disk, as a Windows golden image does.
	Kernel, Initrd, Cmdline string
	// DiskBus is the disk's bus (virtio, sata); NICModel the network
	// card's model (virtio, e1000e). A Windows image without the virtio
	// drivers needs sata and e1000e.
	DiskBus, NICModel string
}

// The settings' defaults.
const (
	DefaultEndpoint = "qemu:///system"
	DefaultNetwork  = "default"
	DefaultPool     = "winconform"
	DefaultPoolPath = "/var/lib/libvirt/images/winconform"
)

type settingsDoc struct {
	Network       yaml.Node            `yaml:"network"`
	DockerNetwork yaml.Node            `yaml:"dockerNetwork"`
	Addresses     yaml.Node            `yaml:"addresses"`
	Pool          yaml.Node            `yaml:"pool"`
	PoolPath      yaml.Node            `yaml:"poolPath"`
	Accel         yaml.Node            `yaml:"accel"`
	Kernel        yaml.Node            `yaml:"kernel"`
	Initrd        yaml.Node            `yaml:"initrd"`
	Cmdline       yaml.Node            `yaml:"cmdline"`
	DiskBus       yaml.Node            `yaml:"diskBus"`
	NICModel      yaml.Node            `yaml:"nicModel"`
	Unknown       map[string]yaml.Node `yaml:",inline"`
}

// decodeSettings reads the libvirt block, reporting every problem through b.
func decodeSettings(b *vms.Block) any {
	var doc settingsDoc
	if !b.Decode(&doc, "write a mapping such as {dockerNetwork: kind} or {network: default}") {
		return nil
	}
	s := Settings{
		Network:       b.String("network", &doc.Network),
		DockerNetwork: b.String("dockerNetwork", &doc.DockerNetwork),
		Addresses:     b.String("addresses", &doc.Addresses),
		Pool:          b.String("pool", &doc.Pool),
		PoolPath:      b.String("poolPath", &doc.PoolPath),
		Accel:         b.String("accel", &doc.Accel),
		Kernel:        b.String("kernel", &doc.Kernel),
		Initrd:        b.String("initrd", &doc.Initrd),
		Cmdline:       b.String("cmdline", &doc.Cmdline),
		DiskBus:       b.String("diskBus", &doc.DiskBus),
		NICModel:      b.String("nicModel", &doc.NICModel),
	}
	switch {
	case s.Network != "" && s.DockerNetwork != "":
		b.Report("dockerNetwork", &doc.DockerNetwork, "is set with network: a VM attaches to one of them",
			"keep dockerNetwork (the kind nodes' Docker network) or network (a libvirt network), not both")
	case s.DockerNetwork == "" && s.Network == "":
		s.Network = DefaultNetwork
	}
	if s.Addresses != "" {
		if s.DockerNetwork == "" {
			b.Report("addresses", &doc.Addresses, "is only for dockerNetwork: a libvirt network's DHCP hands out the addresses",
				"remove addresses, or set dockerNetwork")
		} else if _, err := metallb.ParsePool(s.Addresses); err != nil {
			b.Report("addresses", &doc.Addresses, err.Error(), "write a block of the Docker network such as 172.18.255.240/28")
		}
	}
	if s.Pool == "" {
		s.Pool = DefaultPool
	}
	if s.PoolPath == "" {
		s.PoolPath = DefaultPoolPath
	} else if !path.IsAbs(s.PoolPath) {
		b.Report("poolPath", &doc.PoolPath, quote(s.PoolPath)+" is not an absolute path", "write the pool's directory on the libvirt host, such as "+DefaultPoolPath)
	}
	switch s.Accel {
	case "":
		s.Accel = "auto"
	case "auto", "kvm", "qemu":
	default:
		b.Report("accel", &doc.Accel, quote(s.Accel)+" is not a domain type", "write kvm, qemu (TCG, without hardware virtualization) or auto")
	}
	for _, f := range []struct {
		key  string
		n    *yaml.Node
		v    string
		want []string
	}{{"diskBus", &doc.DiskBus, s.DiskBus, []string{"virtio", "sata", "scsi", "ide"}}, {"nicModel", &doc.NICModel, s.NICModel, []string{"virtio", "e1000e", "e1000", "rtl8139"}}} {
		if f.v != "" && !contains(f.want, f.v) {
			b.Report(f.key, f.n, quote(f.v)+" is not one libvirt takes", "write "+strings.Join(f.want, ", "))
		}
	}
	if s.DiskBus == "" {
		s.DiskBus = "virtio"
	}
	if s.NICModel == "" {
		s.NICModel = "virtio"
	}
	switch {
	case s.Kernel == "" && (s.Initrd != "" || s.Cmdline != ""):
		b.Report("kernel", &doc.Kernel, "is missing, but initrd or cmdline is set", "set kernel (a path on the libvirt host or a volume of the pool), or remove initrd and cmdline")
	}
	return s
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
