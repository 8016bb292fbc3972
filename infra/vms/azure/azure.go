package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azcloud "github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// The clouds connection.endpoint may name (its Resource Manager endpoint);
// none: Azure's public cloud.
var clouds = map[string]azcloud.Configuration{
	"https://management.azure.com":         azcloud.AzurePublic,
	"https://management.usgovcloudapi.net": azcloud.AzureGovernment,
	"https://management.chinacloudapi.cn":  azcloud.AzureChina,
}

func init() {
	vms.Register(config.Provider{Name: "azure", Summary: "an Azure subscription", Endpoint: config.Optional, EndpointExample: "https://management.azure.com",
		User: config.Optional, Credentials: []config.Credential{{Name: "clientSecret"}}},
		func(ctx context.Context, f *vms.File, s *Settings) (vms.Provider, error) {
			return open(ctx, f, *s, deps{})
		})
}

// deps are what tests replace: the transport to Azure Resource Manager
// and to Microsoft Entra ID, and how often the provider polls.
type deps struct {
	// arm carries every Resource Manager request (nil: the network).
	arm policy.Transporter
	// login carries the service principal's sign-in (nil: the network).
	login policy.Transporter
	// cred replaces the credential altogether (nil: from the VM file).
	cred azcore.TokenCredential
	// poll is how often long-running operations and deletions are polled
	// (0: pollEvery); retry is the SDK's retry policy (zero: retryPolicy).
	poll  time.Duration
	retry policy.RetryOptions
	// blob reads the serial log's blob (nil: a client of its own).
	blob *http.Client
}

// pollEvery is how often the provider asks how an operation is going when
// Azure does not say (Retry-After): a VM takes minutes to make.
const pollEvery = 10 * time.Second

// retryPolicy is the SDK's retry policy as the provider sets it: Resource
// Manager throttles with 429 and a Retry-After header (seconds to wait),
// which the policy honours up to MaxRetryDelay; throttling that lasts
// longer ends in a *azcore.ResponseError with 429, which explain names.
var retryPolicy = policy.RetryOptions{MaxRetries: 6, RetryDelay: 2 * time.Second, MaxRetryDelay: 2 * time.Minute}

// provider makes machines in one subscription.
type provider struct {
	s     Settings
	f     *vms.File
	cred  azcore.TokenCredential
	opts  *arm.ClientOptions
	poll  time.Duration
	retry policy.RetryOptions
	image image // from the VM file; kind "" when it could not be read

	groups     *armresources.ResourceGroupsClient
	vms        *armcompute.VirtualMachinesClient
	disks      *armcompute.DisksClient
	sizes      *armcompute.VirtualMachineSizesClient
	images     *armcompute.VirtualMachineImagesClient
	nics       *armnetwork.InterfacesClient
	pips       *armnetwork.PublicIPAddressesClient
	nsgs       *armnetwork.SecurityGroupsClient
	vnets      *armnetwork.VirtualNetworksClient
	subnets    *armnetwork.SubnetsClient
	sizeCores  int32
	sizeMemory int32 // MiB

	blob *http.Client // reads the serial log (nil: a client of its own)

	mu     sync.Mutex
	runs   map[string]*runState // by resource group, lower case
	closed bool
}

// runState is what the provider made once for a run's group.
type runState struct {
	mu       sync.Mutex
	ready    bool   // the group, its network and NSG are made
	subnet   string // the subnet's ID
	nsg      string // the NSG's ID, "" for none
	inflight int    // Creates under way: the group is not deleted while > 0
}

