package azure

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// The run-level resources in a run's group, and each machine's.
const (
	vnetName   = "winconform-vnet"
	subnetName = "machines"
	nsgName    = "winconform-winrm"
	// A machine's NIC, public IP and OS disk are named after it.
	nicSuffix  = "-nic"
	pipSuffix  = "-ip"
	diskSuffix = "-osdisk"
)

//go:embed winrm-setup.ps1
var winrmSetup string

// groupName is the resource group of a run.
func (p *provider) groupName(runID string) string { return p.s.ResourceGroupPrefix + "-" + runID }

func (p *provider) run(group string) *runState {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := strings.ToLower(group)
	rs, ok := p.runs[key]
	if !ok {
		rs = &runState{}
		p.runs[key] = rs
	}
	return rs
}

// computerName is the name Windows takes for the machine: Azure refuses a
// Windows computer name longer than 15 characters (armcompute's
// OSProfile.ComputerName, NetBIOS' limit), which a machine's name
// (<prefix>-<run ID>-<n>) often is. The node's name is the machine's name
// still: the join passes it to the kubelet (--hostname-override).
func computerName(name string) string {
	if len(name) <= 15 {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	head := strings.TrimRight(name[:9], "-")
	return fmt.Sprintf("%s-%05x", head, h.Sum32()&0xfffff)
}

// tags are a resource's tags: the VM file's, then the run's.
func (p *provider) tags(run map[string]string) map[string]*string {
	out := map[string]*string{}
	for k, v := range p.s.Tags {
		out[k] = to.Ptr(v)
	}
	for k, v := range run {
		out[k] = to.Ptr(v)
	}
	return out
}

func (p *provider) pollOpts() *runtime.PollUntilDoneOptions {
	return &runtime.PollUntilDoneOptions{Frequency: p.poll}
}

// Create makes the run's group (once), its network (once), then the
// machine's public IP (if asked), NIC and VM, each tagged with the run as
// it is made, and, with winrmSetup runCommand, opens WinRM in the guest.
func (p *provider) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return vms.Machine{}, errors.New("azure: provider closed")
	}
	im := p.image
	if spec.Image != "" && (im.kind == "" || spec.Image != im.String()) {
		var err error
		if im, err = parseImage(spec.Image); err != nil {
			return vms.Machine{}, config.Problem(field.NewPath("image"), err.Error(), fixImage, err)
		}
	}
	if im.kind == "" {
		return vms.Machine{}, config.Problem(field.NewPath("image"), "is missing", fixImage, nil)
	}
	if p.sizeCores > 0 && (int32(spec.CPUs) > p.sizeCores || int32(spec.MemoryMiB) > p.sizeMemory) {
		return vms.Machine{}, config.Problem(field.NewPath("azure", "size"), fmt.Sprintf("%s has %d CPUs and %d MiB, less than the VM file's cpus %d and memory %d MiB", p.s.Size, p.sizeCores, p.sizeMemory, spec.CPUs, spec.MemoryMiB),
			"choose a larger size, or lower cpus and memory (on Azure the size decides them)", nil)
	}
	group := p.groupName(spec.RunID)
	rs := p.run(group)
	rs.mu.Lock()
	rs.inflight++
	rs.mu.Unlock()
	defer func() { rs.mu.Lock(); rs.inflight--; rs.mu.Unlock() }()

	if err := p.ensureRun(ctx, rs, group, spec); err != nil {
		return vms.Machine{}, err
	}
	m, err := p.createMachine(ctx, rs, group, spec, im)
	if err != nil && ctx.Err() == nil {
		// What was made goes; what cannot be removed now stays tagged
		// with the run, for down and sweep.
		if derr := p.deleteMachine(ctx, group, spec.Name); derr != nil {
			err = fmt.Errorf("%w (and removing what was made: %v)", err, derr)
		}
	}
	return m, err
}

