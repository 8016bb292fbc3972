package config

import (
	"testing"
)

// cloudMetadataRoute is off unless asked for (a lab machine has no metadata
// service), may be asked for in defaults for every machine, and a machine
// may turn the defaults' off; a value other than true or false is refused,
// naming the field.
func TestCloudMetadataRoute(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(`defaults:
  cloudMetadataRoute: true
machines:
- name: win-a
  address: 192.168.56.20
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
- name: win-b
  address: 192.168.56.21
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
  cloudMetadataRoute: false
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !inv.Machines[0].CloudMetadataRoute || inv.Machines[1].CloudMetadataRoute {
		t.Errorf("cloudMetadataRoute: win-a %t (from defaults), win-b %t (its own false)", inv.Machines[0].CloudMetadataRoute, inv.Machines[1].CloudMetadataRoute)
	}
	inv, err = f.load(validMachineYML, nil)
	if err != nil || inv.Machines[0].CloudMetadataRoute {
		t.Errorf("a machine that does not ask has the route: %v, %v", inv, err)
	}
	_, err = f.load(machineYAML("  cloudMetadataRoute: azure\n"), nil)
	oneProblem(t, err, "machines[0].cloudMetadataRoute", "true or false")
}

// prepullImages is off unless asked for, and binaries.images is a source
// like any other: a URL or an absolute path on the machine.
func TestPrepullImages(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(machineYAML("  prepullImages: true\n  binaries: {images: 'C:\\install\\node-images.tar'}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := inv.Machines[0]; !m.PrepullImages || m.Binaries["images"] != `C:\install\node-images.tar` {
		t.Errorf("prepullImages %t, binaries.images %q", m.PrepullImages, m.Binaries["images"])
	}
	inv, err = f.load(validMachineYML, nil)
	if err != nil || inv.Machines[0].PrepullImages {
		t.Errorf("a machine that does not ask pulls images: %v, %v", inv, err)
	}
	_, err = f.load(machineYAML("  binaries: {images: ./node-images.tar}\n"), nil)
	oneProblem(t, err, "machines[0].binaries[images]")
}
