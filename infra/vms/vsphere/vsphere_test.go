package vsphere_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/winconform/winconform/infra/vms"
	_ "github.com/winconform/winconform/infra/vms/vsphere"
	"github.com/winconform/winconform/testing/vmstest"
)

func TestConformance(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		f, p := v.provider(stdBlock)
		vmstest.Conformance(t, p, spec(f, "conformance", 1))
	})
}

// A machine is a linked clone of the template's snapshot: its disks are
// children of the template's, it runs in the cluster with the VM file's
// CPUs and memory, powered on, tagged in extraConfig; Delete takes it and
// its files away and leaves the template and its disks.
func TestLinkedClone(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		f, p := v.provider(stdBlock)
		s := spec(f, "nightly-7", 1)
		m, err := p.Create(v.ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if m.ID == "" || m.Name != "win-nightly-7-1" || m.RunID != "nightly-7" {
			t.Errorf("Create returned %+v", m)
		}
		if cs := v.tpl.lastSpec(t); cs.Snapshot == nil || *cs.Snapshot != v.snapshots["golden"] {
			t.Errorf("cloned from snapshot %v, want the template's current one, golden (%v)", cs.Snapshot, v.snapshots["golden"])
		}

		tpl := v.vm(v.tpl.Self.Value, "config.hardware.device", "config.template")
		tplDisks := disks(tpl.Config.Hardware.Device)
		o := v.vm(m.ID, "name", "config", "resourcePool", "runtime.powerState", "datastore")
		got := disks(o.Config.Hardware.Device)
		if len(got) == 0 || len(got) != len(tplDisks) {
			t.Fatalf("the clone has %d disks, the template %d", len(got), len(tplDisks))
		}
		for i, d := range got {
			if d.Parent == nil || d.Parent.FileName != tplDisks[i].FileName {
				t.Errorf("the clone's disk %s has parent %+v, want the template's disk %s: not a linked clone", d.FileName, d.Parent, tplDisks[i].FileName)
			}
			if d.FileName == tplDisks[i].FileName {
				t.Errorf("the clone writes to the template's disk %s", d.FileName)
			}
		}
		tags := map[string]string{}
		for _, e := range o.Config.ExtraConfig {
			tags[e.GetOptionValue().Key], _ = e.GetOptionValue().Value.(string)
		}
		if tags["winconform.run"] != "nightly-7" || tags["winconform.created"] != s.Created.Format(time.RFC3339) {
			t.Errorf("extraConfig tags %v, want winconform.run=nightly-7 and winconform.created=%s", tags, s.Created.Format(time.RFC3339))
		}
		if _, keep := tags["winconform.keep"]; keep {
			t.Errorf("the clone carries winconform.keep: the harness never sets it")
		}
		if o.Config.Hardware.NumCPU != 4 || o.Config.Hardware.MemoryMB != 8192 {
			t.Errorf("the clone has %d CPUs and %d MB, want the VM file's 4 and 8192", o.Config.Hardware.NumCPU, o.Config.Hardware.MemoryMB)
		}
		pool, err := find.NewFinder(v.c).ResourcePool(v.ctx, "/DC0/host/DC0_C0/Resources")
		v.must(err)
		if o.ResourcePool == nil || *o.ResourcePool != pool.Reference() {
			t.Errorf("the clone runs in pool %v, want the cluster's %v", o.ResourcePool, pool.Reference())
		}
		if o.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("the clone is %s, want poweredOn", o.Runtime.PowerState)
		}

		// Delete powers it off and destroys it with its files.
		ds, err := find.NewFinder(v.c).Datastore(v.ctx, "/DC0/datastore/LocalDS_0")
		v.must(err)
		if len(o.Datastore) != 1 || o.Datastore[0] != ds.Reference() {
			t.Errorf("the clone is on datastores %v, want the template's LocalDS_0", o.Datastore)
		}
		vmx := datastorePath(t, o.Config.Files.VmPathName)
		if _, err := ds.Stat(v.ctx, vmx); err != nil {
			t.Fatalf("the clone's %s: %v", vmx, err)
		}
		if err := p.Delete(v.ctx, m.ID); err != nil {
			t.Fatal(err)
		}
		if v.exists(s.Name) {
			t.Errorf("%s is still there after Delete", s.Name)
		}
		if _, err := ds.Stat(v.ctx, vmx); err == nil {
			t.Errorf("the clone's %s is still on the datastore after Delete", vmx)
		}
		for _, d := range tplDisks {
			if _, err := ds.Stat(v.ctx, datastorePath(t, d.FileName)); err != nil {
				t.Errorf("the template's disk %s is gone after deleting its clone: %v", d.FileName, err)
			}
		}
		if tpl := v.vm(v.tpl.Self.Value, "config.template"); !tpl.Config.Template {
			t.Errorf("the template is no longer a template")
		}
		if err := p.Delete(v.ctx, m.ID); err != nil {
			t.Errorf("a second Delete: %v, want nil", err)
		}
	})
}