// ensureRun makes the run's resource group, tagged, and its network once.
func (p *provider) ensureRun(ctx context.Context, rs *runState, group string, spec vms.Spec) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.ready {
		return nil
	}
	g, err := p.groups.Get(ctx, group, nil)
	var re *azcore.ResponseError
	switch {
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		_, err = p.groups.CreateOrUpdate(ctx, group, armresources.ResourceGroup{Location: to.Ptr(p.s.Location), Tags: p.tags(spec.Tags())}, nil)
		if err != nil {
			return p.explain(err, "make resource group "+group)
		}
	case err != nil:
		return p.explain(err, "read resource group "+group)
	default:
		run := tag(g.Tags, vms.TagRun)
		if run != spec.RunID {
			return config.Problem(field.NewPath("azure", "resourceGroupPrefix"), fmt.Sprintf("resource group %s exists and is not run %s's (its %s tag is %q)", group, spec.RunID, vms.TagRun, run),
				"use another run ID or resourceGroupPrefix: the harness makes a group of its own for each run", nil)
		}
		if state := groupState(g.ResourceGroup); strings.EqualFold(state, "Deleting") {
			return fmt.Errorf("resource group %s is being deleted (a down or sweep of run %s): wait until it is gone, or use another run ID", group, spec.RunID)
		}
		// The group is the run's, and this invocation did not make it: it
		// is another invocation's, whose teardown would take this one's
		// machines with it.
		return fmt.Errorf("%w: resource group %s of run %s exists, made by another invocation: end that run with `winconform vms down --run-id %s`, or use another run ID",
			vms.ErrRunInUse, group, spec.RunID, spec.RunID)
	}
	runTags := spec.Tags()
	subnet := p.s.Network.Subnet
	if subnet == "" {
		space := p.s.Network.AddressSpace.Prefix
		first, _ := space.Addr().Prefix(24)
		if space.Bits() > 24 {
			first = space
		}
		poller, err := p.vnets.BeginCreateOrUpdate(ctx, group, vnetName, armnetwork.VirtualNetwork{
			Location: to.Ptr(p.s.Location), Tags: p.tags(runTags),
			Properties: &armnetwork.VirtualNetworkPropertiesFormat{
				AddressSpace: &armnetwork.AddressSpace{AddressPrefixes: []*string{to.Ptr(space.String())}},
				Subnets: []*armnetwork.Subnet{{Name: to.Ptr(subnetName),
					Properties: &armnetwork.SubnetPropertiesFormat{AddressPrefix: to.Ptr(first.String())}}},
			},
		}, nil)
		if err != nil {
			return p.explain(err, "make virtual network "+vnetName+" in "+group)
		}
		vnet, err := poller.PollUntilDone(ctx, p.pollOpts())
		if err != nil {
			return p.explain(err, "make virtual network "+vnetName+" in "+group)
		}
		subnet = ""
		if vnet.Properties != nil {
			for _, sn := range vnet.Properties.Subnets {
				if sn != nil && sn.ID != nil && sn.Name != nil && *sn.Name == subnetName {
					subnet = *sn.ID
				}
			}
		}
		if subnet == "" && vnet.ID != nil {
			subnet = *vnet.ID + "/subnets/" + subnetName
		}
	}
	rs.subnet = subnet
	if len(p.s.Network.WinRMFrom) > 0 {
		var from []*string
		for _, r := range p.s.Network.WinRMFrom {
			from = append(from, to.Ptr(r.String()))
		}
		poller, err := p.nsgs.BeginCreateOrUpdate(ctx, group, nsgName, armnetwork.SecurityGroup{
			Location: to.Ptr(p.s.Location), Tags: p.tags(runTags),
			Properties: &armnetwork.SecurityGroupPropertiesFormat{SecurityRules: []*armnetwork.SecurityRule{{
				Name: to.Ptr("winrm-in"),
				Properties: &armnetwork.SecurityRulePropertiesFormat{
					Priority: to.Ptr[int32](1000), Direction: to.Ptr(armnetwork.SecurityRuleDirectionInbound),
					Access: to.Ptr(armnetwork.SecurityRuleAccessAllow), Protocol: to.Ptr(armnetwork.SecurityRuleProtocolTCP),
					SourceAddressPrefixes: from, SourcePortRange: to.Ptr("*"),
					DestinationAddressPrefix: to.Ptr("*"), DestinationPortRanges: []*string{to.Ptr("5985"), to.Ptr("5986")},
					Description: to.Ptr("WinRM (HTTP 5985, HTTPS 5986) from the VM file's azure.network.winrmFrom"),
				},
			}}},
		}, nil)
		if err != nil {
			return p.explain(err, "make network security group "+nsgName+" in "+group)
		}
		nsg, err := poller.PollUntilDone(ctx, p.pollOpts())
		if err != nil {
			return p.explain(err, "make network security group "+nsgName+" in "+group)
		}
		if nsg.ID == nil {
			return fmt.Errorf("make network security group %s in %s: Azure returned no ID", nsgName, group)
		}
		rs.nsg = *nsg.ID
	}
	rs.ready = true
	return nil
}

