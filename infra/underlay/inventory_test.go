package underlay

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
)

// An inventory machine as the underlay sees it: its node address (nodeIP
// before address), its shape (routed when it sets none), and a routed
// machine's way in (underlay.via, else this host's source address toward
// it, from the kernel's route).
func TestFromInventory(t *testing.T) {
	ctx := context.Background()
	m := config.Machine{Name: "w1", Address: "192.0.2.5"}
	m.Underlay.Shape = "none"
	got, err := FromInventory(ctx, m)
	if err != nil || got.Address != netip.MustParseAddr("192.0.2.5") || got.Shape != None || got.OS != Windows || got.Name != "w1" {
		t.Errorf("none: %+v, %v", got, err)
	}
	m.NodeIP = "192.0.2.9"
	if got, _ := FromInventory(ctx, m); got.Address != netip.MustParseAddr("192.0.2.9") {
		t.Errorf("nodeIP is the node's address: %+v", got)
	}
	m.Underlay.Shape, m.Underlay.Via = "", "172.18.0.1"
	got, err = FromInventory(ctx, m)
	if err != nil || got.Shape != Routed || got.Via != netip.MustParseAddr("172.18.0.1") {
		t.Errorf("routed, via given: %+v, %v", got, err)
	}
	m.Underlay.Via, m.NodeIP = "", "127.0.0.1"
	got, err = FromInventory(ctx, m)
	if err != nil || !got.Via.IsLoopback() {
		t.Errorf("routed, via from the kernel's route: %+v, %v", got, err)
	}
	m.Underlay.Shape = "bridged"
	if _, err := FromInventory(ctx, m); err == nil || !strings.Contains(err.Error(), "underlay.shape") {
		t.Errorf("an unknown shape: %v, want one naming underlay.shape", err)
	}
}

// An inventory as the underlay sees it: each machine it can see, and each
// it cannot named with the inventory and the machine.
func TestInventory(t *testing.T) {
	good := config.Machine{Name: "w1", Address: "192.0.2.5"}
	good.Underlay.Shape = "none"
	bad := config.Machine{Name: "w2", Address: "192.0.2.6"}
	bad.Underlay.Shape = "bridged"
	got, err := Inventory(context.Background(), "inv.yaml", []config.Machine{bad, good})
	if len(got) != 1 || got[0].Name != "w1" {
		t.Errorf("the machines seen: %+v", got)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "inv.yaml: machine w2: ") || !strings.Contains(err.Error(), "underlay.shape") {
		t.Errorf("the machine not seen: %v", err)
	}
}

// A routed machine needs root before any cluster work; machines of shape
// none do not.
func TestCheckRouted(t *testing.T) {
	defer func(f func() int) { euid = f }(euid)
	euid = func() int { return 1000 }
	none := Machine{Name: "w1", Shape: None}
	if err := CheckRouted("inv.yaml", []Machine{none}); err != nil {
		t.Errorf("no routed machine: %v", err)
	}
	err := CheckRouted("inv.yaml", []Machine{none, {Name: "w2", Shape: Routed}})
	if !errors.Is(err, ErrNotRoot) || !strings.Contains(err.Error(), "joining inv.yaml's machines through the routed underlay (machine w2)") {
		t.Errorf("a routed machine without root: %v", err)
	}
	euid = func() int { return 0 }
	if err := CheckRouted("inv.yaml", []Machine{{Name: "w2", Shape: Routed}}); err != nil {
		t.Errorf("as root: %v", err)
	}
}