func open(ctx context.Context, f *vms.File, s Settings, d deps) (vms.Provider, error) {
	cfg := f.Connection
	cloudCfg := azcloud.AzurePublic
	if e := strings.TrimRight(cfg.Endpoint, "/"); e != "" {
		c, known := clouds[strings.ToLower(e)]
		if !known {
			return nil, config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("%q is not an Azure cloud's Resource Manager endpoint", cfg.Endpoint),
				"remove endpoint for Azure's public cloud, or write https://management.usgovcloudapi.net or https://management.chinacloudapi.cn", nil)
		}
		cloudCfg = c
	}
	retry := retryPolicy
	if d.retry.MaxRetries != 0 || d.retry.RetryDelay != 0 {
		retry = d.retry
	}
	client := azcore.ClientOptions{Cloud: cloudCfg, Retry: retry, Transport: d.arm,
		Telemetry: policy.TelemetryOptions{ApplicationID: "winconform"}}
	cred := d.cred
	if cred == nil {
		var err error
		if cred, err = credential(cfg, s, azcore.ClientOptions{Cloud: cloudCfg, Transport: d.login, Retry: retry}); err != nil {
			return nil, err
		}
	}
	p := &provider{s: s, f: f, cred: cred, opts: &arm.ClientOptions{ClientOptions: client}, poll: d.poll, retry: retry, runs: map[string]*runState{}, blob: d.blob}
	if p.poll == 0 {
		p.poll = pollEvery
	}
	if err := p.clients(); err != nil {
		return nil, err
	}
	if f.Image != "" {
		im, err := parseImage(f.Image)
		if err != nil {
			return nil, config.Problem(field.NewPath("image"), err.Error(), fixImage, err)
		}
		p.image = im
	}
	// One request proves the credentials, the subscription and the
	// location, and says what the size has.
	if err := p.checkSize(ctx); err != nil {
		return nil, err
	}
	if p.image.kind != "" {
		if err := p.checkImage(ctx, p.image); err != nil {
			return nil, err
		}
	}
	if s.Network.Subnet != "" {
		if err := p.checkSubnet(ctx); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// credential is the identity the provider signs in as: the service
// principal of connection.user with its clientSecret, else the default
// chain (AZURE_* variables, workload identity, managed identity, az login).
func credential(c config.Connection, s Settings, opts azcore.ClientOptions) (azcore.TokenCredential, error) {
	if c.User != "" {
		cred, err := azidentity.NewClientSecretCredential(s.Tenant, c.User, c.Credentials["clientSecret"].Secret.Reveal(),
			&azidentity.ClientSecretCredentialOptions{ClientOptions: opts, DisableInstanceDiscovery: opts.Transport != nil})
		if err != nil {
			return nil, config.Problem(field.NewPath("connection", "user"), "cannot make the service principal's credential: "+err.Error(),
				"check connection.user (the client ID) and azure.tenant", err)
		}
		return cred, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: opts})
	if err != nil {
		return nil, config.Problem(field.NewPath("connection"), "no Azure credentials: "+err.Error(),
			"set connection.user (a service principal's client ID), azure.tenant and connection.credentials.clientSecret: {env: AZURE_CLIENT_SECRET}, or sign in (az login) or use a managed identity", err)
	}
	return cred, nil
}

// clients makes the provider's clients, through each module's client
// factory (the SDK's one way to make a module's clients).
func (p *provider) clients() error {
	sub, cred, o := p.s.Subscription, p.cred, p.opts
	resources, err := armresources.NewClientFactory(sub, cred, o)
	if err != nil {
		return err
	}
	compute, err := armcompute.NewClientFactory(sub, cred, o)
	if err != nil {
		return err
	}
	network, err := armnetwork.NewClientFactory(sub, cred, o)
	if err != nil {
		return err
	}
	p.groups = resources.NewResourceGroupsClient()
	p.vms, p.disks, p.sizes, p.images = compute.NewVirtualMachinesClient(), compute.NewDisksClient(), compute.NewVirtualMachineSizesClient(), compute.NewVirtualMachineImagesClient()
	p.nics, p.pips, p.nsgs = network.NewInterfacesClient(), network.NewPublicIPAddressesClient(), network.NewSecurityGroupsClient()
	p.vnets, p.subnets = network.NewVirtualNetworksClient(), network.NewSubnetsClient()
	return nil
}

// checkSize lists the sizes offered in the location: the first request to
// Azure, so the one that finds bad credentials, a subscription the identity
// cannot reach, and a location that is not one.
func (p *provider) checkSize(ctx context.Context) error {
	var names []string
	pager := p.sizes.NewListPager(p.s.Location, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return p.explain(err, "list the VM sizes of "+p.s.Location)
		}
		for _, sz := range page.Value {
			if sz.Name == nil {
				continue
			}
			names = append(names, *sz.Name)
			if strings.EqualFold(*sz.Name, p.s.Size) {
				if sz.NumberOfCores != nil {
					p.sizeCores = *sz.NumberOfCores
				}
				if sz.MemoryInMB != nil {
					p.sizeMemory = *sz.MemoryInMB
				}
				return nil
			}
		}
	}
	fix := fmt.Sprintf("use a size offered in %s (az vm list-sizes --location %s)", p.s.Location, p.s.Location)
	return config.Problem(field.NewPath("azure", "size"), fmt.Sprintf("%q is not offered in %s", p.s.Size, p.s.Location), fix, nil)
}