func (p *provider) createMachine(ctx context.Context, rs *runState, group string, spec vms.Spec, im image) (vms.Machine, error) {
	runTags := spec.Tags()
	name := spec.Name
	ipConfig := &armnetwork.InterfaceIPConfigurationPropertiesFormat{
		Subnet:                    &armnetwork.Subnet{ID: to.Ptr(rs.subnet)},
		PrivateIPAllocationMethod: to.Ptr(armnetwork.IPAllocationMethodDynamic),
		Primary:                   to.Ptr(true),
	}
	if p.s.Network.PublicIP {
		poller, err := p.pips.BeginCreateOrUpdate(ctx, group, name+pipSuffix, armnetwork.PublicIPAddress{
			Location: to.Ptr(p.s.Location), Tags: p.tags(runTags),
			SKU: &armnetwork.PublicIPAddressSKU{Name: to.Ptr(armnetwork.PublicIPAddressSKUNameStandard)},
			Properties: &armnetwork.PublicIPAddressPropertiesFormat{
				PublicIPAllocationMethod: to.Ptr(armnetwork.IPAllocationMethodStatic),
				PublicIPAddressVersion:   to.Ptr(armnetwork.IPVersionIPv4),
			},
		}, nil)
		if err != nil {
			return vms.Machine{}, p.explain(err, "make public IP "+name+pipSuffix)
		}
		pip, err := poller.PollUntilDone(ctx, p.pollOpts())
		if err != nil {
			return vms.Machine{}, p.explain(err, "make public IP "+name+pipSuffix)
		}
		ipConfig.PublicIPAddress = &armnetwork.PublicIPAddress{ID: pip.ID}
	}
	nic := armnetwork.Interface{
		Location: to.Ptr(p.s.Location), Tags: p.tags(runTags),
		Properties: &armnetwork.InterfacePropertiesFormat{
			IPConfigurations: []*armnetwork.InterfaceIPConfiguration{{Name: to.Ptr("ipconfig1"), Properties: ipConfig}},
		},
	}
	if rs.nsg != "" {
		nic.Properties.NetworkSecurityGroup = &armnetwork.SecurityGroup{ID: to.Ptr(rs.nsg)}
	}
	npoller, err := p.nics.BeginCreateOrUpdate(ctx, group, name+nicSuffix, nic, nil)
	if err != nil {
		return vms.Machine{}, p.explain(err, "make NIC "+name+nicSuffix)
	}
	madeNIC, err := npoller.PollUntilDone(ctx, p.pollOpts())
	if err != nil {
		return vms.Machine{}, p.explain(err, "make NIC "+name+nicSuffix)
	}

	vm := armcompute.VirtualMachine{
		Location: to.Ptr(p.s.Location), Tags: p.tags(runTags),
		Properties: &armcompute.VirtualMachineProperties{
			HardwareProfile: &armcompute.HardwareProfile{VMSize: to.Ptr(armcompute.VirtualMachineSizeTypes(p.s.Size))},
			StorageProfile: &armcompute.StorageProfile{
				ImageReference: im.reference(),
				OSDisk: &armcompute.OSDisk{
					Name: to.Ptr(name + diskSuffix), CreateOption: to.Ptr(armcompute.DiskCreateOptionTypesFromImage),
					// Azure keeps an OS disk after its VM unless told
					// (armcompute's OSDisk.DeleteOption: Detach by default).
					DeleteOption: to.Ptr(armcompute.DiskDeleteOptionTypesDelete),
					ManagedDisk:  &armcompute.ManagedDiskParameters{StorageAccountType: to.Ptr(armcompute.StorageAccountTypesStandardSSDLRS)},
				},
			},
			OSProfile: &armcompute.OSProfile{
				ComputerName:  to.Ptr(computerName(name)),
				AdminUsername: to.Ptr(p.s.Admin.User),
				AdminPassword: to.Ptr(p.s.Admin.Password.Secret.Reveal()),
				WindowsConfiguration: &armcompute.WindowsConfiguration{
					ProvisionVMAgent:       to.Ptr(true),
					EnableAutomaticUpdates: to.Ptr(false),
				},
			},
			NetworkProfile: &armcompute.NetworkProfile{NetworkInterfaces: []*armcompute.NetworkInterfaceReference{{
				ID: madeNIC.ID,
				// A NIC stays after its VM unless told, as the OS disk does.
				Properties: &armcompute.NetworkInterfaceReferenceProperties{Primary: to.Ptr(true), DeleteOption: to.Ptr(armcompute.DeleteOptionsDelete)},
			}}},
			// Managed boot diagnostics: the serial log ConsoleLog reads.
			DiagnosticsProfile: &armcompute.DiagnosticsProfile{BootDiagnostics: &armcompute.BootDiagnostics{Enabled: to.Ptr(true)}},
		},
	}
	vpoller, err := p.vms.BeginCreateOrUpdate(ctx, group, name, vm, nil)
	if err != nil {
		return vms.Machine{}, p.explain(err, "make VM "+name+" from "+im.String())
	}
	made, err := vpoller.PollUntilDone(ctx, p.pollOpts())
	if err != nil {
		return vms.Machine{}, p.explain(err, "make VM "+name+" from "+im.String())
	}
	if made.ID == nil {
		return vms.Machine{}, fmt.Errorf("make VM %s: Azure returned no ID", name)
	}
	m := vms.Machine{ID: vmID(p.s.Subscription, group, name), Name: name, RunID: spec.RunID, Created: spec.Created}
	if made.Properties != nil && made.Properties.TimeCreated != nil {
		m.Created = *made.Properties.TimeCreated
	}
	if p.s.WinRMSetup == SetupRunCommand {
		if err := p.openWinRM(ctx, group, name); err != nil {
			return m, err
		}
	}
	return m, nil
}

