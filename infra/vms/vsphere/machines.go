package vsphere

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// The extraConfig keys of the run tags (vms.TagRun, TagCreated, TagKeep):
// VMX keys are dotted names, so the tags' hyphen becomes a dot.
const (
	keyRun     = "winconform.run"
	keyCreated = "winconform.created"
	keyKeep    = "winconform.keep"
)

// cleanupTimeout bounds removing a machine whose Create failed, after
// Create's own context may have ended.
const cleanupTimeout = 2 * time.Minute

// Create clones spec.Image's snapshot into a linked clone named spec.Name,
// tagged in the clone request itself, then powers it on. A clone that was
// made but does not power on is destroyed.
func (p *Provider) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	tpl, snap, err := p.template(ctx, spec.Image)
	if err != nil {
		return vms.Machine{}, err
	}
	cs, err := p.cloneSpec(ctx, tpl, snap, spec)
	if err != nil {
		return vms.Machine{}, err
	}
	task, err := tpl.Clone(ctx, p.folder, spec.Name, cs)
	if err != nil {
		return vms.Machine{}, fmt.Errorf("vsphere: the vCenter refused to clone template %s into %s: %s", spec.Image, spec.Name, describe(err))
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// The clone goes on in the vCenter: cancel it, and wait
			// (bounded) for how it ends: a clone that finished all the
			// same is this Create's machine, which it deletes, or
			// returns (its reference) for the caller to delete.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			_ = task.Cancel(cctx)
			cerr := fmt.Errorf("vsphere: cloning template %s into %s: %w", spec.Image, spec.Name, ctx.Err())
			if info, werr := task.WaitForResult(cctx); werr == nil {
				if ref, ok := info.Result.(types.ManagedObjectReference); ok {
					m := vms.Machine{ID: ref.Value, Name: spec.Name, RunID: spec.RunID, Created: spec.Created.UTC()}
					if derr := p.Delete(cctx, m.ID); derr != nil {
						return m, fmt.Errorf("%w (the clone finished all the same, and deleting it failed: %v)", cerr, derr)
					}
				}
			}
			return vms.Machine{}, cerr
		}
		return vms.Machine{}, fmt.Errorf("vsphere: cloning template %s into %s failed: %s", spec.Image, spec.Name, describe(err))
	}
	ref, ok := info.Result.(types.ManagedObjectReference)
	if !ok {
		return vms.Machine{}, fmt.Errorf("vsphere: cloning template %s into %s returned %T, not a VM", spec.Image, spec.Name, info.Result)
	}
	m := vms.Machine{ID: ref.Value, Name: spec.Name, RunID: spec.RunID, Created: spec.Created.UTC()}
	vm := object.NewVirtualMachine(p.c, ref)
	if err := wait(ctx, vm.PowerOn); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if derr := p.Delete(cctx, m.ID); derr != nil {
			return m, fmt.Errorf("vsphere: powering on %s (%s) failed: %s; deleting it failed too, it is left tagged %s=%s: %v",
				spec.Name, m.ID, describe(err), keyRun, spec.RunID, derr)
		}
		return vms.Machine{}, fmt.Errorf("vsphere: powering on %s failed (the clone is deleted): %s", spec.Name, describe(err))
	}
	return m, nil
}

