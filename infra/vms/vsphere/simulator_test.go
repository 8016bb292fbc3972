package vsphere_test

// The vCenter the tests talk to is govmomi's in-process simulator (vcsim),
// VPX model: datacenter DC0; cluster DC0_C0 (3 hosts) and standalone host
// DC0_H0, hence two resource pools; datastore LocalDS_0; networks
// "VM Network" and the distributed port group DC0_DVPG0; four powered-on
// VMs. The provider reaches it as a user would: a VM file, config.Parse,
// vms.Open, over HTTPS with a user and password.
//
// What vcsim does not model, and vCenter does, is added here from
// vCenter's documentation and the projects that drive it:
//
//   - The golden image. image-builder's Windows OVA
//     (kubernetes-sigs/image-builder images/capi/packer/ova/packer-windows.json)
//     is built, sysprepped (packer/ova/windows/sysprep.ps1: /generalize
//     /oobe /shutdown) and, imported, marked as a template; its Windows
//     build takes no snapshot (the Linux builds set create_snapshot), so a
//     user takes one before marking it a template. makeTemplate does that
//     to one of the model's VMs.
//   - Linked clones. vcsim ignores the clone spec's snapshot and
//     diskMoveType and copies the disks. vCenter's createNewChildDiskBacking
//     makes each disk of the clone a child of the source's disk, and is
//     "only valid when cloning from a snapshot" (vSphere API reference,
//     vim.vm.RelocateSpec.DiskMoveOptions); cluster-api-provider-vsphere
//     (pkg/services/govmomi/vcenter/clone.go) makes its linked clones that
//     way, from the template's current snapshot unless one is named. The
//     template type below refuses a linked clone without a snapshot of the
//     source, and gives the clone's disks the template's disks as parents,
//     so that the test sees a linked clone as vCenter shows one.
//   - A clone task that fails (a datastore full, say) after the call was
//     accepted: the template type fails the task with the fault it is
//     given. Faults of the call itself (a missing privilege) and of the
//     power-on come from vcsim's own fault injection.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

const (
	vcUser     = "winconform@vsphere.local"
	vcPassword = "vc-s3cret-pw"
	winPW      = "w1n-s3cret-pw"
	tplName    = "windows-2022-kube-v1.34.4"
)

// vcenter is one simulated vCenter, with its template.
type vcenter struct {
	t   *testing.T
	ctx context.Context
	sim *simulator.Context
	// c is an administrator's own session, to look and to drive.
	c *vim25.Client
	// host is the endpoint, host:port.
	host string
	tpl  *template
	// snapshots are the template's, by name.
	snapshots map[string]types.ManagedObjectReference
}