// vsphere.snapshot picks the snapshot; vsphere.network the port group of
// the clone's first NIC; vsphere.resourcePool (within the cluster),
// datastore and folder where it goes.
func TestCloneSettings(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		folder, err := object.NewFolder(v.c, v.folderRef()).CreateFolder(v.ctx, "winconform")
		v.must(err)
		root, err := find.NewFinder(v.c).ResourcePool(v.ctx, "/DC0/host/DC0_C0/Resources")
		v.must(err)
		pool, err := root.Create(v.ctx, "ci", types.DefaultResourceConfigSpec())
		v.must(err)
		f, p := v.provider(stdBlock + "  resourcePool: ci\n  snapshot: base\n  network: DC0_DVPG0\n  datastore: LocalDS_0\n  folder: winconform\n")
		m, err := p.Create(v.ctx, spec(f, "settings", 1))
		if err != nil {
			t.Fatal(err)
		}
		cs := v.tpl.lastSpec(t)
		if cs.Snapshot == nil || *cs.Snapshot != v.snapshots["base"] {
			t.Errorf("cloned from snapshot %v, want base (%v)", cs.Snapshot, v.snapshots["base"])
		}
		o := v.vm(m.ID, "network", "parent", "datastore", "resourcePool")
		if o.ResourcePool == nil || *o.ResourcePool != pool.Reference() {
			t.Errorf("the clone runs in pool %v, want ci (%v)", o.ResourcePool, pool.Reference())
		}
		pg, err := find.NewFinder(v.c).Network(v.ctx, "/DC0/network/DC0_DVPG0")
		v.must(err)
		if !slices.Contains(o.Network, pg.Reference()) {
			t.Errorf("the clone is on networks %v, want DC0_DVPG0 (%v)", o.Network, pg.Reference())
		}
		if o.Parent == nil || *o.Parent != folder.Reference() {
			t.Errorf("the clone is in %v, want folder winconform (%v)", o.Parent, folder.Reference())
		}
	})
}

func (v *vcenter) folderRef() types.ManagedObjectReference {
	dc, err := find.NewFinder(v.c).Datacenter(v.ctx, "DC0")
	v.must(err)
	folders, err := dc.Folders(v.ctx)
	v.must(err)
	return folders.VmFolder.Reference()
}

func disks(devices []types.BaseVirtualDevice) []*types.VirtualDiskFlatVer2BackingInfo {
	var out []*types.VirtualDiskFlatVer2BackingInfo
	for _, d := range object.VirtualDeviceList(devices).SelectByType((*types.VirtualDisk)(nil)) {
		out = append(out, d.GetVirtualDevice().Backing.(*types.VirtualDiskFlatVer2BackingInfo))
	}
	return out
}

// datastorePath is the path within its datastore of "[ds] path".
func datastorePath(t *testing.T, p string) string {
	t.Helper()
	var dp object.DatastorePath
	if !dp.FromString(p) {
		t.Fatalf("%q is not a datastore path", p)
	}
	return dp.Path
}

// Addresses are what VMware Tools reports, as it reports them: nothing
// before Tools runs; then, while DHCP has not answered, the link-local
// address Windows gives itself (APIPA: 169.254.0.0/16 until a DHCP server
// answers, learn.microsoft.com/windows/win32/api/iptypes/ns-iptypes-ip_per_adapter_info_w2ksp1;
// each clone of image-builder's sysprepped image boots through specialize
// and OOBE); then the leased address. The provider reports each as it is:
// filtering and settling are the lifecycle's.
func TestAddressesAsToolsReportThem(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		f, p := v.provider(stdBlock)
		m, err := p.Create(v.ctx, spec(f, "addr", 1))
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name    string
			primary string
			nic     []string
			want    []string
		}{
			{"Tools not running yet", "", nil, nil},
			{"link-local before DHCP", "169.254.44.9", []string{"fe80::4c1d:2aff:fe11:9", "169.254.44.9"}, []string{"169.254.44.9", "fe80::4c1d:2aff:fe11:9"}},
			{"leased", "10.20.0.31", []string{"fe80::4c1d:2aff:fe11:9", "10.20.0.31"}, []string{"10.20.0.31", "fe80::4c1d:2aff:fe11:9"}},
			{"leased again after sysprep's reboot", "10.20.0.32", []string{"10.20.0.32"}, []string{"10.20.0.32"}},
		}
		for _, st := range steps {
			v.guest(m.ID, st.primary, st.nic...)
			got, err := p.Addresses(v.ctx, m.ID)
			if err != nil || !slices.Equal(got, st.want) {
				t.Errorf("%s: Addresses = %q, %v, want %q", st.name, got, err, st.want)
			}
		}
		v.must(p.Delete(v.ctx, m.ID))
		if _, err := p.Addresses(v.ctx, m.ID); !errors.Is(err, vms.ErrNotFound) {
			t.Errorf("Addresses of a deleted machine: %v, want vms.ErrNotFound", err)
		}
	})
}