// template finds the template image names and the snapshot to clone:
// the one the settings name, else its current one.
func (p *Provider) template(ctx context.Context, image string) (*object.VirtualMachine, *types.ManagedObjectReference, error) {
	f := find.NewFinder(p.c).SetDatacenter(p.dc)
	tpl, err := f.VirtualMachine(ctx, image)
	if err != nil {
		msg, _, _ := lookupProblem(ctx, "template", image, err)
		return nil, nil, config.Problem(field.NewPath("image"), msg,
			"set image to the template's name or inventory path in datacenter "+p.dc.Name()+" (govc ls "+p.dc.InventoryPath+"/vm)", err)
	}
	if p.s.Snapshot != "" {
		snap, err := tpl.FindSnapshot(ctx, p.s.Snapshot)
		if err != nil {
			return nil, nil, config.Problem(field.NewPath("vsphere", "snapshot"), fmt.Sprintf("template %s has no snapshot %q: %s", image, p.s.Snapshot, describe(err)),
				"name one of its snapshots (govc snapshot.tree -vm "+image+"), or remove snapshot to use its current one", err)
		}
		return tpl, snap, nil
	}
	var o mo.VirtualMachine
	if err := tpl.Properties(ctx, tpl.Reference(), []string{"snapshot"}, &o); err != nil {
		return nil, nil, fmt.Errorf("vsphere: reading the snapshots of template %s: %s", image, describe(err))
	}
	if o.Snapshot == nil || o.Snapshot.CurrentSnapshot == nil {
		return nil, nil, config.Problem(field.NewPath("image"), fmt.Sprintf("template %s has no snapshot: a linked clone is made from one", image),
			fmt.Sprintf("take one while it is a VM: govc vm.markasvm -pool <pool> %s; govc snapshot.create -vm %s golden; govc vm.markastemplate %s",
				image, image, image), nil)
	}
	return tpl, o.Snapshot.CurrentSnapshot, nil
}

// cloneSpec is the linked clone of snap: a child disk of the snapshot's
// disks (createNewChildDiskBacking, valid only from a snapshot), in the
// pool, on the datastore and host the settings name, with the run tags,
// the CPUs and memory, and the first NIC on the settings' network.
func (p *Provider) cloneSpec(ctx context.Context, tpl *object.VirtualMachine, snap *types.ManagedObjectReference, spec vms.Spec) (types.VirtualMachineCloneSpec, error) {
	tags := spec.Tags()
	cs := types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{
			Pool:         types.NewReference(p.pool.Reference()),
			DiskMoveType: string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking),
		},
		Snapshot: snap,
		Config: &types.VirtualMachineConfigSpec{
			NumCPUs:    int32(spec.CPUs),
			MemoryMB:   int64(spec.MemoryMiB),
			Annotation: fmt.Sprintf("Made by winconform, run %s, from %s; deleted when the run ends.", spec.RunID, spec.Image),
			ExtraConfig: []types.BaseOptionValue{
				&types.OptionValue{Key: keyRun, Value: tags[vms.TagRun]},
				&types.OptionValue{Key: keyCreated, Value: tags[vms.TagCreated]},
				// An empty value removes the key: a clone never
				// inherits a keep its template may carry.
				&types.OptionValue{Key: keyKeep, Value: ""},
			},
		},
	}
	if p.datastore != nil {
		cs.Location.Datastore = types.NewReference(p.datastore.Reference())
	}
	if p.host != nil {
		cs.Location.Host = types.NewReference(p.host.Reference())
	}
	if p.backing != nil {
		devices, err := tpl.Device(ctx)
		if err != nil {
			return cs, fmt.Errorf("vsphere: reading the devices of template %s: %s", spec.Image, describe(err))
		}
		nics := devices.SelectByType((*types.VirtualEthernetCard)(nil))
		if len(nics) == 0 {
			return cs, config.Problem(field.NewPath("vsphere", "network"), fmt.Sprintf("template %s has no network adapter to attach to %q", spec.Image, p.s.Network),
				"add a vmxnet3 adapter to the template, or remove network", nil)
		}
		nic := nics[0]
		nic.GetVirtualDevice().Backing = p.backing
		cs.Location.DeviceChange = []types.BaseVirtualDeviceConfigSpec{
			&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: nic},
		}
	}
	return cs, nil
}

