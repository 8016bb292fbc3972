package azure

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// Settings is the VM file's azure block.
type Settings struct {
	// Subscription is the subscription's ID; Tenant the Microsoft Entra
	// tenant of a service principal ("" with the default credential chain).
	Subscription string `yaml:"subscription"`
	Tenant       string `yaml:"tenant"`
	// Location is the region the run's resource group and machines are in.
	Location string `yaml:"location"`
	// Size is the VM size (Standard_D4s_v3): it, not cpus and memory,
	// decides the machine's CPUs and memory; Create refuses a size smaller
	// than the VM file's cpus and memory.
	Size string `yaml:"size"`
	// ResourceGroupPrefix starts the run's resource group's name:
	// "<prefix>-<run ID>".
	ResourceGroupPrefix string `yaml:"resourceGroupPrefix"`
	// Admin is the VM's administrator account, the one the join logs in
	// as (the machine block's user and passwordFrom).
	Admin Admin `yaml:"admin"`
	// Network is where the machines are on the network.
	Network Network `yaml:"network"`
	// WinRMSetup is how WinRM is made reachable in the guest: "runCommand"
	// (the provider runs winrm-setup.ps1 through Azure's Run Command once
	// the VM is provisioned) or "none" (the image does it itself).
	WinRMSetup string `yaml:"winrmSetup"`
	// Tags are added to every resource the provider makes (the run's tags
	// are added to them and cannot be set here).
	Tags map[string]string `yaml:"tags"`
}

// Admin is a VM's administrator account.
type Admin struct {
	User     string           `yaml:"user"`
	Password config.SecretRef `yaml:"password"`
}

// Network is where the machines are on the network.
type Network struct {
	// Subnet is an existing subnet's resource ID; "" to make a virtual
	// network (AddressSpace) in the run's group.
	Subnet       string `yaml:"subnet"`
	AddressSpace Range  `yaml:"addressSpace"`
	// PublicIP gives each VM a public address (Standard SKU, static).
	PublicIP bool `yaml:"publicIP"`
	// WinRMFrom are the source ranges a network security group on each
	// NIC lets reach WinRM (TCP 5985 and 5986); none: no NSG is made.
	WinRMFrom []Range `yaml:"winrmFrom"`
}

// Range is an IPv4 range, written as a prefix or an address (a /32).
type Range struct{ netip.Prefix }

