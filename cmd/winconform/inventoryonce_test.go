package main

import (
	"context"
	"path/filepath"
	"testing"
)

// A command reads its inventory once: the file changed between two of its
// steps (the machines it joins, the underlay's view of the whole
// inventory) does not give the second step other machines.
func TestACommandReadsItsInventoryOnce(t *testing.T) {
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	machine := func(name, addr string) string {
		return "  - {name: " + name + ", address: " + addr + ", user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}, underlay: {shape: none}}\n"
	}
	write(t, inv, "machines:\n"+machine("w1", "192.0.2.5"))
	w := windowsFlags{inventory: inv}
	first, err := w.machines()
	if err != nil || len(first) != 1 {
		t.Fatalf("machines: %v, %v", first, err)
	}
	write(t, inv, "machines:\n"+machine("w1", "192.0.2.5")+machine("w2", "192.0.2.6"))
	all, err := w.inventoryUnderlay(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Errorf("the underlay saw %d machines after the file changed, want the one the command read", len(all))
	}
}