// withVCenter runs f against a fresh simulated vCenter (simulator.Model.Run)
// that takes only vcUser and vcPassword.
func withVCenter(t *testing.T, f func(v *vcenter)) {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(vcUser, vcPassword)}
	err := m.Run(func(ctx context.Context, c *vim25.Client) error {
		v := &vcenter{t: t, ctx: t.Context(), sim: ctx.(*simulator.Context), c: c, host: c.URL().Host}
		v.makeTemplate()
		f(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (v *vcenter) must(err error) {
	v.t.Helper()
	if err != nil {
		v.t.Fatal(err)
	}
}

func (v *vcenter) wait(task *object.Task, err error) {
	v.t.Helper()
	v.must(err)
	v.must(task.Wait(v.ctx))
}

// makeTemplate makes the model's VM DC0_C0_RP0_VM0 the golden image as a
// user has it: powered off, renamed, snapshots base then golden (golden is
// current), marked as a template.
func (v *vcenter) makeTemplate() {
	vm := v.find("DC0_C0_RP0_VM0")
	v.wait(vm.PowerOff(v.ctx))
	v.wait(vm.Rename(v.ctx, tplName))
	for _, s := range []string{"base", "golden"} {
		v.wait(vm.CreateSnapshot(v.ctx, s, "", false, false))
	}
	v.must(vm.MarkAsTemplate(v.ctx))
	var o mo.VirtualMachine
	v.must(vm.Properties(v.ctx, vm.Reference(), []string{"snapshot"}, &o))
	v.snapshots = map[string]types.ManagedObjectReference{}
	var walk func([]types.VirtualMachineSnapshotTree)
	walk = func(l []types.VirtualMachineSnapshotTree) {
		for _, s := range l {
			v.snapshots[s.Name] = s.Snapshot
			walk(s.ChildSnapshotList)
		}
	}
	walk(o.Snapshot.RootSnapshotList)
	v.tpl = &template{VirtualMachine: v.sim.Map.Get(vm.Reference()).(*simulator.VirtualMachine)}
	v.sim.Map.Put(v.tpl)
}

// find returns the VM of that name.
func (v *vcenter) find(name string) *object.VirtualMachine {
	v.t.Helper()
	vm, err := find.NewFinder(v.c).VirtualMachine(v.ctx, "/DC0/vm/"+name)
	v.must(err)
	return vm
}

// exists reports whether the datacenter has a VM of that name.
func (v *vcenter) exists(name string) bool {
	v.t.Helper()
	_, err := find.NewFinder(v.c).VirtualMachine(v.ctx, "/DC0/vm/"+name)
	var nf *find.NotFoundError
	if errors.As(err, &nf) {
		return false
	}
	v.must(err)
	return true
}

// vm reads a VM's properties.
func (v *vcenter) vm(id string, props ...string) mo.VirtualMachine {
	v.t.Helper()
	var o mo.VirtualMachine
	v.must(property.DefaultCollector(v.c).RetrieveOne(v.ctx, types.ManagedObjectReference{Type: "VirtualMachine", Value: id}, props, &o))
	return o
}

// file is a VM file for this vCenter, its vsphere block's lines block.
func (v *vcenter) file(block string) string {
	return fmt.Sprintf(`provider: vsphere
connection:
  endpoint: %s
  user: %s
  credentials:
    password: {env: VSPHERE_PASSWORD}
image: %s
count: 2
cpus: 4
memory: 8Gi
machine:
  user: Administrator
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
vsphere:
%s`, v.host, vcUser, tplName, block)
}

// stdBlock places the machines in the cluster and skips the certificate
// check (vcsim's certificate is its own).
const stdBlock = "  cluster: DC0_C0\n  insecure: true\n"

func env(k string) (string, bool) {
	v, ok := map[string]string{"VSPHERE_PASSWORD": vcPassword, "WINDOWS_ADMIN_PASSWORD": winPW, "WRONG_PASSWORD": "not-the-pw"}[k]
	return v, ok
}

// parse loads a VM file.
func parse(t *testing.T, src string) *vms.File {
	t.Helper()
	f, err := config.Parse[config.Machines]("vms.yaml", []byte(src), env)
	if err != nil {
		t.Fatalf("the VM file:\n%v", err)
	}
	return f
}

// open opens the provider of a VM file with the block.
func (v *vcenter) open(block string) (*vms.File, vms.Provider, error) {
	f := parse(v.t, v.file(block))
	p, err := vms.Open(v.ctx, f)
	if err == nil {
		v.t.Cleanup(func() { _ = p.Close() })
	}
	return f, p, err
}

// provider opens the provider with the block, or fails the test.
func (v *vcenter) provider(block string) (*vms.File, vms.Provider) {
	v.t.Helper()
	f, p, err := v.open(block)
	v.must(err)
	return f, p
}

// spec is the n-th machine of a run, as the lifecycle asks for it.
func spec(f *vms.File, runID string, n int) vms.Spec {
	return vms.Spec{Name: vms.MachineName(f.NamePrefix, runID, n), RunID: runID, Created: time.Now().UTC().Truncate(time.Second),
		Image: f.Image, CPUs: f.CPUs, MemoryMiB: int(f.MemoryMiB)}
}

// guest sets what VMware Tools in the machine reports: its primary
// address and its NIC's addresses.
func (v *vcenter) guest(id, primary string, addrs ...string) {
	obj := v.sim.Map.Get(types.ManagedObjectReference{Type: "VirtualMachine", Value: id}).(*simulator.VirtualMachine)
	v.sim.WithLock(obj, func() {
		nics := slices.Clone(obj.Guest.Net)
		ip := &types.NetIpConfigInfo{}
		for _, a := range addrs {
			ip.IpAddress = append(ip.IpAddress, types.NetIpConfigInfoIpAddress{IpAddress: a})
		}
		nics[0].IpAddress, nics[0].IpConfig = addrs, ip
		v.sim.Update(obj, []types.PropertyChange{{Name: "guest.ipAddress", Val: primary}, {Name: "guest.net", Val: nics}})
	})
}

// template is the simulator's template VM with what vCenter does for
// clones that vcsim does not (see the top of this file).
type template struct {
	*simulator.VirtualMachine

	mu sync.Mutex
	// specs are the clone specs received.
	specs []types.VirtualMachineCloneSpec
	// fail, when set, fails the next clone task with it.
	fail types.BaseMethodFault
	// hold, when set, keeps the next clone task running until it is
	// closed.
	hold chan struct{}
}

func (tv *template) CloneVMTask(ctx *simulator.Context, req *types.CloneVM_Task) soap.HasFault {
	tv.mu.Lock()
	tv.specs = append(tv.specs, req.Spec)
	fail, hold := tv.fail, tv.hold
	tv.fail, tv.hold = nil, nil
	tv.mu.Unlock()
	linked := req.Spec.Location.DiskMoveType == string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking)
	if linked && (req.Spec.Snapshot == nil || !tv.hasSnapshot(*req.Spec.Snapshot)) {
		return &methods.CloneVM_TaskBody{Fault_: simulator.Fault("createNewChildDiskBacking is only valid when cloning from a snapshot of the source",
			&types.InvalidArgument{InvalidProperty: "spec.snapshot"})}
	}
	task := simulator.CreateTask(tv, "cloneVm", func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		if hold != nil {
			<-hold
		}
		if fail != nil {
			return nil, fail
		}
		body := tv.VirtualMachine.CloneVMTask(ctx, req).(*methods.CloneVM_TaskBody)
		if body.Fault_ != nil {
			return nil, body.Fault_.VimFault().(types.BaseMethodFault)
		}
		inner := ctx.Map.Get(body.Res.Returnval).(*simulator.Task)
		inner.Wait()
		if inner.Info.Error != nil {
			return nil, inner.Info.Error.Fault
		}
		ref := inner.Info.Result.(types.ManagedObjectReference)
		if linked {
			tv.childDisks(ctx, ref)
		}
		return ref, nil
	})
	return &methods.CloneVM_TaskBody{Res: &types.CloneVM_TaskResponse{Returnval: task.Run(ctx)}}
}

func (tv *template) hasSnapshot(ref types.ManagedObjectReference) bool {
	var found bool
	var walk func([]types.VirtualMachineSnapshotTree)
	walk = func(l []types.VirtualMachineSnapshotTree) {
		for _, s := range l {
			found = found || s.Snapshot == ref
			walk(s.ChildSnapshotList)
		}
	}
	if tv.Snapshot != nil {
		walk(tv.Snapshot.RootSnapshotList)
	}
	return found
}

// childDisks makes the clone's disks children of the template's.
func (tv *template) childDisks(ctx *simulator.Context, ref types.ManagedObjectReference) {
	var parents []types.VirtualDiskFlatVer2BackingInfo
	for _, d := range object.VirtualDeviceList(tv.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil)) {
		parents = append(parents, *d.GetVirtualDevice().Backing.(*types.VirtualDiskFlatVer2BackingInfo))
	}
	clone := ctx.Map.Get(ref).(*simulator.VirtualMachine)
	ctx.WithLock(clone, func() {
		devices := object.VirtualDeviceList(clone.Config.Hardware.Device)
		for i, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
			if i < len(parents) {
				p := parents[i]
				d.GetVirtualDevice().Backing.(*types.VirtualDiskFlatVer2BackingInfo).Parent = &p
			}
		}
		ctx.Update(clone, []types.PropertyChange{{Name: "config.hardware.device", Val: clone.Config.Hardware.Device}})
	})
}

// lastSpec is the last clone spec the template received.
func (tv *template) lastSpec(t *testing.T) types.VirtualMachineCloneSpec {
	t.Helper()
	tv.mu.Lock()
	defer tv.mu.Unlock()
	if len(tv.specs) == 0 {
		t.Fatal("the template was never cloned")
	}
	return tv.specs[len(tv.specs)-1]
}

// noSecret fails when err shows a password.
func noSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{vcPassword, winPW, "not-the-pw"} {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("the error shows a password: %v", err)
		}
	}
}
