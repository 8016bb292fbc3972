package azure

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"go.yaml.in/yaml/v3"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/internal/strictyaml"
)

// Settings is the VM file's azure block, decoded and checked.
type Settings struct {
	// Subscription is the subscription's ID; Tenant the Microsoft Entra
	// tenant of a service principal ("" with the default credential chain).
	Subscription, Tenant string
	// Location is the region the run's resource group and machines are in.
	Location string
	// Size is the VM size (Standard_D4s_v3): it, not cpus and memory,
	// decides the machine's CPUs and memory; Create refuses a size smaller
	// than the VM file's cpus and memory.
	Size string
	// ResourceGroupPrefix starts the run's resource group's name:
	// "<prefix>-<run ID>".
	ResourceGroupPrefix string
	// AdminUser and AdminPassword are the VM's administrator account, the
	// one the join logs in as (the machine block's user and passwordFrom).
	AdminUser     string
	AdminPassword vms.Secret
	// Subnet is an existing subnet's resource ID; "" to make a virtual
	// network (AddressSpace) in the run's group.
	Subnet       string
	AddressSpace netip.Prefix
	// PublicIP gives each VM a public address (Standard SKU, static).
	PublicIP bool
	// WinRMFrom are the source ranges a network security group on each
	// NIC lets reach WinRM (TCP 5985 and 5986); none: no NSG is made.
	WinRMFrom []netip.Prefix
	// WinRMSetup is how WinRM is made reachable in the guest: "runCommand"
	// (the provider runs winrm-setup.ps1 through Azure's Run Command once
	// the VM is provisioned) or "none" (the image does it itself).
	WinRMSetup string
	// Tags are added to every resource the provider makes (the run's tags
	// are added to them and cannot be set here).
	Tags map[string]string
}

// The WinRM setups.
const (
	SetupRunCommand = "runCommand"
	SetupNone       = "none"
)

// Defaults.
const (
	DefaultResourceGroupPrefix = "winconform"
	DefaultAddressSpace        = "10.240.0.0/16"
)

type settingsDoc struct {
	Subscription        yaml.Node            `yaml:"subscription"`
	Tenant              yaml.Node            `yaml:"tenant"`
	Location            yaml.Node            `yaml:"location"`
	Size                yaml.Node            `yaml:"size"`
	ResourceGroupPrefix yaml.Node            `yaml:"resourceGroupPrefix"`
	Admin               yaml.Node            `yaml:"admin"`
	Network             yaml.Node            `yaml:"network"`
	WinRMSetup          yaml.Node            `yaml:"winrmSetup"`
	Tags                yaml.Node            `yaml:"tags"`
	Unknown             map[string]yaml.Node `yaml:",inline"`
}

type adminDoc struct {
	User     yaml.Node            `yaml:"user"`
	Password yaml.Node            `yaml:"password"`
	Unknown  map[string]yaml.Node `yaml:",inline"`
}

type networkDoc struct {
	Subnet       yaml.Node            `yaml:"subnet"`
	AddressSpace yaml.Node            `yaml:"addressSpace"`
	PublicIP     yaml.Node            `yaml:"publicIP"`
	WinRMFrom    yaml.Node            `yaml:"winrmFrom"`
	Unknown      map[string]yaml.Node `yaml:",inline"`
}

var (
	guid = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// location is a region's name as ARM writes it (westeurope, eastus2).
	location = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	// size is a VM size's name (Standard_D4s_v3, Standard_D4ads_v5).
	size = regexp.MustCompile(`^(Standard|Basic)_[A-Za-z0-9_]+$`)
	// groupPrefix keeps "<prefix>-<run ID>" a resource group name (at
	// most 90 characters of letters, digits, '-', '_', '.', '(' and ')').
	groupPrefix = regexp.MustCompile(`^[A-Za-z0-9_()-][A-Za-z0-9_.()-]{0,39}$`)
)

// disallowedAdmins are the administrator names Azure refuses for a VM
// (armcompute's OSProfile.AdminUsername: "Disallowed values"), compared
// without case.
var disallowedAdmins = []string{"administrator", "admin", "user", "user1", "test", "user2", "test1", "user3", "admin1", "1", "123",
	"a", "actuser", "adm", "admin2", "aspnet", "backup", "console", "david", "guest", "john", "owner", "root", "server", "sql",
	"support", "support_388945a0", "sys", "test2", "test3", "user4", "user5"}