// openWinRM runs winrm-setup.ps1 in the guest through Run Command: Azure's
// VM agent runs it as SYSTEM and returns its output as two statuses,
// ComponentStatus/StdOut/succeeded and ComponentStatus/StdErr/succeeded
// (armcompute's RunCommand example), whatever the script's exit.
func (p *provider) openWinRM(ctx context.Context, group, name string) error {
	remote := "Any"
	if len(p.s.Network.WinRMFrom) > 0 {
		var rs []string
		for _, r := range p.s.Network.WinRMFrom {
			rs = append(rs, r.String())
		}
		remote = strings.Join(rs, ",")
	}
	var script []*string
	for _, line := range strings.Split(strings.ReplaceAll(winrmSetup, "\r\n", "\n"), "\n") {
		script = append(script, to.Ptr(line))
	}
	poller, err := p.vms.BeginRunCommand(ctx, group, name, armcompute.RunCommandInput{
		CommandID:  to.Ptr("RunPowerShellScript"),
		Script:     script,
		Parameters: []*armcompute.RunCommandInputParameter{{Name: to.Ptr("RemoteAddress"), Value: to.Ptr(remote)}},
	}, nil)
	if err != nil {
		return p.explain(err, "open WinRM on "+name+" (Run Command)")
	}
	res, err := poller.PollUntilDone(ctx, p.pollOpts())
	if err != nil {
		return p.explain(err, "open WinRM on "+name+" (Run Command)")
	}
	var stdout, stderr string
	for _, st := range res.Value {
		if st == nil || st.Code == nil || st.Message == nil {
			continue
		}
		switch {
		case strings.HasPrefix(*st.Code, "ComponentStatus/StdOut/"):
			stdout += *st.Message
		case strings.HasPrefix(*st.Code, "ComponentStatus/StdErr/"):
			stderr += *st.Message
		}
	}
	if strings.TrimSpace(stderr) != "" || !strings.Contains(stdout, "winconform: WinRM ready") {
		return fmt.Errorf("open WinRM on %s: winrm-setup.ps1 failed through Run Command: %s; set azure.winrmSetup: none if the image opens WinRM itself",
			name, strings.TrimSpace(firstNonEmpty(stderr, stdout, "no output")))
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// Delete removes a machine (its VM, then its NIC, public IP and OS disk,
// each of which the VM's delete options take with it already) and then
// the run's group once no machine is left in it; or, given a group's ID
// (List's entry for a group with no machine), the group and all in it.
func (p *provider) Delete(ctx context.Context, id string) error {
	rid, err := arm.ParseResourceID(id)
	if err != nil {
		return fmt.Errorf("azure: %q is not a resource ID: %w", id, err)
	}
	switch t := strings.ToLower(rid.ResourceType.String()); t {
	case "microsoft.resources/resourcegroups":
		return p.deleteGroup(ctx, rid.ResourceGroupName)
	case "microsoft.compute/virtualmachines":
		if err := p.deleteMachine(ctx, rid.ResourceGroupName, rid.Name); err != nil {
			return err
		}
		return p.deleteGroupIfEmpty(ctx, rid.ResourceGroupName)
	default:
		return fmt.Errorf("azure: %s is a %s, not a machine or a run's group", id, rid.ResourceType)
	}
}

// deleteMachine removes a machine's resources; absent ones are no error.
func (p *provider) deleteMachine(ctx context.Context, group, name string) error {
	steps := []struct {
		what string
		run  func() error
	}{
		{"VM " + name, func() error {
			poller, err := p.vms.BeginDelete(ctx, group, name, nil)
			return awaitDelete(ctx, p, poller, err)
		}},
		{"NIC " + name + nicSuffix, func() error {
			poller, err := p.nics.BeginDelete(ctx, group, name+nicSuffix, nil)
			return awaitDelete(ctx, p, poller, err)
		}},
		{"public IP " + name + pipSuffix, func() error {
			poller, err := p.pips.BeginDelete(ctx, group, name+pipSuffix, nil)
			return awaitDelete(ctx, p, poller, err)
		}},
		{"OS disk " + name + diskSuffix, func() error {
			poller, err := p.disks.BeginDelete(ctx, group, name+diskSuffix, nil)
			return awaitDelete(ctx, p, poller, err)
		}},
	}
	for _, st := range steps {
		if err := p.retryConflicts(ctx, "delete "+st.what+" in "+group, st.run); err != nil {
			return err
		}
	}
	return nil
}

// awaitDelete waits for a long-running operation Azure accepted.
func awaitDelete[T any](ctx context.Context, p *provider, poller *runtime.Poller[T], err error) error {
	if err != nil {
		return err
	}
	_, err = poller.PollUntilDone(ctx, p.pollOpts())
	return err
}

// retryConflicts runs a delete until it succeeds, finds nothing to delete
// (404), or ctx ends. Azure answers some deletes with 409 Conflict while
// another operation holds the resource (the VM's own delete still taking
// its NIC), and a NIC's delete with 400 NicReservedForAnotherVm for 180 s
// after a VM that was to use it failed (cloudfoundry/bosh-azure-cpi-release#366):
// both pass, so they are tried again. The SDK does not retry them itself
// (its policy retries 408, 429 and 5xx). Other errors end it at once.
func (p *provider) retryConflicts(ctx context.Context, doing string, f func() error) error {
	var last *azcore.ResponseError
	var lastErr error
	backoff := wait.Backoff{Duration: p.poll, Factor: 2, Cap: 30 * time.Second, Steps: math.MaxInt32}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		err := f()
		var re *azcore.ResponseError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
			return true, nil
		case errors.As(err, &re) && (re.StatusCode == http.StatusConflict || re.ErrorCode == "NicReservedForAnotherVm" || re.ErrorCode == "NicInUse"):
			last, lastErr = re, err
			return false, nil
		}
		return false, p.explain(err, doing)
	})
	if err != nil && last != nil && ctx.Err() != nil {
		return fmt.Errorf("%s: Azure still answers %d %s (retried until the time ran out): %w", doing, last.StatusCode, last.ErrorCode, errors.Join(ctx.Err(), lastErr))
	}
	return err
}

