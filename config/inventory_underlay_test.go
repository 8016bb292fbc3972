package config

import (
	"testing"
)

// underlay's shape and via default field by field (as winrm's fields do):
// defaults give every machine the routed shape through the kind host's
// address, a machine may take another shape; a wrong shape, a via that is
// no IPv4 address and an unknown key are refused, naming the field.
func TestUnderlay(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(`defaults:
  underlay: {shape: routed, via: 192.168.56.1}
machines:
- name: win-a
  address: 192.168.56.20
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
- name: win-vm
  address: 172.18.255.241
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
  underlay: {shape: same-host}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := inv.Machines[0].Underlay; got != (Underlay{Shape: "routed", Via: "192.168.56.1"}) {
		t.Errorf("win-a's underlay %+v, want the defaults'", got)
	}
	if got := inv.Machines[1].Underlay; got.Shape != "same-host" || got.Via != "192.168.56.1" {
		t.Errorf("win-vm's underlay %+v, want its own shape and the defaults' via", got)
	}
	inv, err = f.load(validMachineYML, nil)
	if err != nil || inv.Machines[0].Underlay != (Underlay{}) {
		t.Errorf("a machine that says nothing: %+v, %v; want the zero underlay (routed, this host's address)", inv.Machines[0].Underlay, err)
	}
	for _, c := range []struct{ yaml, field, fix string }{
		{"  underlay: {shape: tunnel}\n", "underlay.shape", "use routed"},
		{"  underlay: {via: kind-host.lab}\n", "underlay.via", "IPv4"},
		{"  underlay: {shape: routed, gateway: 10.0.0.1}\n", "underlay.gateway", ""},
	} {
		_, err := f.load(machineYAML(c.yaml), nil)
		oneProblem(t, err, "machines[0]."+c.field, c.fix)
	}
}
