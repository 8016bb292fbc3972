package azure

// The stand-in for Azure: one subscription held in memory behind the SDK's
// own fake servers (armcompute/v7/fake, armnetwork/v7/fake,
// armresources/fake), reached through their fake transports, so the
// provider's requests go through the real clients, the real pipeline (its
// retry policy included) and the real long-running-operation pollers, and
// nothing goes to the network.
//
// It answers as Azure Resource Manager does, for what the provider uses
// (each fact's source beside it):
//   - A resource group being deleted answers GET with provisioningState
//     Deleting until it is gone (then 404 ResourceGroupNotFound), and a PUT
//     into it with 409 ResourceGroupBeingDeleted, "The resource group '...'
//     is in deprovisioning state and cannot perform this operation"
//     (Azure/azure-cli#21121, #28679). Deleting a group deletes what is in it.
//   - Resource groups are listed with $filter=tagName eq '<name>'
//     (armresources' ResourceGroupsClientListOptions.Filter).
//   - A VM's OS disk and NIC stay after the VM unless its delete options say
//     Delete (armcompute's OSDisk.DeleteOption: "The default value is set to
//     Detach"; NetworkInterfaceReferenceProperties.DeleteOption). The OS
//     disk a VM makes from its image does not carry the VM's tags.
//   - A NIC a VM uses cannot be deleted: 400 NicInUse; a NIC a failed VM was
//     to use is reserved for 180 s: 400 NicReservedForAnotherVm
//     (cloudfoundry/bosh-azure-cpi-release#366).
//   - A public IP a NIC uses cannot be deleted: 400 PublicIPAddressInUse.
//   - Azure refuses a Windows computer name longer than 15 characters and
//     the administrator names of armcompute's OSProfile.AdminUsername
//     ("Disallowed values"): 400 InvalidParameter.
//   - A subnet's first four addresses are Azure's: a NIC's first address
//     is .4.
//   - Throttling is 429 with Retry-After in seconds; network writes answer
//     429 RetryableError (hashicorp/terraform#7986).
//   - Deleting something that is not there answers 204, in a group that is
//     not there 404 ResourceGroupNotFound.
//   - Run Command returns the script's output as two statuses,
//     ComponentStatus/StdOut/succeeded and ComponentStatus/StdErr/succeeded
//     (armcompute's BeginRunCommand example).
//   - List results write a resource's group in upper case in its ID (ARM
//     keeps the case a group was first written in on some paths and upper
//     case on others; the provider must compare IDs without case).
//
// Its long-running operations answer 201/202 then poll once or twice
// before their result, as Azure's do (with Retry-After left out, so the
// poller uses the provider's frequency, set short in tests). A group's
// delete operation ends at once: what tells the provider the group is gone
// is its GET, as for a group another process began to delete.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	computefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v7"
	networkfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v7/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	resourcesfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/fake"
)

const testSub = "11111111-2222-3333-4444-555555555555"

// cloud is one Azure subscription in memory.
type cloud struct {
	mu       sync.Mutex
	location string
	sizes    []*armcompute.VirtualMachineSize
	// images are the gallery image versions, managed images and
	// marketplace URNs (publisher:offer:sku:version) that exist, lower case.
	images map[string]bool

	groups map[string]*rg // by lower-case name
	vms    map[string]*armcompute.VirtualMachine
	nics   map[string]*armnetwork.Interface
	pips   map[string]*armnetwork.PublicIPAddress
	nsgs   map[string]*armnetwork.SecurityGroup
	vnets  map[string]*armnetwork.VirtualNetwork
	disks  map[string]*armcompute.Disk
	// subnets that exist outside the stand-in's groups (a user's), by ID,
	// and their ranges.
	subnets      map[string]bool
	subnetPrefix map[string]netip.Prefix

	// Knobs, set by a test before it runs the provider.
	noSubscription bool           // every request: 404 SubscriptionNotFound
	throttle       map[string]int // API name -> how many 429s to answer first
	retryAfter     string         // Retry-After of a 429 (seconds)
	stuck          map[string]bool
	goneAfter      int            // GETs a deleting group answers before it is gone
	vmFail         string         // a VM's create ends with this error code
	reserved       map[string]int // NIC name -> NicReservedForAnotherVm answers to its delete
	runOutput      func(vm string) (stdout, stderr string)
	serialLogURL   string

	calls []string // API names, in order
	ran   []armcompute.RunCommandInput
	ips   int
}

type rg struct {
	armresources.ResourceGroup
	deleting bool
	gets     int // GETs since it began deleting
}

func newCloud() *cloud {
	return &cloud{
		location: "westeurope",
		sizes: []*armcompute.VirtualMachineSize{
			{Name: to.Ptr("Standard_D2s_v3"), NumberOfCores: to.Ptr[int32](2), MemoryInMB: to.Ptr[int32](8192)},
			{Name: to.Ptr("Standard_D4s_v3"), NumberOfCores: to.Ptr[int32](4), MemoryInMB: to.Ptr[int32](16384)},
		},
		images: map[string]bool{}, groups: map[string]*rg{}, vms: map[string]*armcompute.VirtualMachine{},
		nics: map[string]*armnetwork.Interface{}, pips: map[string]*armnetwork.PublicIPAddress{},
		nsgs: map[string]*armnetwork.SecurityGroup{}, vnets: map[string]*armnetwork.VirtualNetwork{},
		disks: map[string]*armcompute.Disk{}, subnets: map[string]bool{}, subnetPrefix: map[string]netip.Prefix{},
		throttle: map[string]int{}, stuck: map[string]bool{}, reserved: map[string]int{},
		goneAfter: 1, retryAfter: "1",
		runOutput: func(string) (string, string) { return "winconform: WinRM ready\n", "" },
	}
}