// deleteGroupIfEmpty deletes a run's group when it holds no machine and
// this provider is making none in it.
func (p *provider) deleteGroupIfEmpty(ctx context.Context, group string) error {
	rs := p.run(group)
	rs.mu.Lock()
	busy := rs.inflight > 0
	rs.mu.Unlock()
	if busy {
		return nil
	}
	g, err := p.groups.Get(ctx, group, nil)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return p.explain(err, "read resource group "+group)
	}
	if tag(g.Tags, vms.TagRun) == "" {
		return nil // not the harness's group: only the machine was
	}
	pager := p.vms.NewListPager(group, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if notFound(err) {
			return nil
		}
		if err != nil {
			return p.explain(err, "list the VMs of "+group)
		}
		if len(page.Value) > 0 {
			return nil
		}
	}
	npager := p.nics.NewListPager(group, nil)
	for npager.More() {
		page, err := npager.NextPage(ctx)
		if notFound(err) {
			return nil
		}
		if err != nil {
			return p.explain(err, "list the NICs of "+group)
		}
		if len(page.Value) > 0 {
			return nil
		}
	}
	return p.deleteGroup(ctx, group)
}

// deleteGroup deletes a run's group, and everything in it, and waits
// until Azure has: a group being deleted answers GET with provisioningState
// Deleting, then 404. The wait reads the group, not the delete's poller,
// so that a later down or sweep (another process) waits the same way for
// a group an earlier one began to delete. A group without the run tag is
// never deleted.
func (p *provider) deleteGroup(ctx context.Context, group string) error {
	g, err := p.groups.Get(ctx, group, nil)
	if notFound(err) {
		p.forget(group)
		return nil
	}
	if err != nil {
		return p.explain(err, "read resource group "+group)
	}
	run := tag(g.Tags, vms.TagRun)
	if run == "" {
		return fmt.Errorf("azure: resource group %s does not carry the tag %s: it is not the harness's, and is left alone", group, vms.TagRun)
	}
	start := time.Now()
	if !strings.EqualFold(groupState(g.ResourceGroup), "Deleting") {
		if err := p.retryConflicts(ctx, "delete resource group "+group, func() error {
			_, err := p.groups.BeginDelete(ctx, group, nil)
			return err
		}); err != nil {
			return err
		}
	}
	for {
		g, err := p.groups.Get(ctx, group, nil)
		switch {
		case notFound(err):
			p.forget(group)
			return nil
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		case err != nil:
			return p.explain(err, "read resource group "+group)
		default:
			if state := groupState(g.ResourceGroup); !strings.EqualFold(state, "Deleting") {
				return fmt.Errorf("azure: Azure stopped deleting resource group %s (provisioningState %s): a lock or a resource it could not delete holds it; see the group's activity log, then run down or sweep again", group, state)
			}
		}
		t := time.NewTimer(p.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("azure: resource group %s is still being deleted after %s (provisioningState Deleting): it keeps its tag %s=%s, so a later `winconform vms down` or `sweep` waits for it again: %w",
				group, time.Since(start).Round(time.Second), vms.TagRun, run, ctx.Err())
		case <-t.C:
		}
	}
}

