package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// A suite process reads its inventory once: a file changed after the first
// read gives no spec other machines (before, each place read it again).
func TestTheInventoryIsReadOncePerProcess(t *testing.T) {
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	machine := func(name, addr string) string {
		return "  - {name: " + name + ", address: " + addr + ", user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}}\n"
	}
	if err := os.WriteFile(path, []byte("machines:\n"+machine("w1", "192.0.2.5")), 0o600); err != nil {
		t.Fatal(err)
	}
	old := Options.Inventory
	Options.Inventory = path
	t.Cleanup(func() { Options.Inventory = old })
	first, err := Inventory()
	if err != nil || len(first.Machines) != 1 {
		t.Fatalf("Inventory: %v, %v", first, err)
	}
	if err := os.WriteFile(path, []byte("machines:\n"+machine("w1", "192.0.2.5")+machine("w2", "192.0.2.6")), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := Inventory()
	if err != nil || again != first {
		t.Errorf("the second read gave %v (%v), want the first's machines", again, err)
	}
}