// disallowedPasswords are the passwords Azure refuses
// (OSProfile.AdminPassword: "Disallowed values").
var disallowedPasswords = []string{"abc@123", "P@$$w0rd", "P@ssw0rd", "P@ssword123", "Pa$$word", "pass@word1", "Password!", "Password1",
	"Password22", "iloveyou!"}

func decodeSettings(b *vms.Block) any {
	var doc settingsDoc
	if !b.Decode(&doc, "write a mapping such as {subscription: <ID>, location: westeurope, size: Standard_D4s_v3, admin: {user: winadmin, password: {env: WINDOWS_ADMIN_PASSWORD}}}") {
		return nil
	}
	s := Settings{}
	s.Subscription = b.Required("subscription", &doc.Subscription, "set subscription to the subscription's ID (az account show --query id)")
	if s.Subscription != "" && !guid.MatchString(s.Subscription) {
		b.Report("subscription", &doc.Subscription, strictyaml.Quote(s.Subscription)+" is not a subscription ID", "write the subscription's ID, a GUID such as 00000000-0000-0000-0000-000000000000 (az account show --query id), not its name")
	}
	conn := b.Connection()
	s.Tenant = b.String("tenant", &doc.Tenant)
	switch {
	case s.Tenant != "" && !guid.MatchString(s.Tenant):
		b.Report("tenant", &doc.Tenant, strictyaml.Quote(s.Tenant)+" is not a tenant ID", "write the Microsoft Entra tenant's ID, a GUID (az account show --query tenantId)")
	case conn.User != "" && s.Tenant == "":
		b.Report("tenant", nil, "is missing: a service principal (connection.user) signs in to its tenant", "set tenant to the service principal's tenant ID (az account show --query tenantId)")
	case conn.User == "" && s.Tenant != "":
		b.Report("tenant", &doc.Tenant, "is set without a service principal", "set connection.user to the service principal's client ID and connection.credentials.clientSecret, or remove tenant to use the default credential chain")
	}
	if conn.User != "" && !guid.MatchString(conn.User) {
		b.ReportConnection("user", strictyaml.Quote(conn.User)+" is not a client ID", "set user to the service principal's application (client) ID, a GUID (az ad sp list --display-name NAME --query [].appId)")
	}
	if _, ok := conn.Credentials["clientSecret"]; ok && conn.User == "" {
		b.ReportConnection("user", "is missing: credentials.clientSecret is a service principal's", "set user to the service principal's application (client) ID")
	}
	if _, ok := conn.Credentials["clientSecret"]; !ok && conn.User != "" {
		b.ReportConnection("credentials.clientSecret", "is missing: the service principal connection.user names needs its secret", "set credentials.clientSecret: {env: AZURE_CLIENT_SECRET} or {file: PATH}")
	}

	s.Location = b.Required("location", &doc.Location, "set location to the region to make the machines in, such as westeurope (az account list-locations --query [].name)")
	if s.Location != "" && !location.MatchString(s.Location) {
		b.Report("location", &doc.Location, strictyaml.Quote(s.Location)+" is not a region's name", "write the region's name as Azure writes it: lower case, no spaces, such as westeurope or eastus2 (az account list-locations --query [].name)")
	}
	s.Size = b.Required("size", &doc.Size, "set size to a VM size with at least the VM file's cpus and memory, such as Standard_D4s_v3 (az vm list-sizes --location LOCATION)")
	if s.Size != "" && !size.MatchString(s.Size) {
		b.Report("size", &doc.Size, strictyaml.Quote(s.Size)+" is not a VM size", "write a size as Azure names it, such as Standard_D4s_v3 (az vm list-sizes --location LOCATION)")
	}
	s.ResourceGroupPrefix = b.String("resourceGroupPrefix", &doc.ResourceGroupPrefix)
	switch {
	case s.ResourceGroupPrefix == "":
		s.ResourceGroupPrefix = DefaultResourceGroupPrefix
	case !groupPrefix.MatchString(s.ResourceGroupPrefix):
		b.Report("resourceGroupPrefix", &doc.ResourceGroupPrefix, strictyaml.Quote(s.ResourceGroupPrefix)+" cannot start a resource group's name",
			"use at most 40 letters, digits, '-', '_', '.', '(' and ')', such as winconform")
	}
	decodeAdmin(b.Child("admin", &doc.Admin), &s)
	decodeNetwork(b.Child("network", &doc.Network), &s)
	s.WinRMSetup = b.String("winrmSetup", &doc.WinRMSetup)
	switch s.WinRMSetup {
	case "":
		s.WinRMSetup = SetupRunCommand
	case SetupRunCommand, SetupNone:
	default:
		b.Report("winrmSetup", &doc.WinRMSetup, strictyaml.Quote(s.WinRMSetup)+" is not a WinRM setup",
			"write runCommand (the provider opens WinRM over HTTP on 5985 through Azure's Run Command) or none (the image does it)")
	}
	s.Tags = decodeTags(b, &doc.Tags)
	return s
}

