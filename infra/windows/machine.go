// Package windows joins remote Windows machines to a cluster and resets
// them, over WinRM: the machines come from an inventory
// (infra/windows/inventory) and every step is PowerShell run through the
// remote-exec interface (infra/windows/remote).
package windows

import (
	"github.com/winconform/winconform/infra/windows/inventory"
	"github.com/winconform/winconform/infra/windows/remote"
)

// RemoteConfig is how to reach an inventory machine over WinRM.
func RemoteConfig(m inventory.Machine) remote.Config {
	return remote.Config{
		Name: m.Name, Address: m.Address, Port: m.WinRM.Port, HTTPS: m.WinRM.HTTPS, Insecure: m.WinRM.Insecure,
		CABundle: m.WinRM.CABundle, TLSServerName: m.WinRM.TLSServerName, Auth: string(m.WinRM.Auth),
		User: m.User, Password: m.Password.Reveal(),
	}
}

// Connect returns the remote-exec interface of every machine of inv, by name.
func Connect(inv *inventory.Inventory) (map[string]*remote.WinRM, error) {
	out := map[string]*remote.WinRM{}
	for _, m := range inv.Machines {
		w, err := remote.NewWinRM(RemoteConfig(m))
		if err != nil {
			return nil, err
		}
		out[m.Name] = w
	}
	return out, nil
}
