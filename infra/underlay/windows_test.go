package underlay

import (
	"bytes"
	"context"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
)

// A plan's routes, by machine, as the join's underlay-route step takes them.
func TestJoinRoutes(t *testing.T) {
	plan := Plan{Routes: []Route{
		{Machine: "w1", Dest: netip.MustParsePrefix("172.18.0.0/16"), Via: netip.MustParseAddr("192.0.2.1")},
		{Machine: "w1", Dest: netip.MustParsePrefix("10.244.0.0/16"), Via: netip.MustParseAddr("192.0.2.1")},
		{Machine: "w2", Dest: netip.MustParsePrefix("172.18.0.0/16"), Via: netip.MustParseAddr("192.0.2.9")},
	}}
	want := map[string][]windows.UnderlayRoute{
		"w1": {{Destination: "172.18.0.0/16", NextHop: "192.0.2.1"}, {Destination: "10.244.0.0/16", NextHop: "192.0.2.1"}},
		"w2": {{Destination: "172.18.0.0/16", NextHop: "192.0.2.9"}},
	}
	if got := JoinRoutes(plan); !reflect.DeepEqual(got, want) {
		t.Errorf("JoinRoutes = %+v, want %+v", got, want)
	}
}

// A machine WinRM does not reach keeps its place (the check then says it
// is unreached); one the underlay cannot see is named with the inventory.
func TestWindowsMachines(t *testing.T) {
	unreached := config.Machine{Name: "w1", Address: "127.0.0.1", User: "u"}
	unreached.WinRM.Port = 1
	unreached.Underlay.Shape = "none"
	bad := config.Machine{Name: "w2", Address: "192.0.2.6", User: "u"}
	bad.Underlay.Shape = "bridged"
	var log bytes.Buffer
	ms, sides, err := WindowsMachines(context.Background(), "inv.yaml", []config.Machine{unreached, bad}, &log)
	if len(ms) != 1 || ms[0].Name != "w1" || sides["w1"] == nil || len(sides) != 1 {
		t.Errorf("the machines: %+v, sides %v (log %q)", ms, sides, log.String())
	}
	if err == nil || !strings.HasPrefix(err.Error(), "inv.yaml: machine w2: ") {
		t.Errorf("the machine not seen: %v", err)
	}
}