func (p *provider) forget(group string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rs, ok := p.runs[strings.ToLower(group)]; ok {
		rs.mu.Lock()
		if rs.inflight == 0 {
			delete(p.runs, strings.ToLower(group))
		} else {
			rs.ready = false
		}
		rs.mu.Unlock()
	}
}

// List returns every VM that carries the run tag, or whose group does,
// and, for a tagged group that holds no VM (a run whose last delete did not
// finish, a group stuck deleting), the group itself, under its own ID, so
// that sweep and down remove it.
func (p *provider) List(ctx context.Context) ([]vms.Machine, error) {
	groups := map[string]*armresources.ResourceGroup{}
	gpager := p.groups.NewListPager(&armresources.ResourceGroupsClientListOptions{Filter: to.Ptr(fmt.Sprintf("tagName eq '%s'", vms.TagRun))})
	for gpager.More() {
		page, err := gpager.NextPage(ctx)
		if err != nil {
			return nil, p.explain(err, "list the resource groups tagged "+vms.TagRun)
		}
		for _, g := range page.Value {
			if g != nil && g.Name != nil && tag(g.Tags, vms.TagRun) != "" {
				groups[strings.ToLower(*g.Name)] = g
			}
		}
	}
	var out []vms.Machine
	hasVM := map[string]bool{}
	vpager := p.vms.NewListAllPager(nil)
	for vpager.More() {
		page, err := vpager.NextPage(ctx)
		if err != nil {
			return nil, p.explain(err, "list the VMs of subscription "+p.s.Subscription)
		}
		for _, vm := range page.Value {
			if vm == nil || vm.ID == nil || vm.Name == nil {
				continue
			}
			rid, err := arm.ParseResourceID(*vm.ID)
			if err != nil {
				continue
			}
			// Azure writes a group's name in IDs in the case it likes
			// (list results often upper-case it): compare without case.
			g := groups[strings.ToLower(rid.ResourceGroupName)]
			run := tag(vm.Tags, vms.TagRun)
			if run == "" && g != nil {
				run = tag(g.Tags, vms.TagRun)
			}
			if run == "" {
				continue
			}
			// One ID per machine, whatever case the list wrote: the
			// group's name as the group has it (or as the run names it).
			groupName := rid.ResourceGroupName
			switch {
			case g != nil && g.Name != nil:
				groupName = *g.Name
			case strings.EqualFold(groupName, p.groupName(run)):
				groupName = p.groupName(run)
			}
			id := vmID(rid.SubscriptionID, groupName, *vm.Name)
			m := vms.Machine{ID: id, Name: *vm.Name, RunID: run, Keep: vms.ParseKeep(tag(vm.Tags, vms.TagKeep))}
			if g != nil && vms.ParseKeep(tag(g.Tags, vms.TagKeep)) {
				m.Keep = true
			}
			m.Created = created(vm.Tags)
			if vm.Properties != nil && vm.Properties.TimeCreated != nil {
				m.Created = *vm.Properties.TimeCreated
			}
			if m.Created.IsZero() && g != nil {
				m.Created = created(g.Tags)
			}
			hasVM[strings.ToLower(rid.ResourceGroupName)] = true
			out = append(out, m)
		}
	}
	for key, g := range groups {
		if hasVM[key] || g.ID == nil {
			continue
		}
		out = append(out, vms.Machine{ID: *g.ID, Name: *g.Name, RunID: tag(g.Tags, vms.TagRun), Created: created(g.Tags),
			Keep: vms.ParseKeep(tag(g.Tags, vms.TagKeep))})
	}
	return out, nil
}