func (p *provider) checkSubnet(ctx context.Context) error {
	id, err := arm.ParseResourceID(p.s.Network.Subnet)
	if err != nil {
		return config.Problem(field.NewPath("azure", "network", "subnet"), err.Error(), "write the subnet's resource ID", err)
	}
	c := p.subnets
	if !strings.EqualFold(id.SubscriptionID, p.s.Subscription) {
		if c, err = armnetwork.NewSubnetsClient(id.SubscriptionID, p.cred, p.opts); err != nil {
			return err
		}
	}
	_, err = c.Get(ctx, id.ResourceGroupName, id.Parent.Name, id.Name, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == 404 {
		return config.Problem(field.NewPath("azure", "network", "subnet"), fmt.Sprintf("%s does not exist (Azure: %s)", p.s.Network.Subnet, re.ErrorCode),
			"write an existing subnet's ID (az network vnet subnet list -g GROUP --vnet-name VNET --query [].id), or remove subnet to make a network in the run's group", err)
	}
	if err != nil {
		return p.explain(err, "read subnet "+p.s.Network.Subnet)
	}
	return nil
}

// explain turns an error from Azure into one that names the VM file's
// field at fault and the fix, where one is: credentials Microsoft Entra ID
// refuses, a subscription the identity cannot reach, a location that is
// not one, an endpoint that does not answer, throttling that outlasted
// the retries. Other errors are returned as they are, with what was done.
func (p *provider) explain(err error, doing string) error {
	var (
		authErr  *azidentity.AuthenticationFailedError
		re       *azcore.ResponseError
		urlErr   *url.Error
		netErr   net.Error
		fieldErr *field.Error
	)
	switch {
	case errors.As(err, &fieldErr):
		return err
	case errors.As(err, &authErr):
		at, fix := field.NewPath("connection", "credentials").Key("clientSecret"), "check the service principal's secret (it may have expired: az ad app credential list --id CLIENT_ID), connection.user and azure.tenant"
		if p.f.Connection.User == "" {
			at, fix = field.NewPath("connection"), "sign in again (az login), or set connection.user, azure.tenant and connection.credentials.clientSecret for a service principal"
		}
		return config.Problem(at, "Microsoft Entra ID refused the sign-in: "+entraCode(authErr.Error()), fix, err)
	case strings.Contains(err.Error(), "DefaultAzureCredential: failed to acquire a token"):
		return config.Problem(field.NewPath("connection"), "no Azure credentials found: "+firstLine(err.Error()),
			"set connection.user (a service principal's client ID), azure.tenant and connection.credentials.clientSecret, or sign in (az login), or run where a managed identity is", err)
	case errors.As(err, &re):
		return p.explainResponse(re, doing)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", doing, err)
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		return config.Problem(field.NewPath("connection", "endpoint"), "cannot reach Azure Resource Manager: "+firstLine(err.Error()),
			"check the network from here to Azure (a proxy: HTTPS_PROXY), and endpoint if set", err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

func (p *provider) explainResponse(re *azcore.ResponseError, doing string) error {
	code := re.ErrorCode
	msg := fmt.Sprintf("%s: Azure answered %d %s", doing, re.StatusCode, code)
	switch {
	case code == "SubscriptionNotFound" || code == "InvalidSubscriptionId":
		return config.Problem(field.NewPath("azure", "subscription"), fmt.Sprintf("subscription %s cannot be reached (%s)", p.s.Subscription, code),
			"check the ID (az account list --query [].id) and that the identity has a role on it", re)
	case code == "InvalidAuthenticationTokenTenant":
		return config.Problem(field.NewPath("azure", "tenant"), fmt.Sprintf("subscription %s is not in tenant %s (%s)", p.s.Subscription, p.s.Tenant, code),
			"set tenant to the subscription's tenant (az account show --subscription SUB --query tenantId)", re)
	case code == "AuthorizationFailed" || re.StatusCode == 403:
		return config.Problem(field.NewPath("azure", "subscription"), fmt.Sprintf("the identity may not %s in subscription %s (%s)", doing, p.s.Subscription, code),
			"give the identity the Contributor role on the subscription (az role assignment create --assignee CLIENT_ID --role Contributor --scope /subscriptions/SUB)", re)
	case code == "NoRegisteredProviderFound" || code == "LocationNotAvailableForResourceType" || code == "InvalidLocation" || code == "LocationRequired":
		return config.Problem(field.NewPath("azure", "location"), fmt.Sprintf("%q is not a region Azure offers VMs in to this subscription (%s)", p.s.Location, code),
			"use a region's name such as westeurope (az account list-locations --query [].name)", re)
	case code == "ResourceGroupBeingDeleted":
		return &azureError{msg: fmt.Sprintf("%s: the run's resource group is being deleted (409 %s: a down or sweep of this run ID, maybe from another process): wait until it is gone, or use another run ID", doing, code), err: re}
	case re.StatusCode == 401:
		return config.Problem(field.NewPath("connection", "credentials"), fmt.Sprintf("Azure Resource Manager refused the token (%s)", code),
			"check the credentials and azure.tenant", re)
	case re.StatusCode == 429:
		return &azureError{msg: fmt.Sprintf("%s, and went on throttling past the SDK's %d retries (Retry-After honoured up to %s): run fewer machines at once, or later",
			msg, p.retry.MaxRetries, p.retry.MaxRetryDelay), err: re}
	}
	return &azureError{msg: msg + azureMessage(re), err: re}
}

// azureError is an error Azure answered, said in one line: what was
// being done, the status, Azure's code and message (the SDK's own text
// dumps the request and the response over many lines).
type azureError struct {
	msg string
	err *azcore.ResponseError
}

func (e *azureError) Error() string { return e.msg }
func (e *azureError) Unwrap() error { return e.err }

// azureMessage returns ": <Azure's message>" from an error's body, "" when
// it has none.
func azureMessage(re *azcore.ResponseError) string {
	if re.RawResponse == nil {
		return ""
	}
	body, err := runtime.Payload(re.RawResponse)
	if err != nil {
		return ""
	}
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.Error.Message == "" {
		return ""
	}
	return ": " + firstLine(doc.Error.Message)
}

// entraCode keeps the AADSTS line of a sign-in error: what Microsoft Entra
// ID said, without the request's dump.
func entraCode(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "AADSTS"); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
	}
	return firstLine(s)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Close marks the provider closed; the SDK's clients hold nothing to free.
func (p *provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}
