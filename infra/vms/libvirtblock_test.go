package vms_test

import (
	"testing"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms/libvirt"
	"github.com/winconform/winconform/testing/configtest"
)

// The libvirt provider's block, as the VM file loads it (here: libvirt's
// own tests start VMs).
const libvirtHead = `provider: libvirt
image: /var/lib/libvirt/images/win2022.qcow2
count: 1
machine:
  user: Administrator
  passwordFrom: {env: PW}
`

func parseLibvirt(block string) (*config.Machines, error) {
	return config.Parse[config.Machines]("vms.yaml", []byte(libvirtHead+block), func(string) (string, bool) { return "secret", true })
}

func TestLibvirtBlockDefaults(t *testing.T) {
	f, err := parseLibvirt("")
	if err != nil {
		t.Fatal(err)
	}
	want := libvirt.Settings{Network: libvirt.DefaultNetwork, Pool: libvirt.DefaultPool, PoolPath: libvirt.DefaultPoolPath, Accel: "auto", DiskBus: "virtio", NICModel: "virtio"}
	if s := *f.Block.(*libvirt.Settings); s != want {
		t.Errorf("settings = %+v, want %+v", s, want)
	}
	f, err = parseLibvirt("libvirt: {dockerNetwork: kind, accel: qemu, kernel: k.vmlinuz, initrd: k.initrd, cmdline: console=ttyS0, diskBus: sata, nicModel: e1000e}\n")
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Block.(*libvirt.Settings); s.Network != "" || s.DockerNetwork != "kind" || s.Accel != "qemu" || s.Kernel != "k.vmlinuz" || s.DiskBus != "sata" || s.NICModel != "e1000e" {
		t.Errorf("settings = %+v", s)
	}
}

// Each mistake in the libvirt block is refused with its field and a fix,
// before any machine work.
func TestLibvirtBlockRefuses(t *testing.T) {
	for _, c := range []struct{ block, field, says string }{
		{"libvirt: {network: default, dockerNetwork: kind}\n", "libvirt.dockerNetwork", "is set with network"},
		{"libvirt: {addresses: 172.18.255.240/28}\n", "libvirt.addresses", "only for dockerNetwork"},
		{"libvirt: {dockerNetwork: kind, addresses: 172.18.255.241/28}\n", "libvirt.addresses", "host bits"},
		{"libvirt: {dockerNetwork: kind, addresses: lots}\n", "libvirt.addresses", "neither a range nor a CIDR"},
		{"libvirt: {poolPath: images}\n", "libvirt.poolPath", "not an absolute path"},
		{"libvirt: {accel: hvf}\n", "libvirt.accel", `"hvf" is not one of auto, kvm or qemu`},
		{"libvirt: {diskBus: nvme}\n", "libvirt.diskBus", "is not one of virtio"},
		{"libvirt: {nicModel: vmxnet3}\n", "libvirt.nicModel", "is not one of virtio"},
		{"libvirt: {initrd: k.initrd}\n", "libvirt.kernel", "is missing"},
		{"libvirt: {netwrok: default}\n", "libvirt.netwrok", `did you mean "network"?`},
		{"libvirt: {password: hunter2}\n", "libvirt.password", "inline secret is refused"},
		{"libvirt: [default]\n", "libvirt", "not a mapping"},
		{"connection: {user: root}\n", "connection.user", "is not used by libvirt"},
	} {
		t.Run(c.block, func(t *testing.T) {
			_, err := parseLibvirt(c.block)
			configtest.Refused(t, err, c.field, c.says, "hunter2")
		})
	}
}