// Addresses returns the machine's public addresses (when it has any),
// then its private ones, from its NICs.
func (p *provider) Addresses(ctx context.Context, id string) ([]string, error) {
	rid, err := arm.ParseResourceID(id)
	if err != nil || !strings.EqualFold(rid.ResourceType.String(), "Microsoft.Compute/virtualMachines") {
		return nil, fmt.Errorf("azure: %s is not a VM: %w", id, vms.ErrNotFound)
	}
	vm, err := p.vms.Get(ctx, rid.ResourceGroupName, rid.Name, nil)
	if notFound(err) {
		return nil, fmt.Errorf("azure: VM %s: %w", id, vms.ErrNotFound)
	}
	if err != nil {
		return nil, p.explain(err, "read VM "+rid.Name)
	}
	var public, private []string
	if vm.Properties == nil || vm.Properties.NetworkProfile == nil {
		return nil, nil
	}
	for _, ref := range vm.Properties.NetworkProfile.NetworkInterfaces {
		if ref == nil || ref.ID == nil {
			continue
		}
		nid, err := arm.ParseResourceID(*ref.ID)
		if err != nil {
			continue
		}
		nic, err := p.nics.Get(ctx, nid.ResourceGroupName, nid.Name, nil)
		if notFound(err) {
			continue
		}
		if err != nil {
			return nil, p.explain(err, "read NIC "+nid.Name)
		}
		if nic.Properties == nil {
			continue
		}
		for _, ipc := range nic.Properties.IPConfigurations {
			if ipc == nil || ipc.Properties == nil {
				continue
			}
			if a := ipc.Properties.PrivateIPAddress; a != nil && *a != "" {
				private = append(private, *a)
			}
			if ref := ipc.Properties.PublicIPAddress; ref != nil && ref.ID != nil {
				pid, err := arm.ParseResourceID(*ref.ID)
				if err != nil {
					continue
				}
				pip, err := p.pips.Get(ctx, pid.ResourceGroupName, pid.Name, nil)
				if notFound(err) {
					continue
				}
				if err != nil {
					return nil, p.explain(err, "read public IP "+pid.Name)
				}
				if pip.Properties != nil && pip.Properties.IPAddress != nil {
					if _, err := netip.ParseAddr(*pip.Properties.IPAddress); err == nil {
						public = append(public, *pip.Properties.IPAddress)
					}
				}
			}
		}
	}
	return append(public, private...), nil
}