func decodeAdmin(b *vms.Block, s *Settings) {
	const fix = "set admin: {user: winadmin, password: {env: WINDOWS_ADMIN_PASSWORD}}: the VM's administrator, the same account as machine.user and machine.passwordFrom"
	if b.Empty() {
		b.Report("", nil, "is missing", fix)
		return
	}
	var doc adminDoc
	if !b.Decode(&doc, fix) {
		return
	}
	s.AdminUser = b.Required("user", &doc.User, "set user to the administrator's name, the same as machine.user")
	if u := s.AdminUser; u != "" {
		switch {
		case slices.Contains(disallowedAdmins, strings.ToLower(u)):
			b.Report("user", &doc.User, strictyaml.Quote(u)+" is a name Azure refuses for a VM's administrator",
				"use another name, such as winadmin, and the same in machine.user (Azure refuses administrator, admin, user, root, guest and other common names)")
		case len(u) > 20:
			b.Report("user", &doc.User, strictyaml.Quote(u)+" is longer than 20 characters, Azure's limit for a Windows administrator", "use a shorter name")
		case strings.HasSuffix(u, "."):
			b.Report("user", &doc.User, strictyaml.Quote(u)+" ends in '.', which Azure refuses for a Windows administrator", "remove the final '.'")
		case strings.ContainsAny(u, `\/"[]:|<>+=;,?*@ `):
			b.Report("user", &doc.User, strictyaml.Quote(u)+" holds a character a Windows account name cannot hold", "use letters, digits, '-', '_' and '.'")
		}
	}
	if b.Empty() || doc.Password.Kind == 0 {
		b.Report("password", nil, "is missing", "set password: {env: WINDOWS_ADMIN_PASSWORD} or {file: PATH}, the same as machine.passwordFrom")
		return
	}
	pw, ok := b.Secret("password", &doc.Password)
	if !ok {
		return
	}
	if problem := checkPassword(pw.Reveal()); problem != "" {
		b.Report("password", &doc.Password, "the password it holds "+problem,
			"use 12 to 123 characters with three of: lower case, upper case, digits, symbols (Azure's rule for a Windows administrator); the password itself is never printed")
		return
	}
	s.AdminPassword = pw
}

// checkPassword says what Azure refuses in a Windows administrator's
// password (OSProfile.AdminPassword), "" when nothing. Azure asks for 8
// characters; the harness asks 12, as the portal does.
func checkPassword(pw string) string {
	var lower, upper, digit, special bool
	for _, r := range pw {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		default:
			special = true
		}
	}
	classes := 0
	for _, c := range []bool{lower, upper, digit, special} {
		if c {
			classes++
		}
	}
	switch {
	case len(pw) < 12:
		return fmt.Sprintf("is %d characters long, fewer than 12", len(pw))
	case len(pw) > 123:
		return "is longer than 123 characters"
	case classes < 3:
		return "has fewer than three kinds of characters"
	case slices.Contains(disallowedPasswords, pw):
		return "is one Azure refuses as too common"
	}
	return ""
}

