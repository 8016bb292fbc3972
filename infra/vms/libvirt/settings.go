package libvirt

import (
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/vms"
)

// Settings is the VM file's libvirt block.
type Settings struct {
	// Network is the libvirt network the VMs attach to (NAT with DHCP:
	// libvirt's "default"); Addresses then come from its DHCP leases.
	// Empty when DockerNetwork is set.
	Network string `yaml:"network"`
	// DockerNetwork is a Docker network (kind's, "kind") whose bridge the
	// VMs attach to, sharing the kind nodes' L2. The provider gives each VM
	// a static address from Addresses.
	DockerNetwork string `yaml:"dockerNetwork"`
	// Addresses is the block of DockerNetwork's subnet the provider hands
	// VMs (a range or a CIDR); empty: the top /28 of the subnet, without
	// its broadcast address (see vmBlock).
	Addresses string `yaml:"addresses"`
	// Pool is the storage pool of the overlays, the console logs and the
	// imported images; it is made as a directory pool at PoolPath when
	// the host has none of that name.
	Pool     string `yaml:"pool"`
	PoolPath string `yaml:"poolPath"`
	// Accel is the domain type: kvm, qemu (TCG: no hardware
	// virtualization, slow but works anywhere) or auto (kvm when the host
	// offers it).
	Accel string `yaml:"accel"`
	// Kernel, Initrd and Cmdline boot the VM's kernel directly (libvirt's
	// <kernel>, <initrd> and <cmdline>): for stand-in images. Each file is
	// a path on the libvirt host or a volume of Pool. Empty: the VM boots
	// from its disk, as a Windows golden image does.
	Kernel  string `yaml:"kernel"`
	Initrd  string `yaml:"initrd"`
	Cmdline string `yaml:"cmdline"`
	// DiskBus is the disk's bus (virtio, sata); NICModel the network
	// card's model (virtio, e1000e). A Windows image without the virtio
	// drivers needs sata and e1000e.
	DiskBus  string `yaml:"diskBus"`
	NICModel string `yaml:"nicModel"`
}

// The settings' defaults.
const (
	DefaultEndpoint = "qemu:///system"
	DefaultNetwork  = "default"
	DefaultPool     = "winconform"
	DefaultPoolPath = "/var/lib/libvirt/images/winconform"
)

// Check gives the block its defaults and returns its problems.
func (s *Settings) Check(_ *vms.File, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	bad := func(key, msg, fix string) { errs = append(errs, config.Invalid(p.Child(key), msg, fix)) }
	switch {
	case s.Network != "" && s.DockerNetwork != "":
		bad("dockerNetwork", "is set with network: a VM attaches to one of them",
			"keep dockerNetwork (the kind nodes' Docker network) or network (a libvirt network), not both")
	case s.DockerNetwork == "" && s.Network == "":
		s.Network = DefaultNetwork
	}
	if s.Addresses != "" {
		if s.DockerNetwork == "" {
			bad("addresses", "is only for dockerNetwork: a libvirt network's DHCP hands out the addresses", "remove addresses, or set dockerNetwork")
		} else if _, err := metallb.ParsePool(s.Addresses); err != nil {
			bad("addresses", err.Error(), "write a block of the Docker network such as 172.18.255.240/28")
		}
	}
	if s.Pool == "" {
		s.Pool = DefaultPool
	}
	if s.PoolPath == "" {
		s.PoolPath = DefaultPoolPath
	} else if !path.IsAbs(s.PoolPath) {
		bad("poolPath", config.Quote(s.PoolPath)+" is not an absolute path", "write the pool's directory on the libvirt host, such as "+DefaultPoolPath)
	}
	if s.Accel == "" {
		s.Accel = "auto"
	}
	for _, f := range []struct {
		key  string
		v    *string
		want []string
	}{{"accel", &s.Accel, []string{"auto", "kvm", "qemu"}}, {"diskBus", &s.DiskBus, []string{"virtio", "sata", "scsi", "ide"}}, {"nicModel", &s.NICModel, []string{"virtio", "e1000e", "e1000", "rtl8139"}}} {
		if *f.v == "" {
			*f.v = f.want[0]
		}
		if e := config.OneOf(p.Child(f.key), *f.v, f.want); e != nil {
			errs = append(errs, e)
		}
	}
	if s.Kernel == "" && (s.Initrd != "" || s.Cmdline != "") {
		bad("kernel", "is missing, but initrd or cmdline is set", "set kernel (a path on the libvirt host or a volume of the pool), or remove initrd and cmdline")
	}
	return errs
}
