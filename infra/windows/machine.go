// Package windows joins remote Windows machines to a cluster and resets
// them, over WinRM: the machines come from an inventory
// (config.Inventory) and every step is PowerShell run through the
// remote-exec interface (infra/windows/remote).
package windows

import (
	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows/remote"
)

// RemoteConfig is how to reach an inventory machine over WinRM.
func RemoteConfig(m config.Machine) remote.Config {
	return remote.Config{
		Name: m.Name, Address: m.Address, Port: int(m.WinRM.Port), HTTPS: m.WinRM.HTTPS, Insecure: m.WinRM.Insecure,
		CABundle: m.WinRM.CABundle.PEM, TLSServerName: m.WinRM.TLSServerName, Auth: m.WinRM.Auth,
		User: m.User, Password: m.PasswordFrom.Secret.Reveal(),
	}
}

// Connect returns the remote-exec interface of every machine of inv, by name.
func Connect(inv *config.Inventory) (map[string]*remote.WinRM, error) {
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