func decodeNetwork(b *vms.Block, s *Settings) {
	s.AddressSpace = netip.MustParsePrefix(DefaultAddressSpace)
	var doc networkDoc
	if !b.Decode(&doc, "write a mapping such as {subnet: <subnet resource ID>, winrmFrom: [203.0.113.0/24]}") {
		return
	}
	s.Subnet = b.String("subnet", &doc.Subnet)
	if s.Subnet != "" {
		id, err := arm.ParseResourceID(s.Subnet)
		if err != nil || !strings.EqualFold(id.ResourceType.String(), "Microsoft.Network/virtualNetworks/subnets") {
			b.Report("subnet", &doc.Subnet, strictyaml.Quote(s.Subnet)+" is not a subnet's resource ID",
				"write /subscriptions/<ID>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet> (az network vnet subnet show ... --query id), or remove subnet to make a network in the run's group")
		}
		if doc.AddressSpace.Kind != 0 {
			b.Report("addressSpace", &doc.AddressSpace, "is set with subnet: an existing subnet has its own addresses", "remove one of them")
		}
	}
	if v := b.String("addressSpace", &doc.AddressSpace); v != "" {
		p, err := netip.ParsePrefix(v)
		switch {
		case err != nil || !p.Addr().Is4():
			b.Report("addressSpace", &doc.AddressSpace, strictyaml.Quote(v)+" is not an IPv4 range", "write a private range such as 10.240.0.0/16")
		case p.Bits() > 24:
			b.Report("addressSpace", &doc.AddressSpace, strictyaml.Quote(v)+" is smaller than a /24", "write a /24 or larger: the machines' subnet is its first /24")
		default:
			s.AddressSpace = p.Masked()
		}
	}
	s.PublicIP = b.Bool("publicIP", &doc.PublicIP, false)
	s.WinRMFrom = decodeRanges(b, "winrmFrom", &doc.WinRMFrom)
	if s.PublicIP && len(s.WinRMFrom) == 0 {
		b.Report("winrmFrom", nil, "is missing: a Standard public IP takes no inbound traffic until a network security group lets it in",
			"set winrmFrom to the ranges the harness connects from, such as [203.0.113.7/32]")
	}
}

func decodeRanges(b *vms.Block, key string, n *yaml.Node) []netip.Prefix {
	v := strictyaml.Deref(n)
	if v == nil || v.Kind == 0 || strictyaml.IsNull(v) {
		return nil
	}
	const fix = "write a list of IPv4 ranges, such as [203.0.113.0/24, 198.51.100.7/32]"
	if v.Kind != yaml.SequenceNode {
		b.Report(key, n, "is "+strictyaml.Describe(v)+", not a list", fix)
		return nil
	}
	var out []netip.Prefix
	for i, item := range v.Content {
		item = strictyaml.Deref(item)
		at := fmt.Sprintf("%s[%d]", key, i)
		if item.Kind != yaml.ScalarNode {
			b.Report(at, item, "is "+strictyaml.Describe(item)+", not a range", fix)
			continue
		}
		p, err := netip.ParsePrefix(item.Value)
		if err != nil {
			if a, aerr := netip.ParseAddr(item.Value); aerr == nil {
				p, err = a.Prefix(a.BitLen())
			}
		}
		switch {
		case err != nil || !p.Addr().Is4():
			b.Report(at, item, strictyaml.Quote(item.Value)+" is not an IPv4 range", fix)
		case p.Bits() == 0:
			b.Report(at, item, strictyaml.Quote(item.Value)+" is the whole Internet", "write the ranges the harness connects from; WinRM open to everyone is refused")
		default:
			out = append(out, p.Masked())
		}
	}
	return out
}

// tagName is what Azure takes as a tag's name: at most 512 characters,
// none of <>%&\?/ (Azure Resource Manager's tag rules).
func badTagName(k string) bool { return k == "" || len(k) > 512 || strings.ContainsAny(k, `<>%&\?/`) }

func decodeTags(b *vms.Block, n *yaml.Node) map[string]string {
	v := strictyaml.Deref(n)
	if v == nil || v.Kind == 0 || strictyaml.IsNull(v) {
		return nil
	}
	const fix = "write a mapping of names to values, such as {team: sig-windows}"
	if v.Kind != yaml.MappingNode {
		b.Report("tags", n, "is "+strictyaml.Describe(v)+", not a mapping", fix)
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], strictyaml.Deref(v.Content[i+1])
		at := "tags." + k.Value
		switch {
		case strings.HasPrefix(strings.ToLower(k.Value), "winconform-"):
			b.Report(at, k, "is a tag the harness sets", "remove it; "+vms.TagKeep+" is set by hand on a resource to keep, not in the VM file")
		case badTagName(k.Value):
			b.Report(at, k, "is not a tag name Azure takes", "use at most 512 characters, none of <>%&\\?/")
		case val.Kind != yaml.ScalarNode:
			b.Report(at, val, "is "+strictyaml.Describe(val)+", not a single value", fix)
		case len(val.Value) > 256:
			b.Report(at, val, "is longer than 256 characters, Azure's limit for a tag's value", "shorten it")
		default:
			out[k.Value] = val.Value
		}
	}
	return out
}
