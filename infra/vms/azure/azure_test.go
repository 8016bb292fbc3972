package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/configtest"
	"github.com/winconform/winconform/testing/vmstest"
)

const (
	galleryVersion = "/subscriptions/" + testSub + "/resourceGroups/images/providers/Microsoft.Compute/galleries/capi/images/capi-windows-2022-containerd/versions/1.34.4"
	adminPassword  = "Nightly-run-42!"
)

func goodSettings() Settings {
	return Settings{Subscription: testSub, Location: "westeurope", Size: "Standard_D4s_v3", ResourceGroupPrefix: "winconform",
		Admin: Admin{User: "winadmin", Password: config.SecretRef{Secret: adminPassword}}, Network: Network{AddressSpace: Range{netip.MustParsePrefix(DefaultAddressSpace)}},
		WinRMSetup: SetupRunCommand, Tags: map[string]string{"team": "sig-windows"}}
}

// vmsFile is a VM file of the azure provider with no image.
func vmsFile() *vms.File { return &vms.File{Provider: "azure"} }

func stdCloud() *cloud {
	c := newCloud()
	c.images[strings.ToLower(galleryVersion)] = true
	c.images["microsoftwindowsserver:windowsserver:2022-datacenter-core-g2:20348.2227.240104"] = true
	return c
}

func spec(run string, n int) vms.Spec {
	return vms.Spec{Name: vms.MachineName("win", run, n), RunID: run, Created: time.Now().UTC().Truncate(time.Second),
		Image: galleryVersion, CPUs: 2, MemoryMiB: 4096}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// The provider passes the contract every provider passes, against the
// stand-in.
func TestConformance(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	vmstest.Conformance(t, p, vms.Spec{Image: galleryVersion, CPUs: 2, MemoryMiB: 4096})
	if _, ok := c.groups["winconform-conformance"]; ok {
		t.Errorf("the run's resource group is left after its only machine was deleted: %v", c.Count("winconform-conformance"))
	}
}

// Create makes one tagged resource group per run, the run's network once,
// and per machine a NIC (first address .4: Azure keeps a subnet's first
// four), a VM with its OS disk and NIC deleted with it, a computer name
// Windows takes, each through its long-running operation; then WinRM is
// opened through Run Command.
func TestCreateOneGroupPerRun(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	run := "nightly-20260102"
	var wg sync.WaitGroup
	ms := make([]vms.Machine, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i], errs[i] = p.Create(ctx(t), spec(run, i+1))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Create %d: %v", i+1, err)
		}
	}
	group := "winconform-" + run
	g := c.groups[group]
	if g == nil {
		t.Fatalf("no resource group %s; groups: %v", group, keysOf(c.groups))
	}
	if tag(g.Tags, vms.TagRun) != run || tag(g.Tags, vms.TagCreated) == "" || tag(g.Tags, "team") != "sig-windows" {
		t.Errorf("group tags = %v, want the run, its creation time and the VM file's tags", g.Tags)
	}
	if n := c.Count(group); n["vm"] != 3 || n["nic"] != 3 || n["disk"] != 3 || n["vnet"] != 1 || n["pip"] != 0 || n["nsg"] != 0 {
		t.Errorf("the group holds %v, want 3 VMs, NICs and disks, one network, no public IP or NSG (not asked for)", n)
	}
	if calls := c.Calls(); count(calls, "VirtualNetworksClient.BeginCreateOrUpdate") != 1 || count(calls, "ResourceGroupsClient.CreateOrUpdate") != 1 {
		t.Errorf("the group and network were made %d and %d times, want once per run", count(calls, "ResourceGroupsClient.CreateOrUpdate"), count(calls, "VirtualNetworksClient.BeginCreateOrUpdate"))
	}
	var addrs []string
	for _, m := range ms {
		vm := c.vms[key(group, m.Name)]
		if vm == nil {
			t.Fatalf("no VM %s", m.Name)
		}
		if tag(vm.Tags, vms.TagRun) != run || tag(vm.Tags, vms.TagCreated) == "" {
			t.Errorf("VM %s tags = %v, want the run's (set in the request that makes it)", m.Name, vm.Tags)
		}
		sp := vm.Properties
		if d := sp.StorageProfile.OSDisk; d.DeleteOption == nil || *d.DeleteOption != armcompute.DiskDeleteOptionTypesDelete {
			t.Errorf("VM %s's OS disk is kept after the VM (Azure's default, Detach)", m.Name)
		}
		if r := sp.NetworkProfile.NetworkInterfaces[0]; r.Properties == nil || r.Properties.DeleteOption == nil || *r.Properties.DeleteOption != armcompute.DeleteOptionsDelete {
			t.Errorf("VM %s's NIC is kept after the VM", m.Name)
		}
		if cn := *sp.OSProfile.ComputerName; len(cn) > 15 {
			t.Errorf("computer name %q is longer than Windows' 15", cn)
		}
		if *sp.StorageProfile.ImageReference.ID != galleryVersion {
			t.Errorf("image = %v", sp.StorageProfile.ImageReference)
		}
		a, err := p.Addresses(ctx(t), m.ID)
		if err != nil || len(a) != 1 {
			t.Fatalf("Addresses(%s) = %v, %v", m.Name, a, err)
		}
		addrs = append(addrs, a[0])
	}
	slices.Sort(addrs)
	if want := []string{"10.240.0.4", "10.240.0.5", "10.240.0.6"}; !slices.Equal(addrs, want) {
		t.Errorf("addresses = %v, want %v", addrs, want)
	}
	if len(c.ran) != 3 {
		t.Fatalf("Run Command ran %d times, want once per machine", len(c.ran))
	}
	in := c.ran[0]
	script := ""
	for _, l := range in.Script {
		script += *l + "\n"
	}
	if *in.CommandID != "RunPowerShellScript" || !strings.Contains(script, "-LocalPort 5985") || *in.Parameters[0].Value != "Any" {
		t.Errorf("Run Command got %s with %s=%s and script:\n%s", *in.CommandID, *in.Parameters[0].Name, *in.Parameters[0].Value, script)
	}
	if strings.Contains(script, adminPassword) {
		t.Error("the script holds the password")
	}
}

