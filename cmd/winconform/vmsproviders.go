package main

// The machine providers `winconform vms` knows: each registers itself
// (vms.Register) when imported. A provider package adds its line here.
import (
	_ "github.com/winconform/winconform/infra/vms/azure"
	_ "github.com/winconform/winconform/infra/vms/hyperv"
	_ "github.com/winconform/winconform/infra/vms/libvirt"
	_ "github.com/winconform/winconform/infra/vms/static"
	_ "github.com/winconform/winconform/infra/vms/vsphere"
)