func key(group, name string) string { return strings.ToLower(group + "/" + name) }

func groupID(name string) string { return "/subscriptions/" + testSub + "/resourceGroups/" + name }

func resID(group, typ, name string) string {
	return groupID(group) + "/providers/" + typ + "/" + name
}

// clone returns a deep copy, as a response Azure sends is.
func clone[T any](v T) T {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// groupLocked returns the group and an error code when it cannot take a
// write: 404 when absent, 409 while deleting.
func (c *cloud) writable(group string) (int, string) {
	g, ok := c.groups[strings.ToLower(group)]
	switch {
	case !ok:
		return http.StatusNotFound, "ResourceGroupNotFound"
	case g.deleting:
		return http.StatusConflict, "ResourceGroupBeingDeleted"
	}
	return 0, ""
}

// gone reports whether a deleting group has finished (counting this GET).
func (c *cloud) settle(name string) {
	g, ok := c.groups[strings.ToLower(name)]
	if !ok || !g.deleting || c.stuck[strings.ToLower(name)] {
		return
	}
	g.gets++
	if g.gets > c.goneAfter {
		c.removeGroup(name)
	}
}

func (c *cloud) removeGroup(name string) {
	prefix := strings.ToLower(name) + "/"
	for _, m := range []any{c.vms, c.nics, c.pips, c.nsgs, c.vnets, c.disks} {
		switch m := m.(type) {
		case map[string]*armcompute.VirtualMachine:
			deleteWithPrefix(m, prefix)
		case map[string]*armnetwork.Interface:
			deleteWithPrefix(m, prefix)
		case map[string]*armnetwork.PublicIPAddress:
			deleteWithPrefix(m, prefix)
		case map[string]*armnetwork.SecurityGroup:
			deleteWithPrefix(m, prefix)
		case map[string]*armnetwork.VirtualNetwork:
			deleteWithPrefix(m, prefix)
		case map[string]*armcompute.Disk:
			deleteWithPrefix(m, prefix)
		}
	}
	delete(c.groups, strings.ToLower(name))
}

func deleteWithPrefix[T any](m map[string]T, prefix string) {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			delete(m, k)
		}
	}
}

// Unstick lets a group that was stuck deleting finish.
func (c *cloud) Unstick(group string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.stuck, strings.ToLower(group))
}

// Count returns how many resources of each kind the group holds.
func (c *cloud) Count(group string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := strings.ToLower(group) + "/"
	n := map[string]int{}
	count := func(kind string, keys []string) {
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				n[kind]++
			}
		}
	}
	count("vm", keysOf(c.vms))
	count("nic", keysOf(c.nics))
	count("pip", keysOf(c.pips))
	count("disk", keysOf(c.disks))
	count("nsg", keysOf(c.nsgs))
	count("vnet", keysOf(c.vnets))
	return n
}

func keysOf[T any](m map[string]T) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Calls returns the API names the provider called, in order.
func (c *cloud) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// transport routes each request to its module's fake server, by the API
// name the SDK puts in the request's context ("VirtualMachinesClient.Get"),
// answering throttled requests itself first.
func (c *cloud) transport() policy.Transporter {
	return &router{c: c,
		compute:   computefake.NewServerFactoryTransport(c.computeServers()),
		network:   networkfake.NewServerFactoryTransport(c.networkServers()),
		resources: resourcesfake.NewServerFactoryTransport(c.resourceServers()),
	}
}

type router struct {
	c                           *cloud
	compute, network, resources policy.Transporter
}

var computeClients = []string{"VirtualMachinesClient", "DisksClient", "VirtualMachineSizesClient", "VirtualMachineImagesClient",
	"ImagesClient", "GalleryImagesClient", "GalleryImageVersionsClient"}
var networkClients = []string{"InterfacesClient", "PublicIPAddressesClient", "SecurityGroupsClient", "VirtualNetworksClient", "SubnetsClient"}

func (r *router) Do(req *http.Request) (*http.Response, error) {
	api, _ := req.Context().Value(runtime.CtxAPINameKey{}).(string)
	client, _, _ := strings.Cut(api, ".")
	poll := strings.HasSuffix(req.URL.Path, "/get/fake/status")
	r.c.mu.Lock()
	if !poll {
		r.c.calls = append(r.c.calls, api)
	}
	if r.c.noSubscription {
		r.c.mu.Unlock()
		return errorResponse(req, http.StatusNotFound, "SubscriptionNotFound", "The subscription '"+testSub+"' could not be found.", nil), nil
	}
	if n := r.c.throttle[api]; n > 0 && !poll {
		r.c.throttle[api] = n - 1
		after := r.c.retryAfter
		r.c.mu.Unlock()
		code := "SubscriptionRequestsThrottled"
		if slices.Contains(networkClients, client) {
			code = "RetryableError"
		}
		return errorResponse(req, http.StatusTooManyRequests, code, "A retryable error occurred.", http.Header{"Retry-After": {after}}), nil
	}
	r.c.mu.Unlock()
	var fake policy.Transporter
	switch {
	case slices.Contains(computeClients, client):
		fake = r.compute
	case slices.Contains(networkClients, client):
		fake = r.network
	case client == "ResourceGroupsClient":
		fake = r.resources
	default:
		return nil, fmt.Errorf("stand-in: no fake for API %q", api)
	}
	return shielded(fake, req)
}