func count(calls []string, api string) int {
	n := 0
	for _, c := range calls {
		if c == api {
			n++
		}
	}
	return n
}

// A public IP and an NSG only when the VM file asks; the NSG lets WinRM in
// from the given ranges only; Addresses lists the public address first
// (the lifecycle takes the first IPv4 address).
func TestPublicIPAndWinRMRule(t *testing.T) {
	c := stdCloud()
	s := goodSettings()
	s.Network.PublicIP = true
	s.Network.WinRMFrom = []Range{{netip.MustParsePrefix("198.51.100.0/24")}, {netip.MustParsePrefix("192.0.2.7/32")}}
	p := c.provider(t, s)
	m, err := p.Create(ctx(t), spec("pip", 1))
	if err != nil {
		t.Fatal(err)
	}
	nsg := c.nsgs[key("winconform-pip", nsgName)]
	if nsg == nil {
		t.Fatal("no NSG")
	}
	rule := nsg.Properties.SecurityRules[0].Properties
	var from, ports []string
	for _, f := range rule.SourceAddressPrefixes {
		from = append(from, *f)
	}
	for _, f := range rule.DestinationPortRanges {
		ports = append(ports, *f)
	}
	if !slices.Equal(from, []string{"198.51.100.0/24", "192.0.2.7/32"}) || !slices.Equal(ports, []string{"5985", "5986"}) || *rule.Access != "Allow" || *rule.Direction != "Inbound" {
		t.Errorf("NSG rule lets in %v on %v (%s %s)", from, ports, *rule.Access, *rule.Direction)
	}
	nic := c.nics[key("winconform-pip", m.Name+nicSuffix)]
	if nic.Properties.NetworkSecurityGroup == nil || *nic.Properties.NetworkSecurityGroup.ID != *nsg.ID {
		t.Error("the NIC does not carry the NSG")
	}
	if got := *c.ran[0].Parameters[0].Value; got != "198.51.100.0/24,192.0.2.7/32" {
		t.Errorf("the guest's firewall rule is for %q, want the VM file's ranges", got)
	}
	a, err := p.Addresses(ctx(t), m.ID)
	if err != nil || len(a) != 2 || a[0] != "203.0.113.11" || a[1] != "10.240.0.4" {
		t.Errorf("Addresses = %v, %v; want the public address, then the private one", a, err)
	}
	if err := p.Delete(ctx(t), m.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.groups["winconform-pip"]; ok {
		t.Errorf("the group is left: %v", c.Count("winconform-pip"))
	}
}

// Delete of one machine removes its VM, NIC and OS disk and leaves the
// run's other machines; the last one's delete removes the group.
func TestDeleteOneMachineThenTheRun(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	m1, err := p.Create(ctx(t), spec("del", 1))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := p.Create(ctx(t), spec("del", 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(ctx(t), m1.ID); err != nil {
		t.Fatal(err)
	}
	if n := c.Count("winconform-del"); n["vm"] != 1 || n["nic"] != 1 || n["disk"] != 1 || n["vnet"] != 1 {
		t.Errorf("after deleting one of two machines the group holds %v, want the other's VM, NIC and disk and the network", n)
	}
	if err := p.Delete(ctx(t), m2.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.groups["winconform-del"]; ok {
		t.Errorf("the group is left after its last machine: %v", c.Count("winconform-del"))
	}
}

// A machine whose Create stopped after its NIC (the harness killed before
// the VM was made) is deleted by its ID all the same: the NIC, reserved
// for a while by Azure after a failed VM (400 NicReservedForAnotherVm,
// bosh-azure-cpi-release#366), is tried again until Azure lets it go.
func TestDeleteRetriesAReservedNIC(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	m, err := p.Create(ctx(t), spec("half", 1))
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	vm := c.vms[key("winconform-half", m.Name)]
	delete(c.vms, key("winconform-half", m.Name)) // as if the VM was never made
	c.nics[key("winconform-half", m.Name+nicSuffix)].Properties.VirtualMachine = nil
	c.disks[key("winconform-half", m.Name+diskSuffix)].ManagedBy = nil
	c.reserved[m.Name+nicSuffix] = 2
	c.mu.Unlock()
	_ = vm
	if err := p.Delete(ctx(t), m.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := count(c.Calls(), "InterfacesClient.BeginDelete"); got != 3 {
		t.Errorf("the NIC's delete was tried %d times, want 3 (two 400 NicReservedForAnotherVm, then done)", got)
	}
	if _, ok := c.groups["winconform-half"]; ok {
		t.Errorf("left behind: %v", c.Count("winconform-half"))
	}
}

// Resource Manager throttles with 429 and Retry-After: the SDK's retry
// policy waits as told and the Create goes on; throttling that outlasts
// the retries ends in an error that says so.
func TestThrottlingIsRetriedAfterRetryAfter(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	c.throttle["InterfacesClient.BeginCreateOrUpdate"] = 2
	start := time.Now()
	if _, err := p.Create(ctx(t), spec("slow", 1)); err != nil {
		t.Fatalf("Create through two 429s: %v", err)
	}
	if got := count(c.Calls(), "InterfacesClient.BeginCreateOrUpdate"); got != 3 {
		t.Errorf("the NIC's create was sent %d times, want 3", got)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("took %s: Retry-After: 1, twice, was not honoured", took)
	}

	c.throttle["VirtualMachinesClient.BeginCreateOrUpdate"] = 10
	_, err := p.Create(ctx(t), spec("slow", 2))
	if err == nil || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "throttling") {
		t.Fatalf("Create under lasting throttling: %v, want an error saying Azure throttled", err)
	}
	if n := c.Count("winconform-slow"); n["nic"] != 1 || n["vm"] != 1 {
		t.Errorf("after the throttled create the group holds %v, want only the first machine (the second's NIC removed)", n)
	}
}

// 409 Conflict: a run's group that another process began to delete takes
// no new machine (409 ResourceGroupBeingDeleted, not retried); the error
// says so.
func TestConflictGroupBeingDeleted(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	if _, err := p.Create(ctx(t), spec("gone", 1)); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	g := c.groups["winconform-gone"]
	g.deleting, g.Properties.ProvisioningState = true, to.Ptr("Deleting")
	c.stuck["winconform-gone"] = true
	c.mu.Unlock()
	_, err := p.Create(ctx(t), spec("gone", 2))
	if err == nil || !strings.Contains(err.Error(), "being deleted") || !strings.Contains(err.Error(), "another run ID") {
		t.Fatalf("Create in a group being deleted: %v, want an error saying so", err)
	}
	if got := count(c.Calls(), "InterfacesClient.BeginCreateOrUpdate"); got != 2 {
		t.Errorf("NIC creates sent: %d, want 2 (the 409 is not retried)", got)
	}
	// A new process (the next run with that ID) is told before it asks.
	_, err = c.provider(t, goodSettings()).Create(ctx(t), spec("gone", 3))
	if err == nil || !strings.Contains(err.Error(), "being deleted") {
		t.Errorf("a new provider's Create: %v", err)
	}
}

// A run's group that another invocation made (the same run ID, in use) is
// refused before anything is made in it: the other invocation's teardown
// would delete the group with this one's machines, or this one's its.
func TestGroupOfAnotherInvocationIsRefused(t *testing.T) {
	c := stdCloud()
	if _, err := c.provider(t, goodSettings()).Create(ctx(t), spec("twice", 1)); err != nil {
		t.Fatal(err)
	}
	_, err := c.provider(t, goodSettings()).Create(ctx(t), spec("twice", 2))
	if !errors.Is(err, vms.ErrRunInUse) || !strings.Contains(err.Error(), "winconform-twice") || !strings.Contains(err.Error(), "vms down --run-id twice") {
		t.Fatalf("a second invocation's Create in the run's group: %v, want ErrRunInUse naming the group and the fix", err)
	}
	if n := c.Count("winconform-twice"); n["vm"] != 1 || n["nic"] != 1 {
		t.Errorf("the group holds %v, want the first invocation's machine alone", n)
	}
}

// A resource group stuck deleting: the delete is bounded by its context
// and says what is left and that a later sweep finishes it; List still
// has the group (tagged, no VM); a later sweep (another process) waits for
// it and it is gone.
func TestGroupStuckDeleting(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	m, err := p.Create(ctx(t), spec("stuck", 1))
	if err != nil {
		t.Fatal(err)
	}
	c.stuck["winconform-stuck"] = true
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = p.Delete(short, m.ID)
	if err == nil || !strings.Contains(err.Error(), "still being deleted") || !strings.Contains(err.Error(), "sweep") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Delete of a machine whose group is stuck: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Delete took %s past its 300ms context", took)
	}
	if n := c.Count("winconform-stuck"); n["vm"] != 0 || n["nic"] != 0 || n["disk"] != 0 {
		t.Errorf("the machine's resources are left: %v", n)
	}
	later := c.provider(t, goodSettings())
	ms, err := later.List(ctx(t))
	if err != nil || len(ms) != 1 || ms[0].RunID != "stuck" || ms[0].Name != "winconform-stuck" {
		t.Fatalf("List = %+v, %v; want the stuck group, tagged with its run", ms, err)
	}
	if rid, _ := arm.ParseResourceID(ms[0].ID); rid == nil || !strings.EqualFold(rid.ResourceType.String(), "Microsoft.Resources/resourceGroups") {
		t.Errorf("the group's entry has ID %s, want the group's", ms[0].ID)
	}
	c.Unstick("winconform-stuck")
	if err := later.Delete(ctx(t), ms[0].ID); err != nil {
		t.Fatalf("the later sweep's Delete: %v", err)
	}
	if calls := c.Calls(); count(calls, "ResourceGroupsClient.BeginDelete") != 1 {
		t.Errorf("the group's delete was asked %d times, want once: the later sweep waits for the one under way", count(calls, "ResourceGroupsClient.BeginDelete"))
	}
	if ms, _ := later.List(ctx(t)); len(ms) != 0 {
		t.Errorf("List after the sweep: %+v", ms)
	}
}

// A VM whose provisioning fails (the create's operation ends in an error)
// is an error naming Azure's code, and what was made for it is removed.
func TestCreateFailsAndCleansUp(t *testing.T) {
	c := stdCloud()
	c.vmFail = "AllocationFailed"
	p := c.provider(t, goodSettings())
	_, err := p.Create(ctx(t), spec("fail", 1))
	if err == nil || !strings.Contains(err.Error(), "AllocationFailed") {
		t.Fatalf("Create: %v, want Azure's AllocationFailed", err)
	}
	if n := c.Count("winconform-fail"); n["vm"]+n["nic"]+n["disk"] != 0 {
		t.Errorf("left after the failed create: %v", n)
	}
}

// A Run Command whose script writes to stderr fails the Create, with the
// script's words, and removes the machine.
func TestWinRMSetupFails(t *testing.T) {
	c := stdCloud()
	c.runOutput = func(string) (string, string) {
		return "", "New-NetFirewallRule : Access is denied."
	}
	p := c.provider(t, goodSettings())
	_, err := p.Create(ctx(t), spec("rc", 1))
	if err == nil || !strings.Contains(err.Error(), "Access is denied") || !strings.Contains(err.Error(), "winrmSetup: none") {
		t.Fatalf("Create: %v", err)
	}
	if n := c.Count("winconform-rc"); n["vm"] != 0 {
		t.Errorf("left: %v", n)
	}
	s := goodSettings()
	s.WinRMSetup = SetupNone
	c.ran = nil
	if _, err := c.provider(t, s).Create(ctx(t), spec("rc2", 1)); err != nil || len(c.ran) != 0 {
		t.Errorf("winrmSetup none: %v, %d Run Commands", err, len(c.ran))
	}
}

// List finds machines by the run tag on their group or on the VM (a group
// that lost its tags, a VM moved), compares group names without case (the
// stand-in, as Azure's lists do, upper-cases them in IDs), reads keep from
// either, and ignores everything else in the subscription.
func TestListByTag(t *testing.T) {
	c := stdCloud()
	p := c.provider(t, goodSettings())
	a, err := p.Create(ctx(t), spec("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Create(ctx(t), spec("b", 1))
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	delete(c.groups["winconform-a"].Tags, vms.TagRun)            // the group lost its tag: the VM has it
	delete(c.vms[key("winconform-b", b.Name)].Tags, vms.TagRun)  // the VM lost its tag: the group has it
	c.groups["winconform-b"].Tags[vms.TagKeep] = to.Ptr("true")  // a user keeps run b
	c.groups["other"] = &rg{ResourceGroup: groupOfUser("other")} // not ours
	c.vms[key("other", "dc01")] = &armcompute.VirtualMachine{ID: to.Ptr(resID("other", "Microsoft.Compute/virtualMachines", "dc01")), Name: to.Ptr("dc01")}
	c.mu.Unlock()
	ms, err := p.List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]vms.Machine{}
	for _, m := range ms {
		got[m.Name] = m
	}
	if len(ms) != 2 || got[a.Name].RunID != "a" || got[b.Name].RunID != "b" || !got[b.Name].Keep || got[a.Name].Keep {
		t.Fatalf("List = %+v", ms)
	}
	if got[a.Name].Created.IsZero() {
		t.Error("no creation time")
	}
	if err := p.Delete(ctx(t), got[a.Name].ID); err != nil { // the upper-cased ID
		t.Fatal(err)
	}
	if _, err := p.Addresses(ctx(t), a.ID); !errors.Is(err, vms.ErrNotFound) {
		t.Errorf("Addresses after Delete: %v", err)
	}
	if _, ok := c.groups["other"]; !ok {
		t.Error("a group that is not the harness's was deleted")
	}
}

func groupOfUser(name string) armresources.ResourceGroup {
	return armresources.ResourceGroup{ID: to.Ptr(groupID(name)), Name: to.Ptr(name), Location: to.Ptr("westeurope"),
		Properties: &armresources.ResourceGroupProperties{ProvisioningState: to.Ptr("Succeeded")}}
}

// serveLog serves a serial log as a boot diagnostics blob does: only to
// its SAS token.
func serveLog(t *testing.T, text string) string {
	blob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("sig") != "s3cr3t" {
			http.Error(w, "AuthenticationFailed", http.StatusForbidden)
			return
		}
		io.WriteString(w, text)
	}))
	t.Cleanup(blob.Close)
	return blob.URL
}

// The serial log comes from the VM's boot diagnostics blob; the blob's URL
// (a SAS token) never appears in an error.
func TestConsoleLog(t *testing.T) {
	blob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("sig") != "s3cr3t" {
			http.Error(w, "AuthenticationFailed", http.StatusForbidden)
			return
		}
		io.WriteString(w, "Windows Boot Manager\nSAC>\n")
	}))
	defer blob.Close()
	c := stdCloud()
	c.serialLogURL = blob.URL + "/bootdiagnostics/serial.log?sv=2022-11-02&sig=s3cr3t"
	p := c.provider(t, goodSettings())
	m, err := p.Create(ctx(t), spec("log", 1))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := p.ConsoleLog(ctx(t), m.ID, &out); err != nil || !strings.Contains(out.String(), "SAC>") {
		t.Errorf("ConsoleLog = %q, %v", out.String(), err)
	}
	blob.Close()
	err = p.ConsoleLog(ctx(t), m.ID, io.Discard)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("ConsoleLog from a blob that does not answer: %v (must fail without the SAS token)", err)
	}
	if err := p.ConsoleLog(ctx(t), resID("winconform-log", "Microsoft.Compute/virtualMachines", "nope"), io.Discard); !errors.Is(err, vms.ErrNotFound) {
		t.Errorf("ConsoleLog of an absent VM: %v", err)
	}
}