// ConsoleLog writes the VM's serial log, from its managed boot
// diagnostics: Azure returns a short-lived SAS URL of the log's blob,
// which is read and never printed (it grants access to the blob).
func (p *provider) ConsoleLog(ctx context.Context, id string, w io.Writer) error {
	rid, err := arm.ParseResourceID(id)
	if err != nil || !strings.EqualFold(rid.ResourceType.String(), "Microsoft.Compute/virtualMachines") {
		return fmt.Errorf("azure: %s is not a VM: %w", id, vms.ErrNotFound)
	}
	res, err := p.vms.RetrieveBootDiagnosticsData(ctx, rid.ResourceGroupName, rid.Name,
		&armcompute.VirtualMachinesClientRetrieveBootDiagnosticsDataOptions{SasURIExpirationTimeInMinutes: to.Ptr[int32](5)})
	if notFound(err) {
		return fmt.Errorf("azure: VM %s: %w", id, vms.ErrNotFound)
	}
	if err != nil {
		return p.explain(err, "read the boot diagnostics of "+rid.Name)
	}
	if res.SerialConsoleLogBlobURI == nil || *res.SerialConsoleLogBlobURI == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *res.SerialConsoleLogBlobURI, nil)
	if err != nil {
		return fmt.Errorf("azure: the serial log's URL of %s is not one", rid.Name)
	}
	resp, err := p.blobClient().Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // the URL holds the SAS token: keep it out
		}
		return fmt.Errorf("azure: read the serial log of %s: %v", rid.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("azure: read the serial log of %s: the blob answered %s", rid.Name, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

func (p *provider) blobClient() *http.Client {
	if p.blob != nil {
		return p.blob
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

// vmID is a VM's resource ID as the provider writes it.
func vmID(sub, group, name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/" + group + "/providers/Microsoft.Compute/virtualMachines/" + name
}

func notFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

func tag(tags map[string]*string, name string) string {
	for k, v := range tags {
		if strings.EqualFold(k, name) && v != nil {
			return *v
		}
	}
	return ""
}

func created(tags map[string]*string) time.Time {
	t, _ := time.Parse(time.RFC3339, tag(tags, vms.TagCreated))
	return t
}

func groupState(g armresources.ResourceGroup) string {
	if g.Properties == nil || g.Properties.ProvisioningState == nil {
		return ""
	}
	return *g.Properties.ProvisioningState
}