// Delete powers the machine off and destroys it, with its files (a linked
// clone's delta disks; the template's disks stay). An absent machine is no
// error; a VM without the run tag, or a template, is refused.
func (p *Provider) Delete(ctx context.Context, id string) error {
	ref := vmRef(id)
	var o mo.VirtualMachine
	err := property.DefaultCollector(p.c).RetrieveOne(ctx, ref, []string{"name", "config.template", "config.extraConfig", "runtime.powerState"}, &o)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("vsphere: reading VM %s: %s", id, describe(err))
	case o.Config == nil:
		return fmt.Errorf("vsphere: VM %s (%s) has no configuration to read its tags from (inaccessible?): not deleted", id, o.Name)
	case o.Config.Template:
		return fmt.Errorf("vsphere: %s (%s) is a template, not a machine of the harness: not deleted", id, o.Name)
	}
	if _, ok := extraConfig(o.Config.ExtraConfig)[keyRun]; !ok {
		return fmt.Errorf("vsphere: VM %s (%s) does not carry %s, it is not the harness's: not deleted", id, o.Name, keyRun)
	}
	vm := object.NewVirtualMachine(p.c, ref)
	if o.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		err := wait(ctx, vm.PowerOff)
		switch {
		case isNotFound(err):
			return nil
		case err != nil && !fault.Is(err, &types.InvalidPowerState{}): // off already
			return fmt.Errorf("vsphere: powering off %s (%s): %s", o.Name, id, describe(err))
		}
	}
	if err := wait(ctx, vm.Destroy); err != nil && !isNotFound(err) {
		return fmt.Errorf("vsphere: destroying %s (%s): %s", o.Name, id, describe(err))
	}
	return nil
}

// List returns every VM of the datacenter that carries winconform.run,
// templates excepted, read with one container view.
func (p *Provider) List(ctx context.Context) ([]vms.Machine, error) {
	v, err := view.NewManager(p.c).CreateContainerView(ctx, p.dc.Reference(), []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, fmt.Errorf("vsphere: listing the VMs of %s: %s", p.dc.Name(), describe(err))
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var all []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.template", "config.createDate", "config.extraConfig"}, &all); err != nil {
		return nil, fmt.Errorf("vsphere: listing the VMs of %s: %s", p.dc.Name(), describe(err))
	}
	var out []vms.Machine
	for _, o := range all {
		if o.Config == nil || o.Config.Template {
			continue
		}
		tags := extraConfig(o.Config.ExtraConfig)
		run, ok := tags[keyRun]
		if !ok {
			continue
		}
		m := vms.Machine{ID: o.Self.Value, Name: o.Name, RunID: run, Keep: vms.ParseKeep(tags[keyKeep])}
		if o.Config.CreateDate != nil {
			m.Created = o.Config.CreateDate.UTC()
		} else if t, err := time.Parse(time.RFC3339, tags[keyCreated]); err == nil {
			m.Created = t.UTC()
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b vms.Machine) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// Addresses returns what VMware Tools reports: guest.ipAddress first,
// then the addresses of guest.net (ipConfig, or the older ipAddress), link
// local ones included, each once.
func (p *Provider) Addresses(ctx context.Context, id string) ([]string, error) {
	var o mo.VirtualMachine
	err := property.DefaultCollector(p.c).RetrieveOne(ctx, vmRef(id), []string{"guest.ipAddress", "guest.net"}, &o)
	switch {
	case isNotFound(err):
		return nil, fmt.Errorf("vsphere: VM %s: %w", id, vms.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("vsphere: reading the guest addresses of VM %s: %s", id, describe(err))
	case o.Guest == nil:
		return nil, nil
	}
	var out []string
	add := func(a string) {
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	add(o.Guest.IpAddress)
	for _, nic := range o.Guest.Net {
		if nic.IpConfig != nil && len(nic.IpConfig.IpAddress) > 0 {
			for _, a := range nic.IpConfig.IpAddress {
				add(a.IpAddress)
			}
			continue
		}
		for _, a := range nic.IpAddress {
			add(a)
		}
	}
	return out, nil
}

func vmRef(id string) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "VirtualMachine", Value: id}
}

// wait starts a task and waits for it.
func wait(ctx context.Context, start func(context.Context) (*object.Task, error)) error {
	task, err := start(ctx)
	if err != nil {
		return err
	}
	return task.Wait(ctx)
}

func isNotFound(err error) bool {
	return err != nil && fault.Is(err, &types.ManagedObjectNotFound{})
}

// extraConfig returns the string values of an extraConfig.
func extraConfig(opts []types.BaseOptionValue) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if v := o.GetOptionValue(); v != nil {
			if s, ok := v.Value.(string); ok {
				out[v.Key] = s
			}
		}
	}
	return out
}
