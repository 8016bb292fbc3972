package underlay

import (
	"context"
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