// shielded has fake answer req under a context that is never cancelled,
// and returns early when req's is: the SDK's fake servers close their
// result channel when the request's context ends, and their handler's
// goroutine may then still choose to send on it, which panics
// (armcompute/v7 fake, dispatchToMethodFake: "send on closed channel",
// seen once in six runs of this package).
func shielded(fake policy.Transporter, req *http.Request) (*http.Response, error) {
	type answer struct {
		resp *http.Response
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := fake.Do(req.WithContext(context.WithoutCancel(req.Context())))
		done <- answer{resp, err}
	}()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

func errorResponse(req *http.Request, status int, code, msg string, h http.Header) *http.Response {
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	h.Set("x-ms-error-code", code)
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), Request: req, ContentLength: int64(len(body))}
}

// lro is a long-running operation's answers: accepted, polled, done.
func lro[T any](first int, result T, resultStatus int) azfake.PollerResponder[T] {
	var p azfake.PollerResponder[T]
	p.AddNonTerminalResponse(first, nil)
	p.AddNonTerminalResponse(first, nil)
	p.SetTerminalResponse(resultStatus, result, nil)
	return p
}

// done is a delete of nothing: 204 at once.
func done[T any]() azfake.PollerResponder[T] {
	var p azfake.PollerResponder[T]
	var zero T
	p.SetTerminalResponse(http.StatusNoContent, zero, nil)
	return p
}