func TestComputerName(t *testing.T) {
	long := vms.MachineName("win", "nightly-2026-01-02", 12)
	a, b := computerName(long), computerName(vms.MachineName("win", "nightly-2026-01-02", 13))
	if len(a) > 15 || a == b || !strings.HasPrefix(a, "win-night") {
		t.Errorf("computerName(%s) = %s, (…13) = %s", long, a, b)
	}
	if computerName("win-a-1") != "win-a-1" {
		t.Error("a short name is changed")
	}
}

// Open's errors, each naming the field at fault: credentials Microsoft
// Entra ID refuses, a subscription that cannot be reached, a location, a
// size, an image, a subnet that do not exist, an endpoint that does not
// answer, an administrator other than the join's.
func TestOpenErrorsNameTheField(t *testing.T) {
	const secret = "v3ry-s3cret-value"
	cases := []struct {
		name  string
		edit  func(*Settings, *cloud, *deps, *vms.File)
		field string
		says  string
	}{
		{"bad secret", func(s *Settings, _ *cloud, d *deps, f *vms.File) {
			s.Tenant = "99999999-8888-7777-6666-555555555555"
			f.Connection = config.Connection{User: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", Credentials: map[string]config.SecretRef{"clientSecret": {Secret: secret}}}
			d.cred, d.login = nil, entra{}
		}, "connection.credentials[clientSecret]", "AADSTS7000215"},
		{"no subscription", func(_ *Settings, c *cloud, _ *deps, _ *vms.File) { c.noSubscription = true }, "azure.subscription", "SubscriptionNotFound"},
		{"bad location", func(s *Settings, _ *cloud, _ *deps, _ *vms.File) { s.Location = "moon" }, "azure.location", "moon"},
		{"size not offered", func(s *Settings, _ *cloud, _ *deps, _ *vms.File) { s.Size = "Standard_M416ms_v2" }, "azure.size", "not offered in westeurope"},
		{"missing image", func(_ *Settings, _ *cloud, _ *deps, f *vms.File) { f.Image = galleryVersion + "9" }, "image", "does not exist"},
		{"marketplace image not offered", func(_ *Settings, _ *cloud, _ *deps, f *vms.File) {
			f.Image = "MicrosoftWindowsServer:WindowsServer:2019-datacenter:latest"
		}, "image", "no version"},
		{"not an image", func(_ *Settings, _ *cloud, _ *deps, f *vms.File) { f.Image = "win2022.qcow2" }, "image", "neither a resource ID"},
		{"missing subnet", func(s *Settings, _ *cloud, _ *deps, _ *vms.File) {
			s.Network.Subnet = "/subscriptions/" + testSub + "/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/lab/subnets/win"
		}, "azure.network.subnet", "does not exist"},
		{"unreachable", func(_ *Settings, _ *cloud, d *deps, _ *vms.File) { d.arm = refused{} }, "connection.endpoint", "cannot reach"},
		{"unknown cloud", func(_ *Settings, _ *cloud, _ *deps, f *vms.File) {
			f.Connection.Endpoint = "https://management.example.com"
		},
			"connection.endpoint", "not an Azure cloud"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s, f := stdCloud(), goodSettings(), vmsFile()
			d := c.deps()
			tc.edit(&s, c, &d, f)
			_, err := open(ctx(t), f, s, d)
			configtest.Refused(t, err, tc.field, tc.says, secret, adminPassword)
		})
	}
}