// A clone that fails is a clear error, naming the machine, the template
// and the vCenter's fault, and leaves nothing behind.
func TestFailingClone(t *testing.T) {
	tests := []struct {
		name  string
		set   func(v *vcenter, machine string)
		wants []string
	}{
		{"the clone task fails", func(v *vcenter, _ string) {
			v.tpl.mu.Lock()
			v.tpl.fail = &types.NoDiskSpace{FileFault: types.FileFault{File: "[LocalDS_0] win-fail-1/win-fail-1.vmdk"}, Datastore: "LocalDS_0"}
			v.tpl.mu.Unlock()
		}, []string{"cloning template " + tplName + " into win-fail-1 failed", "NoDiskSpace"}},
		{"the vCenter refuses the clone", func(v *vcenter, _ string) {
			simulator.ServiceFromContext(v.sim).AddFaultRule(&simulator.FaultInjectionRule{MethodName: "CloneVM_Task", ObjectType: "*", ObjectName: "*",
				Probability: 1, Enabled: true, FaultType: simulator.FaultTypeCustom, Message: "Permission to perform this operation was denied.",
				Fault: &types.NoPermission{PrivilegeId: "VirtualMachine.Provisioning.DeployTemplate"}})
		}, []string{"refused to clone template " + tplName + " into win-fail-1", "NoPermission"}},
		{"the clone does not power on", func(v *vcenter, machine string) {
			simulator.ServiceFromContext(v.sim).AddFaultRule(&simulator.FaultInjectionRule{MethodName: "PowerOnVM_Task", ObjectType: "*", ObjectName: machine,
				Probability: 1, Enabled: true, FaultType: simulator.FaultTypeInsufficientResourcesFault, Message: "Insufficient resources."})
		}, []string{"powering on win-fail-1 failed (the clone is deleted)", "Insufficient resources"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withVCenter(t, func(v *vcenter) {
				f, p := v.provider(stdBlock)
				s := spec(f, "fail", 1)
				tc.set(v, s.Name)
				_, err := p.Create(v.ctx, s)
				if err == nil {
					t.Fatal("Create succeeded")
				}
				t.Logf("Create: %v", err)
				for _, w := range tc.wants {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Create = %v, want it to say %q", err, w)
					}
				}
				noSecret(t, err)
				simulator.ServiceFromContext(v.sim).ClearFaultRules()
				if v.exists(s.Name) {
					t.Errorf("%s is left behind", s.Name)
				}
				if l, err := p.List(v.ctx); err != nil || len(l) != 0 {
					t.Errorf("List = %+v, %v, want nothing", l, err)
				}
			})
		})
	}
}

// The clone carries its tags from the request that makes it: a clone the
// vCenter finishes after the harness gave up on it (killed, or its
// context ended) is found by a later List, with its run, and swept.
func TestCloneFinishedAfterTheHarnessGaveUp(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		f, p := v.provider(stdBlock)
		hold := make(chan struct{})
		v.tpl.mu.Lock()
		v.tpl.hold = hold
		v.tpl.mu.Unlock()
		ctx, cancel := context.WithTimeout(v.ctx, 300*time.Millisecond)
		defer cancel()
		s := spec(f, "killed", 1)
		start := time.Now()
		if _, err := p.Create(ctx, s); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Create = %v, want the context's deadline", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Create took %s after its context ended", d)
		}
		close(hold) // the vCenter finishes the clone
		deadline := time.Now().Add(10 * time.Second)
		for !v.exists(s.Name) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		_, later := v.provider(stdBlock) // the next run's sweep
		l, err := later.List(v.ctx)
		if err != nil || len(l) != 1 || l[0].Name != s.Name || l[0].RunID != "killed" {
			t.Fatalf("List = %+v, %v, want %s of run killed", l, err, s.Name)
		}
		v.must(later.Delete(v.ctx, l[0].ID))
		if v.exists(s.Name) {
			t.Errorf("%s is still there", s.Name)
		}
	})
}

