package azure

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/configtest"
)

func env(k string) (string, bool) {
	v, ok := map[string]string{
		"WINDOWS_ADMIN_PASSWORD": adminPassword,
		"WEAK":                   "password",
		"AZURE_CLIENT_SECRET":    "sp-s3cret-value",
	}[k]
	return v, ok
}

const goodFile = `provider: azure
connection:
  user: aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee
  credentials:
    clientSecret: {env: AZURE_CLIENT_SECRET}
image: ` + galleryVersion + `
count: 2
machine:
  user: winadmin
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
azure:
  subscription: ` + testSub + `
  tenant: 99999999-8888-7777-6666-555555555555
  location: westeurope
  size: Standard_D4s_v3
  admin:
    user: winadmin
    password: {env: WINDOWS_ADMIN_PASSWORD}
  network:
    publicIP: true
    winrmFrom: [198.51.100.0/24, 192.0.2.7]
  tags: {team: sig-windows}
`

// parse parses a VM file named vms.yaml.
func parse(src string) (*vms.File, error) {
	return config.Parse[config.Machines]("vms.yaml", []byte(src), env)
}

func TestSettingsGood(t *testing.T) {
	f, err := parse(goodFile)
	if err != nil {
		t.Fatal(err)
	}
	s, n := f.Block.(*Settings), f.Block.(*Settings).Network
	if s.Subscription != testSub || s.Location != "westeurope" || s.Size != "Standard_D4s_v3" || s.Admin.User != "winadmin" ||
		s.Admin.Password.Secret.Reveal() != adminPassword || !n.PublicIP || len(n.WinRMFrom) != 2 || n.WinRMFrom[1].String() != "192.0.2.7/32" ||
		s.WinRMSetup != SetupRunCommand || s.ResourceGroupPrefix != "winconform" || n.AddressSpace.String() != DefaultAddressSpace || s.Tags["team"] != "sig-windows" {
		t.Errorf("settings = %+v", s)
	}
	if f.Connection.Credentials["clientSecret"].Secret.Reveal() != "sp-s3cret-value" {
		t.Error("the client secret was not read from its reference")
	}
}

// Bad azure blocks are refused when the VM file is loaded, before any
// machine work, each problem naming its field and the fix; secrets never
// appear in the messages.
func TestSettingsRefused(t *testing.T) {
	cases := []struct {
		name, from, to, field, says string
	}{
		{"no subscription", "  subscription: " + testSub + "\n", "", "azure.subscription", "is missing"},
		{"subscription by name", "subscription: " + testSub, "subscription: Pay-As-You-Go", "azure.subscription", "not a subscription ID"},
		{"no location", "  location: westeurope\n", "", "azure.location", "is missing"},
		{"location as the portal writes it", "location: westeurope", "location: West Europe", "azure.location", "not a region's name"},
		{"no size", "  size: Standard_D4s_v3\n", "", "azure.size", "is missing"},
		{"size", "size: Standard_D4s_v3", "size: D4s_v3", "azure.size", "not a VM size"},
		{"admin Administrator", "    user: winadmin\n    password", "    user: Administrator\n    password", "azure.admin.user", "Azure refuses"},
		{"admin too long", "    user: winadmin\n    password", "    user: winconform-administrator\n    password", "azure.admin.user", "longer than 20"},
		{"weak password", "password: {env: WINDOWS_ADMIN_PASSWORD}\n  network", "password: {env: WEAK}\n  network", "azure.admin.password", "fewer than 12"},
		{"password inline", "password: {env: WINDOWS_ADMIN_PASSWORD}\n  network", "password: Nightly-run-42!\n  network", "azure.admin.password", "inline"},
		{"no admin", "  admin:\n    user: winadmin\n    password: {env: WINDOWS_ADMIN_PASSWORD}\n", "", "azure.admin", "is missing"},
		{"tenant missing with a service principal", "  tenant: 99999999-8888-7777-6666-555555555555\n", "", "azure.tenant", "is missing"},
		{"public IP open to no one", "    winrmFrom: [198.51.100.0/24, 192.0.2.7]\n", "", "azure.network.winrmFrom", "no inbound traffic"},
		{"WinRM open to the Internet", "winrmFrom: [198.51.100.0/24, 192.0.2.7]", "winrmFrom: [0.0.0.0/0]", "azure.network.winrmFrom[0]", "whole Internet"},
		{"not a range", "winrmFrom: [198.51.100.0/24, 192.0.2.7]", "winrmFrom: [office]", "azure.network.winrmFrom[0]", "not an IPv4 range"},
		{"subnet not an ID", "    publicIP: true\n", "    publicIP: true\n    subnet: lab-subnet\n", "azure.network.subnet", "not a subnet's resource ID"},
		{"run tag set by hand", "tags: {team: sig-windows}", "tags: {winconform-run: x}", "azure.tags[winconform-run]", "harness sets"},
		{"unknown setup", "  tags:", "  winrmSetup: customData\n  tags:", "azure.winrmSetup", `"customData" is not one of runCommand or none`},
		{"unknown key", "  tags:", "  vmSize: Standard_D4s_v3\n  tags:", "azure.vmSize", "is not a field of azure"},
		{"not an image", "image: " + galleryVersion, "image: win2022.qcow2", "image", "neither a resource ID"},
		{"admin is not the join's", "  user: winadmin\n  passwordFrom", "  user: Administrator\n  passwordFrom", "azure.admin.user", "machine.user"},
		{"secret without user", "  user: aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee\n", "", "connection.user", "is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(goodFile, tc.from) {
				t.Fatalf("the good file has no %q", tc.from)
			}
			data := strings.Replace(goodFile, tc.from, tc.to, 1)
			_, err := parse(data)
			configtest.Refused(t, err, tc.field, tc.says, adminPassword, "sp-s3cret-value", "password\n")
		})
	}
}
