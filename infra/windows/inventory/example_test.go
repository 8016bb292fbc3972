package inventory_test

import (
	"fmt"

	"github.com/winconform/winconform/infra/windows/inventory"
)

func ExampleParse() {
	data := []byte(`
defaults:
  user: Administrator
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
  winrm: {https: true, insecure: true}
machines:
- name: win-2022-a
  address: 192.168.56.20
  expectedBuild: "10.0.20348"
  taints: ["os=windows:NoSchedule"]
- name: win-2019-b
  address: 192.168.56.21
  winrm: {https: false, insecure: false}
`)
	// With nothing set, a machine is reached over HTTP on 5985 with NTLM,
	// as a stock Windows Server listens.
	env := func(name string) (string, bool) {
		if name == "WINDOWS_ADMIN_PASSWORD" {
			return "not-a-real-password", true
		}
		return "", false
	}
	inv, err := inventory.Parse("inventory.yaml", data, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range inv.Machines {
		fmt.Println(m.Name, m.Endpoint(), m.WinRM.Auth, m.User, m.Password, m.ExpectedBuild.ReleaseName())
	}
	// Output:
	// win-2022-a https://192.168.56.20:5986/wsman ntlm Administrator ******** ltsc2022
	// win-2019-b http://192.168.56.21:5985/wsman ntlm Administrator ********
}

func ExampleError() {
	data := []byte(`
machines:
- name: win-a
  address: 192.168.56.20
  user: Administrator
  password: hunter2
  winrm: {port: 70000, auth: kerberos}
`)
	_, err := inventory.Parse("inventory.yaml", data, func(string) (string, bool) { return "", false })
	fmt.Println(err)
	// Output:
	// inventory.yaml: machine "win-a" (#1): passwordFrom: is missing (line 3); set passwordFrom: {env: VARIABLE} or passwordFrom: {file: PATH} here or in defaults
	// inventory.yaml: machine "win-a" (#1): password: an inline password is refused: the inventory file must not hold passwords (line 6); remove it and use passwordFrom: {env: VARIABLE} (a variable set where the harness runs) or passwordFrom: {file: PATH} (a file that holds only the password)
	// inventory.yaml: machine "win-a" (#1): winrm.port: 70000 is out of range (line 7); use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP
	// inventory.yaml: machine "win-a" (#1): winrm.auth: "kerberos" is not an authentication method (line 7); use ntlm (local or domain accounts, sealed over HTTP) or basic (local accounts, HTTPS only)
}
