package config_test

import (
	"fmt"

	"github.com/winconform/winconform/config"
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
	inv, err := config.Parse[config.Inventory]("inventory.yaml", data, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range inv.Machines {
		fmt.Println(m.Name, m.Address, m.WinRM.HTTPS, m.WinRM.Port, m.WinRM.Auth, m.User, m.PasswordFrom.Secret, m.ExpectedBuild.ReleaseName())
	}
	// Output:
	// win-2022-a 192.168.56.20 true 5986 ntlm Administrator ******** ltsc2022
	// win-2019-b 192.168.56.21 false 5985 ntlm Administrator ********
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
	_, err := config.Parse[config.Inventory]("inventory.yaml", data, func(string) (string, bool) { return "", false })
	fmt.Println(err)
	// Output:
	// inventory.yaml:3: machines[0].passwordFrom: is missing; set passwordFrom: {env: VARIABLE} or {file: PATH}, on the machine or in defaults
	// inventory.yaml:6: machines[0].password: an inline secret is refused: files hold references to secrets, never secrets; remove it and reference it: {env: VARIABLE} (a variable set where the harness runs) or {file: PATH} (a file that holds only the secret), as a machine's passwordFrom or a provider's connection.credentials
	// inventory.yaml:7: machines[0].winrm.port: 70000 is out of range; use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP
	// inventory.yaml:7: machines[0].winrm.auth: "kerberos" is not an authentication method; use ntlm (local or domain accounts, sealed over HTTP) or basic (local accounts, HTTPS only)
}
