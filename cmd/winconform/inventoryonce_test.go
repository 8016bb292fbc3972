package main

import (
	"context"
	"path/filepath"
	"testing"
)

// machine is an inventory's line for a machine of the tests below.
func machine(name, addr string) string {
	return "  - {name: " + name + ", address: " + addr + ", user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}, underlay: {shape: none}}\n"
}

// A command reads its inventory once: the file changed between two of its
// steps (the machines it joins, the underlay's view of the whole
// inventory) does not give the second step other machines.
func TestACommandReadsItsInventoryOnce(t *testing.T) {
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
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

// e2e reads its inventory once too: its check, the machines' check against
// the cluster and the underlay check share the read (before, each read the
// file again).
func TestE2EReadsItsInventoryOnce(t *testing.T) {
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	write(t, inv, "machines:\n"+machine("w1", "192.0.2.5"))
	bin, _ := fakeSuiteBinary(t, 2)
	rf := runFlags{binary: bin, procs: "1", inventory: inv}
	if _, err := rf.check(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if rf.runID == "" {
		t.Error("the check began no run: the run has no ID")
	}
	write(t, inv, "machines:\n"+machine("w1", "192.0.2.5")+machine("w2", "192.0.2.6"))
	run := rf // runSuite takes the flags by value
	got, err := run.windows().machines()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("a later step saw %d machines after the file changed, want the one the check read", len(got))
	}
}