// List returns exactly the VMs that carry winconform.run, with their run,
// creation time and keep; never an untagged VM, one tagged otherwise, or a
// template (even one made from a harness machine). Delete refuses what is
// not the harness's.
func TestSweepByTag(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		f, p := v.provider(stdBlock)
		made := map[string]string{} // name -> run
		for _, r := range []struct {
			run string
			n   int
		}{{"nightly-1", 1}, {"nightly-1", 2}, {"nightly-2", 1}} {
			s := spec(f, r.run, r.n)
			if _, err := p.Create(v.ctx, s); err != nil {
				t.Fatal(err)
			}
			made[s.Name] = r.run
		}
		change := func(name string, opts ...types.BaseOptionValue) {
			v.wait(v.find(name).Reconfigure(v.ctx, types.VirtualMachineConfigSpec{ExtraConfig: opts}))
		}
		// A user keeps one (govc vm.change -e winconform.keep=true).
		change("win-nightly-1-2", &types.OptionValue{Key: "winconform.keep", Value: "true"})
		// Someone else's VMs: untagged (the model's), tagged with a
		// guest-visible key of the same name, a template that was once
		// a harness machine.
		change("DC0_H0_VM0", &types.OptionValue{Key: "guestinfo.winconform.run", Value: "nightly-1"})
		change("DC0_H0_VM1", &types.OptionValue{Key: "winconform.run", Value: "nightly-0"})
		v.wait(v.find("DC0_H0_VM1").PowerOff(v.ctx))
		v.must(v.find("DC0_H0_VM1").MarkAsTemplate(v.ctx))

		l, err := p.List(v.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range l {
			got[m.Name] = m.RunID
			if m.Created.IsZero() || time.Since(m.Created) > time.Hour {
				t.Errorf("%s was made at %s, want about now", m.Name, m.Created)
			}
			if m.Keep != (m.Name == "win-nightly-1-2") {
				t.Errorf("%s: keep %v", m.Name, m.Keep)
			}
		}
		if len(got) != len(made) || len(l) != len(made) {
			t.Errorf("List = %v, want exactly %v", got, made)
		}
		for name, run := range made {
			if got[name] != run {
				t.Errorf("List has %s of run %q, want run %q", name, got[name], run)
			}
		}

		// The sweep: every listed machine not kept.
		for _, m := range l {
			if !m.Keep {
				v.must(p.Delete(v.ctx, m.ID))
			}
		}
		l, err = p.List(v.ctx)
		if err != nil || len(l) != 1 || l[0].Name != "win-nightly-1-2" {
			t.Errorf("after the sweep List = %+v, %v, want the kept machine only", l, err)
		}
		for _, name := range []string{"DC0_H0_VM0", "DC0_H0_VM1", "DC0_C0_RP0_VM1", tplName} {
			if !v.exists(name) {
				t.Errorf("the sweep took %s, which is not the harness's", name)
			}
		}
		for _, name := range []string{"DC0_H0_VM0", "DC0_H0_VM1", tplName} {
			err := p.Delete(v.ctx, v.find(name).Reference().Value)
			if err == nil || !strings.Contains(err.Error(), "not deleted") {
				t.Errorf("Delete(%s) = %v, want a refusal", name, err)
			}
			if !v.exists(name) {
				t.Errorf("Delete took %s, which is not the harness's", name)
			}
		}
	})
}

// The lifecycle creates a run's machines at once, through one provider.
func TestConcurrentCreates(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		f, p := v.provider(stdBlock)
		const n = 3
		errs := make(chan error, n)
		for i := 1; i <= n; i++ {
			go func() {
				_, err := p.Create(v.ctx, spec(f, "together", i))
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		l, err := p.List(v.ctx)
		if err != nil || len(l) != n {
			t.Fatalf("List = %+v, %v, want %d machines", l, err, n)
		}
		for i, m := range l {
			if want := vms.MachineName("win", "together", i+1); m.Name != want || m.RunID != "together" {
				t.Errorf("List[%d] = %+v, want %s of run together", i, m, want)
			}
		}
	})
}