// UnmarshalText reads a range; its error says the fix after "; ".
func (r *Range) UnmarshalText(text []byte) error {
	p, err := netip.ParsePrefix(string(text))
	if a, aerr := netip.ParseAddr(string(text)); aerr == nil {
		p, err = a.Prefix(a.BitLen())
	}
	if err != nil || !p.Addr().Is4() {
		return fmt.Errorf("%s is not an IPv4 range; write one such as 203.0.113.0/24 or 198.51.100.7", config.Quote(string(text)))
	}
	r.Prefix = p.Masked()
	return nil
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

// Check gives the block its defaults and returns its problems, and those
// of the connection as a service principal's.
func (s *Settings) Check(f *vms.File, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	bad := func(p *field.Path, msg, fix string) { errs = append(errs, config.Invalid(p, msg, fix)) }
	missing := func(p *field.Path, fix string) { errs = append(errs, config.Missing(p, fix)) }
	for _, c := range []struct {
		key, v, fix string
		form        *regexp.Regexp
		what, how   string
	}{
		{"subscription", s.Subscription, "set subscription to the subscription's ID (az account show --query id)", guid,
			"a subscription ID", "write the subscription's ID, a GUID such as 00000000-0000-0000-0000-000000000000 (az account show --query id), not its name"},
		{"location", s.Location, "set location to the region to make the machines in, such as westeurope (az account list-locations --query [].name)", location,
			"a region's name", "write the region's name as Azure writes it: lower case, no spaces, such as westeurope or eastus2 (az account list-locations --query [].name)"},
		{"size", s.Size, "set size to a VM size with at least the VM file's cpus and memory, such as Standard_D4s_v3 (az vm list-sizes --location LOCATION)", size,
			"a VM size", "write a size as Azure names it, such as Standard_D4s_v3 (az vm list-sizes --location LOCATION)"},
	} {
		if c.v == "" {
			missing(p.Child(c.key), c.fix)
		} else if !c.form.MatchString(c.v) {
			bad(p.Child(c.key), config.Quote(c.v)+" is not "+c.what, c.how)
		}
	}
	if _, err := parseImage(f.Image); err != nil && f.Image != "" {
		bad(field.NewPath("image"), err.Error(), fixImage)
	}
	conn, cp := f.Connection, field.NewPath("connection")
	_, secret := conn.Credentials["clientSecret"]
	switch {
	case s.Tenant != "" && !guid.MatchString(s.Tenant):
		bad(p.Child("tenant"), config.Quote(s.Tenant)+" is not a tenant ID", "write the Microsoft Entra tenant's ID, a GUID (az account show --query tenantId)")
	case conn.User != "" && s.Tenant == "":
		bad(p.Child("tenant"), "is missing: a service principal (connection.user) signs in to its tenant", "set tenant to the service principal's tenant ID (az account show --query tenantId)")
	case conn.User == "" && s.Tenant != "":
		bad(p.Child("tenant"), "is set without a service principal", "set connection.user to the service principal's client ID and connection.credentials.clientSecret, or remove tenant to use the default credential chain")
	}
	switch {
	case conn.User != "" && !guid.MatchString(conn.User):
		bad(cp.Child("user"), config.Quote(conn.User)+" is not a client ID", "set user to the service principal's application (client) ID, a GUID (az ad sp list --display-name NAME --query [].appId)")
	case secret && conn.User == "":
		bad(cp.Child("user"), "is missing: credentials.clientSecret is a service principal's", "set user to the service principal's application (client) ID")
	case !secret && conn.User != "":
		bad(cp.Child("credentials").Key("clientSecret"), "is missing: the service principal connection.user names needs its secret", "set credentials.clientSecret: {env: AZURE_CLIENT_SECRET} or {file: PATH}")
	}
	if s.ResourceGroupPrefix == "" {
		s.ResourceGroupPrefix = DefaultResourceGroupPrefix
	} else if !groupPrefix.MatchString(s.ResourceGroupPrefix) {
		bad(p.Child("resourceGroupPrefix"), config.Quote(s.ResourceGroupPrefix)+" cannot start a resource group's name",
			"use at most 40 letters, digits, '-', '_', '.', '(' and ')', such as winconform")
	}
	errs = append(errs, s.Admin.check(p.Child("admin"), f.Machine.User)...)
	errs = append(errs, s.Network.check(p.Child("network"))...)
	if s.WinRMSetup == "" {
		s.WinRMSetup = SetupRunCommand
	} else if e := config.OneOf(p.Child("winrmSetup"), s.WinRMSetup, []string{SetupRunCommand, SetupNone}); e != nil {
		errs = append(errs, e)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
		switch at := p.Child("tags").Key(k); {
		case strings.HasPrefix(strings.ToLower(k), "winconform-"):
			bad(at, "is a tag the harness sets", "remove it; "+vms.TagKeep+" is set by hand on a resource to keep, not in the VM file")
		case k == "" || len(k) > 512 || strings.ContainsAny(k, `<>%&\?/`):
			bad(at, "is not a tag name Azure takes", "use at most 512 characters, none of <>%&\\?/")
		case len(s.Tags[k]) > 256:
			bad(at, "is longer than 256 characters, Azure's limit for a tag's value", "shorten it")
		}
	}
	return errs
}

func (a *Admin) check(p *field.Path, machineUser string) field.ErrorList {
	if *a == (Admin{}) {
		return field.ErrorList{config.Missing(p, "set admin: {user: winadmin, password: {env: WINDOWS_ADMIN_PASSWORD}}: the VM's administrator, the same account as machine.user and machine.passwordFrom")}
	}
	var errs field.ErrorList
	bad := func(key, msg, fix string) { errs = append(errs, config.Invalid(p.Child(key), msg, fix)) }
	switch u := a.User; {
	case u == "":
		errs = append(errs, config.Missing(p.Child("user"), "set admin.user to the VM's administrator, the same account as machine.user"))
	case slices.Contains(disallowedAdmins, strings.ToLower(u)):
		bad("user", config.Quote(u)+" is a name Azure refuses for a VM's administrator",
			"use another name, such as winadmin, and the same in machine.user (Azure refuses administrator, admin, user, root, guest and other common names)")
	case len(u) > 20:
		bad("user", config.Quote(u)+" is longer than 20 characters, Azure's limit for a Windows administrator", "use a shorter name")
	case strings.HasSuffix(u, "."):
		bad("user", config.Quote(u)+" ends in '.', which Azure refuses for a Windows administrator", "remove the final '.'")
	case strings.ContainsAny(u, `\/"[]:|<>+=;,?*@ `):
		bad("user", config.Quote(u)+" holds a character a Windows account name cannot hold", "use letters, digits, '-', '_' and '.'")
	case machineUser != "" && !strings.EqualFold(machineUser, u):
		bad("user", fmt.Sprintf("is %q, but machine.user is %q: the join logs in as machine.user, which Azure makes as the VM's administrator from admin.user", u, machineUser),
			"set both to the same account (and admin.password to the same reference as machine.passwordFrom)")
	}
	if a.Password.Env == "" && a.Password.File == "" {
		errs = append(errs, config.Missing(p.Child("password"), "set password: {env: WINDOWS_ADMIN_PASSWORD} or {file: PATH}, the same as machine.passwordFrom"))
	} else if problem := checkPassword(a.Password.Secret.Reveal()); problem != "" && a.Password.Secret != "" {
		bad("password", "the password it holds "+problem,
			"use 12 to 123 characters with three of: lower case, upper case, digits, symbols (Azure's rule for a Windows administrator); the password itself is never printed")
	}
	return errs
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

func (n *Network) check(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	bad := func(p *field.Path, msg, fix string) { errs = append(errs, config.Invalid(p, msg, fix)) }
	if n.Subnet != "" {
		id, err := arm.ParseResourceID(n.Subnet)
		if err != nil || !strings.EqualFold(id.ResourceType.String(), "Microsoft.Network/virtualNetworks/subnets") {
			bad(p.Child("subnet"), config.Quote(n.Subnet)+" is not a subnet's resource ID",
				"write /subscriptions/<ID>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet> (az network vnet subnet show ... --query id), or remove subnet to make a network in the run's group")
		}
		if n.AddressSpace.IsValid() {
			bad(p.Child("addressSpace"), "is set with subnet: an existing subnet has its own addresses", "remove one of them")
		}
	}
	if !n.AddressSpace.IsValid() {
		n.AddressSpace.Prefix = netip.MustParsePrefix(DefaultAddressSpace)
	} else if n.AddressSpace.Bits() > 24 {
		bad(p.Child("addressSpace"), config.Quote(n.AddressSpace.String())+" is smaller than a /24", "write a /24 or larger: the machines' subnet is its first /24")
	}
	for i, r := range n.WinRMFrom {
		if r.Bits() == 0 {
			bad(p.Child("winrmFrom").Index(i), config.Quote(r.String())+" is the whole Internet", "write the ranges the harness connects from; WinRM open to everyone is refused")
		}
	}
	if n.PublicIP && len(n.WinRMFrom) == 0 {
		bad(p.Child("winrmFrom"), "is missing: a Standard public IP takes no inbound traffic until a network security group lets it in",
			"set winrmFrom to the ranges the harness connects from, such as [203.0.113.7/32]")
	}
	return errs
}