// Open reads the VM file's image and finds it: an image definition of a
// gallery (its latest version, what a VM made from it gets) or a
// marketplace image's latest version; Create then makes the VM from it.
func TestOpenFindsTheImage(t *testing.T) {
	definition := strings.TrimSuffix(galleryVersion, "/versions/1.34.4")
	for _, image := range []string{definition, "MicrosoftWindowsServer:WindowsServer:2022-datacenter-core-g2:latest"} {
		c := stdCloud()
		c.images[strings.ToLower(definition)] = true
		f := vmsFile()
		f.Image = image
		p, err := open(ctx(t), f, goodSettings(), c.deps())
		if err != nil {
			t.Fatalf("open with image %s: %v", image, err)
		}
		s := spec("img", 1)
		s.Image = image
		m, err := p.Create(ctx(t), s)
		if err != nil {
			t.Fatalf("Create from %s: %v", image, err)
		}
		ref := c.vms[key("winconform-img", m.Name)].Properties.StorageProfile.ImageReference
		if (ref.ID != nil && *ref.ID != image) || (ref.ID == nil && *ref.Publisher+":"+*ref.Offer+":"+*ref.SKU+":"+*ref.Version != image) {
			t.Errorf("the VM's image reference is %+v, want %s", ref, image)
		}
	}
}

// refused is an endpoint that does not answer.
type refused struct{}

func (refused) Do(req *http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
}

// entra answers as Microsoft Entra ID does for a service principal whose
// secret is wrong: the tenant's OpenID configuration, then, for the
// token, 401 invalid_client with AADSTS7000215 (the code Entra ID gives a
// wrong client secret).
type entra struct{}

func (entra) Do(req *http.Request) (*http.Response, error) {
	tenant := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")[0]
	base := "https://" + req.URL.Host + "/" + tenant
	body, status := "", http.StatusOK
	switch {
	case strings.HasSuffix(req.URL.Path, "/.well-known/openid-configuration"):
		body = fmt.Sprintf(`{"token_endpoint":"%s/oauth2/v2.0/token","authorization_endpoint":"%s/oauth2/v2.0/authorize","issuer":"%s/v2.0"}`, base, base, base)
	case strings.HasSuffix(req.URL.Path, "/oauth2/v2.0/token"):
		status = http.StatusUnauthorized
		body = `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.","error_codes":[7000215]}`
	default:
		status, body = http.StatusNotFound, `{}`
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}