func (c *cloud) resourceServers() *resourcesfake.ServerFactory {
	return &resourcesfake.ServerFactory{ResourceGroupsServer: resourcesfake.ResourceGroupsServer{
		Get: func(_ context.Context, name string, _ *armresources.ResourceGroupsClientGetOptions) (resp azfake.Responder[armresources.ResourceGroupsClientGetResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.settle(name)
			g, ok := c.groups[strings.ToLower(name)]
			if !ok {
				errResp.SetResponseError(http.StatusNotFound, "ResourceGroupNotFound")
				return
			}
			resp.SetResponse(http.StatusOK, armresources.ResourceGroupsClientGetResponse{ResourceGroup: clone(g.ResourceGroup)}, nil)
			return
		},
		CreateOrUpdate: func(_ context.Context, name string, params armresources.ResourceGroup, _ *armresources.ResourceGroupsClientCreateOrUpdateOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if g, ok := c.groups[strings.ToLower(name)]; ok && g.deleting {
				errResp.SetResponseError(http.StatusConflict, "ResourceGroupBeingDeleted")
				return
			}
			g := &rg{ResourceGroup: params}
			g.ID, g.Name = to.Ptr(groupID(name)), to.Ptr(name)
			g.Properties = &armresources.ResourceGroupProperties{ProvisioningState: to.Ptr("Succeeded")}
			c.groups[strings.ToLower(name)] = g
			resp.SetResponse(http.StatusCreated, armresources.ResourceGroupsClientCreateOrUpdateResponse{ResourceGroup: clone(g.ResourceGroup)}, nil)
			return
		},
		BeginDelete: func(_ context.Context, name string, _ *armresources.ResourceGroupsClientBeginDeleteOptions) (resp azfake.PollerResponder[armresources.ResourceGroupsClientDeleteResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			g, ok := c.groups[strings.ToLower(name)]
			if !ok {
				errResp.SetResponseError(http.StatusNotFound, "ResourceGroupNotFound")
				return
			}
			g.deleting = true
			g.Properties.ProvisioningState = to.Ptr("Deleting")
			resp.SetTerminalResponse(http.StatusAccepted, armresources.ResourceGroupsClientDeleteResponse{}, nil)
			return
		},
		NewListPager: func(opts *armresources.ResourceGroupsClientListOptions) (resp azfake.PagerResponder[armresources.ResourceGroupsClientListResponse]) {
			c.mu.Lock()
			defer c.mu.Unlock()
			var want string
			if opts != nil && opts.Filter != nil {
				if _, err := fmt.Sscanf(*opts.Filter, "tagName eq %q", &want); err != nil {
					t, ok := strings.CutPrefix(*opts.Filter, "tagName eq '")
					if !ok || !strings.HasSuffix(t, "'") {
						resp.AddResponseError(http.StatusBadRequest, "InvalidFilterInQueryString")
						return
					}
					want = strings.TrimSuffix(t, "'")
				}
			}
			var page []*armresources.ResourceGroup
			for _, g := range c.groups {
				if want == "" || tag(g.Tags, want) != "" {
					page = append(page, to.Ptr(clone(g.ResourceGroup)))
				}
			}
			resp.AddPage(http.StatusOK, armresources.ResourceGroupsClientListResponse{ResourceGroupListResult: armresources.ResourceGroupListResult{Value: page}}, nil)
			return
		},
	}}
}

var disallowedSet = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range disallowedAdmins {
		m[n] = true
	}
	return m
}()

func (c *cloud) computeServers() *computefake.ServerFactory {
	return &computefake.ServerFactory{
		VirtualMachineSizesServer: computefake.VirtualMachineSizesServer{
			NewListPager: func(location string, _ *armcompute.VirtualMachineSizesClientListOptions) (resp azfake.PagerResponder[armcompute.VirtualMachineSizesClientListResponse]) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if location != c.location {
					resp.AddResponseError(http.StatusBadRequest, "NoRegisteredProviderFound")
					return
				}
				resp.AddPage(http.StatusOK, armcompute.VirtualMachineSizesClientListResponse{VirtualMachineSizeListResult: armcompute.VirtualMachineSizeListResult{Value: clone(c.sizes)}}, nil)
				return
			},
		},
		GalleryImageVersionsServer: computefake.GalleryImageVersionsServer{
			Get: func(_ context.Context, group, gallery, image, version string, _ *armcompute.GalleryImageVersionsClientGetOptions) (resp azfake.Responder[armcompute.GalleryImageVersionsClientGetResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				id := resID(group, "Microsoft.Compute/galleries", gallery+"/images/"+image+"/versions/"+version)
				if !c.images[strings.ToLower(id)] {
					errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
					return
				}
				resp.SetResponse(http.StatusOK, armcompute.GalleryImageVersionsClientGetResponse{GalleryImageVersion: armcompute.GalleryImageVersion{ID: to.Ptr(id)}}, nil)
				return
			},
		},
		GalleryImagesServer: computefake.GalleryImagesServer{
			Get: func(_ context.Context, group, gallery, image string, _ *armcompute.GalleryImagesClientGetOptions) (resp azfake.Responder[armcompute.GalleryImagesClientGetResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				id := resID(group, "Microsoft.Compute/galleries", gallery+"/images/"+image)
				if !c.images[strings.ToLower(id)] {
					errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
					return
				}
				resp.SetResponse(http.StatusOK, armcompute.GalleryImagesClientGetResponse{GalleryImage: armcompute.GalleryImage{ID: to.Ptr(id)}}, nil)
				return
			},
		},
		VirtualMachineImagesServer: computefake.VirtualMachineImagesServer{
			List: func(_ context.Context, location, publisher, offer, sku string, _ *armcompute.VirtualMachineImagesClientListOptions) (resp azfake.Responder[armcompute.VirtualMachineImagesClientListResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				var out []*armcompute.VirtualMachineImageResource
				for urn := range c.images {
					if strings.HasPrefix(urn, strings.ToLower(publisher+":"+offer+":"+sku+":")) {
						out = append(out, &armcompute.VirtualMachineImageResource{Name: to.Ptr(urn[strings.LastIndex(urn, ":")+1:]), Location: to.Ptr(location)})
					}
				}
				resp.SetResponse(http.StatusOK, armcompute.VirtualMachineImagesClientListResponse{VirtualMachineImageResourceArray: out}, nil)
				return
			},
		},
		VirtualMachinesServer: c.vmServer(),
		DisksServer: computefake.DisksServer{
			BeginDelete: func(_ context.Context, group, name string, _ *armcompute.DisksClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.DisksClientDeleteResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, _ := c.writable(group); code == http.StatusNotFound {
					errResp.SetResponseError(code, "ResourceGroupNotFound")
					return
				}
				d, ok := c.disks[key(group, name)]
				switch {
				case !ok:
					return done[armcompute.DisksClientDeleteResponse](), errResp
				case d.ManagedBy != nil:
					errResp.SetResponseError(http.StatusConflict, "OperationNotAllowed")
					return
				}
				delete(c.disks, key(group, name))
				return lro(http.StatusAccepted, armcompute.DisksClientDeleteResponse{}, http.StatusOK), errResp
			},
		},
	}
}

func (c *cloud) vmServer() computefake.VirtualMachinesServer {
	return computefake.VirtualMachinesServer{
		BeginCreateOrUpdate: func(_ context.Context, group, name string, vm armcompute.VirtualMachine, _ *armcompute.VirtualMachinesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if code, msg := c.writable(group); code != 0 {
				errResp.SetResponseError(code, msg)
				return
			}
			p := vm.Properties
			if p == nil || p.OSProfile == nil || p.StorageProfile == nil || p.NetworkProfile == nil || p.HardwareProfile == nil || vm.Location == nil {
				errResp.SetResponseError(http.StatusBadRequest, "InvalidParameter")
				return
			}
			cn := to.Ptr(name)
			if p.OSProfile.ComputerName != nil {
				cn = p.OSProfile.ComputerName
			}
			switch {
			case len(*cn) > 15:
				errResp.SetResponseError(http.StatusBadRequest, "InvalidParameter") // computerName: at most 15 characters on Windows
				return
			case p.OSProfile.AdminUsername == nil || disallowedSet[strings.ToLower(*p.OSProfile.AdminUsername)]:
				errResp.SetResponseError(http.StatusBadRequest, "InvalidParameter")
				return
			case p.OSProfile.AdminPassword == nil || checkPassword(*p.OSProfile.AdminPassword) != "":
				errResp.SetResponseError(http.StatusBadRequest, "InvalidParameter")
				return
			}
			ref := p.StorageProfile.ImageReference
			if ref == nil || (ref.ID != nil && !c.images[strings.ToLower(*ref.ID)]) ||
				(ref.ID == nil && (ref.Publisher == nil || !c.hasURN(*ref.Publisher, *ref.Offer, *ref.SKU, *ref.Version))) {
				errResp.SetResponseError(http.StatusNotFound, "ImageNotFound")
				return
			}
			if !slices.ContainsFunc(c.sizes, func(s *armcompute.VirtualMachineSize) bool {
				return strings.EqualFold(*s.Name, string(*p.HardwareProfile.VMSize))
			}) {
				errResp.SetResponseError(http.StatusBadRequest, "InvalidParameter")
				return
			}
			var nics []*armnetwork.Interface
			for _, r := range p.NetworkProfile.NetworkInterfaces {
				nic := c.byID(r.ID)
				if nic == nil {
					errResp.SetResponseError(http.StatusBadRequest, "InvalidResourceReference")
					return
				}
				if nic.Properties.VirtualMachine != nil {
					errResp.SetResponseError(http.StatusBadRequest, "NicInUse")
					return
				}
				nics = append(nics, nic)
			}
			id := resID(group, "Microsoft.Compute/virtualMachines", name)
			stored := clone(vm)
			stored.ID, stored.Name = to.Ptr(id), to.Ptr(name)
			stored.Properties.OSProfile.AdminPassword = nil // Azure never returns it
			stored.Properties.TimeCreated = to.Ptr(time.Now().UTC())
			disk := p.StorageProfile.OSDisk
			diskName := name + "_OsDisk_1"
			if disk != nil && disk.Name != nil {
				diskName = *disk.Name
			}
			c.disks[key(group, diskName)] = &armcompute.Disk{ID: to.Ptr(resID(group, "Microsoft.Compute/disks", diskName)), Name: to.Ptr(diskName),
				Location: vm.Location, ManagedBy: to.Ptr(id)}
			for _, nic := range nics {
				nic.Properties.VirtualMachine = &armnetwork.SubResource{ID: to.Ptr(id)}
			}
			if c.vmFail != "" {
				stored.Properties.ProvisioningState = to.Ptr("Failed")
				c.vms[key(group, name)] = &stored
				var p azfake.PollerResponder[armcompute.VirtualMachinesClientCreateOrUpdateResponse]
				p.AddNonTerminalResponse(http.StatusCreated, nil)
				p.SetTerminalError(http.StatusOK, c.vmFail)
				return p, errResp
			}
			stored.Properties.ProvisioningState = to.Ptr("Succeeded")
			c.vms[key(group, name)] = &stored
			return lro(http.StatusCreated, armcompute.VirtualMachinesClientCreateOrUpdateResponse{VirtualMachine: clone(stored)}, http.StatusOK), errResp
		},
		Get: func(_ context.Context, group, name string, _ *armcompute.VirtualMachinesClientGetOptions) (resp azfake.Responder[armcompute.VirtualMachinesClientGetResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			vm, ok := c.vms[key(group, name)]
			if !ok {
				errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
				return
			}
			resp.SetResponse(http.StatusOK, armcompute.VirtualMachinesClientGetResponse{VirtualMachine: clone(*vm)}, nil)
			return
		},
		BeginDelete: func(_ context.Context, group, name string, _ *armcompute.VirtualMachinesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientDeleteResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if code, _ := c.writable(group); code == http.StatusNotFound {
				errResp.SetResponseError(code, "ResourceGroupNotFound")
				return
			}
			vm, ok := c.vms[key(group, name)]
			if !ok {
				return done[armcompute.VirtualMachinesClientDeleteResponse](), errResp
			}
			delete(c.vms, key(group, name))
			if d := vm.Properties.StorageProfile.OSDisk; d != nil && d.Name != nil {
				if disk, ok := c.disks[key(group, *d.Name)]; ok {
					disk.ManagedBy = nil
					if d.DeleteOption != nil && *d.DeleteOption == armcompute.DiskDeleteOptionTypesDelete {
						delete(c.disks, key(group, *d.Name))
					}
				}
			}
			for _, r := range vm.Properties.NetworkProfile.NetworkInterfaces {
				nic := c.byID(r.ID)
				if nic == nil {
					continue
				}
				nic.Properties.VirtualMachine = nil
				if r.Properties != nil && r.Properties.DeleteOption != nil && *r.Properties.DeleteOption == armcompute.DeleteOptionsDelete {
					delete(c.nics, strings.ToLower(groupOf(*nic.ID)+"/"+*nic.Name))
				}
			}
			return lro(http.StatusAccepted, armcompute.VirtualMachinesClientDeleteResponse{}, http.StatusOK), errResp
		},
		NewListPager: func(group string, _ *armcompute.VirtualMachinesClientListOptions) (resp azfake.PagerResponder[armcompute.VirtualMachinesClientListResponse]) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if _, ok := c.groups[strings.ToLower(group)]; !ok {
				resp.AddResponseError(http.StatusNotFound, "ResourceGroupNotFound")
				return
			}
			var out []*armcompute.VirtualMachine
			for k, vm := range c.vms {
				if strings.HasPrefix(k, strings.ToLower(group)+"/") {
					out = append(out, to.Ptr(clone(*vm)))
				}
			}
			resp.AddPage(http.StatusOK, armcompute.VirtualMachinesClientListResponse{VirtualMachineListResult: armcompute.VirtualMachineListResult{Value: out}}, nil)
			return
		},
		NewListAllPager: func(_ *armcompute.VirtualMachinesClientListAllOptions) (resp azfake.PagerResponder[armcompute.VirtualMachinesClientListAllResponse]) {
			c.mu.Lock()
			defer c.mu.Unlock()
			var out []*armcompute.VirtualMachine
			for _, vm := range c.vms {
				v := clone(*vm)
				g := groupOf(*v.ID)
				v.ID = to.Ptr(strings.Replace(*v.ID, "/resourceGroups/"+g+"/", "/resourceGroups/"+strings.ToUpper(g)+"/", 1))
				out = append(out, &v)
			}
			// Two pages, as a subscription with many VMs has.
			half := len(out) / 2
			resp.AddPage(http.StatusOK, armcompute.VirtualMachinesClientListAllResponse{VirtualMachineListResult: armcompute.VirtualMachineListResult{Value: out[:half]}}, nil)
			resp.AddPage(http.StatusOK, armcompute.VirtualMachinesClientListAllResponse{VirtualMachineListResult: armcompute.VirtualMachineListResult{Value: out[half:]}}, nil)
			return
		},
		BeginRunCommand: func(_ context.Context, group, name string, in armcompute.RunCommandInput, _ *armcompute.VirtualMachinesClientBeginRunCommandOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientRunCommandResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if _, ok := c.vms[key(group, name)]; !ok {
				errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
				return
			}
			c.ran = append(c.ran, in)
			stdout, stderr := c.runOutput(name)
			res := armcompute.RunCommandResult{Value: []*armcompute.InstanceViewStatus{
				{Code: to.Ptr("ComponentStatus/StdOut/succeeded"), Level: to.Ptr(armcompute.StatusLevelTypesInfo), DisplayStatus: to.Ptr("Provisioning succeeded"), Message: to.Ptr(stdout)},
				{Code: to.Ptr("ComponentStatus/StdErr/succeeded"), Level: to.Ptr(armcompute.StatusLevelTypesInfo), DisplayStatus: to.Ptr("Provisioning succeeded"), Message: to.Ptr(stderr)},
			}}
			return lro(http.StatusAccepted, armcompute.VirtualMachinesClientRunCommandResponse{RunCommandResult: res}, http.StatusOK), errResp
		},
		RetrieveBootDiagnosticsData: func(_ context.Context, group, name string, _ *armcompute.VirtualMachinesClientRetrieveBootDiagnosticsDataOptions) (resp azfake.Responder[armcompute.VirtualMachinesClientRetrieveBootDiagnosticsDataResponse], errResp azfake.ErrorResponder) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if _, ok := c.vms[key(group, name)]; !ok {
				errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
				return
			}
			resp.SetResponse(http.StatusOK, armcompute.VirtualMachinesClientRetrieveBootDiagnosticsDataResponse{RetrieveBootDiagnosticsDataResult: armcompute.RetrieveBootDiagnosticsDataResult{
				SerialConsoleLogBlobURI: to.Ptr(c.serialLogURL)}}, nil)
			return
		},
	}
}

func (c *cloud) hasURN(pub, offer, sku, version string) bool {
	if version != "latest" {
		return c.images[strings.ToLower(pub+":"+offer+":"+sku+":"+version)]
	}
	for urn := range c.images {
		if strings.HasPrefix(urn, strings.ToLower(pub+":"+offer+":"+sku+":")) {
			return true
		}
	}
	return false
}

// groupOf returns the resource group named in an ID.
func groupOf(id string) string {
	_, rest, _ := strings.Cut(id, "/resourceGroups/")
	g, _, _ := strings.Cut(rest, "/")
	return g
}

func (c *cloud) byID(id *string) *armnetwork.Interface {
	if id == nil {
		return nil
	}
	i := strings.LastIndex(*id, "/")
	return c.nics[strings.ToLower(groupOf(*id)+"/"+(*id)[i+1:])]
}

func (c *cloud) networkServers() *networkfake.ServerFactory {
	return &networkfake.ServerFactory{
		VirtualNetworksServer: networkfake.VirtualNetworksServer{
			BeginCreateOrUpdate: func(_ context.Context, group, name string, vnet armnetwork.VirtualNetwork, _ *armnetwork.VirtualNetworksClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armnetwork.VirtualNetworksClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, msg := c.writable(group); code != 0 {
					errResp.SetResponseError(code, msg)
					return
				}
				v := clone(vnet)
				v.ID, v.Name = to.Ptr(resID(group, "Microsoft.Network/virtualNetworks", name)), to.Ptr(name)
				for _, sn := range v.Properties.Subnets {
					sn.ID = to.Ptr(*v.ID + "/subnets/" + *sn.Name)
				}
				c.vnets[key(group, name)] = &v
				return lro(http.StatusCreated, armnetwork.VirtualNetworksClientCreateOrUpdateResponse{VirtualNetwork: clone(v)}, http.StatusOK), errResp
			},
		},
		SubnetsServer: networkfake.SubnetsServer{
			Get: func(_ context.Context, group, vnet, name string, _ *armnetwork.SubnetsClientGetOptions) (resp azfake.Responder[armnetwork.SubnetsClientGetResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				id := resID(group, "Microsoft.Network/virtualNetworks", vnet+"/subnets/"+name)
				if !c.subnets[strings.ToLower(id)] {
					errResp.SetResponseError(http.StatusNotFound, "NotFound")
					return
				}
				resp.SetResponse(http.StatusOK, armnetwork.SubnetsClientGetResponse{Subnet: armnetwork.Subnet{ID: to.Ptr(id), Name: to.Ptr(name)}}, nil)
				return
			},
		},
		SecurityGroupsServer: networkfake.SecurityGroupsServer{
			BeginCreateOrUpdate: func(_ context.Context, group, name string, nsg armnetwork.SecurityGroup, _ *armnetwork.SecurityGroupsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armnetwork.SecurityGroupsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, msg := c.writable(group); code != 0 {
					errResp.SetResponseError(code, msg)
					return
				}
				v := clone(nsg)
				v.ID, v.Name = to.Ptr(resID(group, "Microsoft.Network/networkSecurityGroups", name)), to.Ptr(name)
				c.nsgs[key(group, name)] = &v
				return lro(http.StatusCreated, armnetwork.SecurityGroupsClientCreateOrUpdateResponse{SecurityGroup: clone(v)}, http.StatusOK), errResp
			},
		},
		PublicIPAddressesServer: networkfake.PublicIPAddressesServer{
			BeginCreateOrUpdate: func(_ context.Context, group, name string, pip armnetwork.PublicIPAddress, _ *armnetwork.PublicIPAddressesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armnetwork.PublicIPAddressesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, msg := c.writable(group); code != 0 {
					errResp.SetResponseError(code, msg)
					return
				}
				v := clone(pip)
				v.ID, v.Name = to.Ptr(resID(group, "Microsoft.Network/publicIPAddresses", name)), to.Ptr(name)
				c.ips++
				v.Properties.IPAddress = to.Ptr(fmt.Sprintf("203.0.113.%d", 10+c.ips))
				c.pips[key(group, name)] = &v
				return lro(http.StatusCreated, armnetwork.PublicIPAddressesClientCreateOrUpdateResponse{PublicIPAddress: clone(v)}, http.StatusOK), errResp
			},
			Get: func(_ context.Context, group, name string, _ *armnetwork.PublicIPAddressesClientGetOptions) (resp azfake.Responder[armnetwork.PublicIPAddressesClientGetResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				v, ok := c.pips[key(group, name)]
				if !ok {
					errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
					return
				}
				resp.SetResponse(http.StatusOK, armnetwork.PublicIPAddressesClientGetResponse{PublicIPAddress: clone(*v)}, nil)
				return
			},
			BeginDelete: func(_ context.Context, group, name string, _ *armnetwork.PublicIPAddressesClientBeginDeleteOptions) (resp azfake.PollerResponder[armnetwork.PublicIPAddressesClientDeleteResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, _ := c.writable(group); code == http.StatusNotFound {
					errResp.SetResponseError(code, "ResourceGroupNotFound")
					return
				}
				if _, ok := c.pips[key(group, name)]; !ok {
					return done[armnetwork.PublicIPAddressesClientDeleteResponse](), errResp
				}
				for _, nic := range c.nics {
					for _, ipc := range nic.Properties.IPConfigurations {
						if pip := ipc.Properties.PublicIPAddress; pip != nil && strings.EqualFold(*pip.ID, resID(group, "Microsoft.Network/publicIPAddresses", name)) {
							errResp.SetResponseError(http.StatusBadRequest, "PublicIPAddressInUse")
							return
						}
					}
				}
				delete(c.pips, key(group, name))
				return lro(http.StatusAccepted, armnetwork.PublicIPAddressesClientDeleteResponse{}, http.StatusOK), errResp
			},
		},
		InterfacesServer: networkfake.InterfacesServer{
			BeginCreateOrUpdate: func(_ context.Context, group, name string, nic armnetwork.Interface, _ *armnetwork.InterfacesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armnetwork.InterfacesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, msg := c.writable(group); code != 0 {
					errResp.SetResponseError(code, msg)
					return
				}
				v := clone(nic)
				v.ID, v.Name = to.Ptr(resID(group, "Microsoft.Network/networkInterfaces", name)), to.Ptr(name)
				for _, ipc := range v.Properties.IPConfigurations {
					sn := ipc.Properties.Subnet
					if sn == nil || sn.ID == nil || !c.subnetExists(*sn.ID) {
						errResp.SetResponseError(http.StatusBadRequest, "InvalidResourceReference")
						return
					}
					if pip := ipc.Properties.PublicIPAddress; pip != nil {
						i := strings.LastIndex(*pip.ID, "/")
						if _, ok := c.pips[strings.ToLower(groupOf(*pip.ID)+"/"+(*pip.ID)[i+1:])]; !ok {
							errResp.SetResponseError(http.StatusBadRequest, "InvalidResourceReference")
							return
						}
					}
					ipc.Properties.PrivateIPAddress = to.Ptr(c.nextAddress(*sn.ID))
				}
				if nsg := v.Properties.NetworkSecurityGroup; nsg != nil {
					i := strings.LastIndex(*nsg.ID, "/")
					if _, ok := c.nsgs[strings.ToLower(groupOf(*nsg.ID)+"/"+(*nsg.ID)[i+1:])]; !ok {
						errResp.SetResponseError(http.StatusBadRequest, "InvalidResourceReference")
						return
					}
				}
				c.nics[key(group, name)] = &v
				return lro(http.StatusCreated, armnetwork.InterfacesClientCreateOrUpdateResponse{Interface: clone(v)}, http.StatusOK), errResp
			},
			Get: func(_ context.Context, group, name string, _ *armnetwork.InterfacesClientGetOptions) (resp azfake.Responder[armnetwork.InterfacesClientGetResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				v, ok := c.nics[key(group, name)]
				if !ok {
					errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
					return
				}
				resp.SetResponse(http.StatusOK, armnetwork.InterfacesClientGetResponse{Interface: clone(*v)}, nil)
				return
			},
			BeginDelete: func(_ context.Context, group, name string, _ *armnetwork.InterfacesClientBeginDeleteOptions) (resp azfake.PollerResponder[armnetwork.InterfacesClientDeleteResponse], errResp azfake.ErrorResponder) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if code, _ := c.writable(group); code == http.StatusNotFound {
					errResp.SetResponseError(code, "ResourceGroupNotFound")
					return
				}
				nic, ok := c.nics[key(group, name)]
				switch {
				case !ok:
					return done[armnetwork.InterfacesClientDeleteResponse](), errResp
				case nic.Properties.VirtualMachine != nil:
					errResp.SetResponseError(http.StatusBadRequest, "NicInUse")
					return
				case c.reserved[name] > 0:
					c.reserved[name]--
					errResp.SetResponseError(http.StatusBadRequest, "NicReservedForAnotherVm")
					return
				}
				delete(c.nics, key(group, name))
				return lro(http.StatusAccepted, armnetwork.InterfacesClientDeleteResponse{}, http.StatusOK), errResp
			},
			NewListPager: func(group string, _ *armnetwork.InterfacesClientListOptions) (resp azfake.PagerResponder[armnetwork.InterfacesClientListResponse]) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if _, ok := c.groups[strings.ToLower(group)]; !ok {
					resp.AddResponseError(http.StatusNotFound, "ResourceGroupNotFound")
					return
				}
				var out []*armnetwork.Interface
				for k, v := range c.nics {
					if strings.HasPrefix(k, strings.ToLower(group)+"/") {
						out = append(out, to.Ptr(clone(*v)))
					}
				}
				resp.AddPage(http.StatusOK, armnetwork.InterfacesClientListResponse{InterfaceListResult: armnetwork.InterfaceListResult{Value: out}}, nil)
				return
			},
		},
	}
}

func (c *cloud) subnetExists(id string) bool {
	if c.subnets[strings.ToLower(id)] {
		return true
	}
	vnetID, name, ok := strings.Cut(id, "/subnets/")
	if !ok {
		return false
	}
	i := strings.LastIndex(vnetID, "/")
	v, ok := c.vnets[strings.ToLower(groupOf(vnetID)+"/"+vnetID[i+1:])]
	if !ok {
		return false
	}
	return slices.ContainsFunc(v.Properties.Subnets, func(s *armnetwork.Subnet) bool { return *s.Name == name })
}

// nextAddress hands out the subnet's next free address: Azure keeps the
// first four of every subnet (network, gateway, two for DNS), so the first
// NIC gets .4.
func (c *cloud) nextAddress(subnet string) string {
	prefix := netip.MustParsePrefix("10.0.0.0/24")
	if p, ok := c.subnetPrefix[strings.ToLower(subnet)]; ok {
		prefix = p
	}
	for _, v := range c.vnets {
		for _, sn := range v.Properties.Subnets {
			if strings.EqualFold(*sn.ID, subnet) {
				prefix = netip.MustParsePrefix(*sn.Properties.AddressPrefix)
			}
		}
	}
	used := map[string]bool{}
	for _, n := range c.nics {
		for _, ipc := range n.Properties.IPConfigurations {
			if ipc.Properties.PrivateIPAddress != nil {
				used[*ipc.Properties.PrivateIPAddress] = true
			}
		}
	}
	a := prefix.Addr()
	for range 4 {
		a = a.Next()
	}
	for used[a.String()] {
		a = a.Next()
	}
	return a.String()
}

// provider opens the azure provider against the stand-in, as Open does
// from a VM file, with polls and retries short for tests.
func (c *cloud) provider(t *testing.T, s Settings) *provider {
	t.Helper()
	p, err := open(context.Background(), vmsFile(), s, c.deps())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.(*provider)
}

func (c *cloud) deps() deps {
	return deps{arm: c.transport(), cred: &azfake.TokenCredential{}, poll: time.Millisecond,
		retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Second}}
}
