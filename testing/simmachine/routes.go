package simmachine

import "strings"

// The machine's IPv4 routes, facts route:DEST (such as route:0.0.0.0/0):
// "ALIAS via NEXTHOP" for a route on the adapter ALIAS, " metric N" after
// it for a route of a metric of its own (the underlay's), then
// " persistent" for one Windows keeps in the registry's PersistentRoutes
// (route -p: destination, mask, gateway and metric, no interface), or
// " persistent bound" for one kept in the persistent store bound to its
// adapter (New-NetRoute -InterfaceAlias, without -PolicyStore). A new
// machine has one adapter, Ethernet, and its default route.
//
// What Windows does to them when HNS puts a virtual switch on the adapter
// (the first network flannel makes on it, External): the host's addresses
// move to a virtual adapter, "vEthernet (Ethernet)", which takes the default
// route; the routes of the physical adapter are gone, a cloud image's route
// to its metadata service with them (rancher/rancher#20156: the kubelet's
// metadata lookups fail "after" the network is made, until the
// 169.254.169.254/32 route is put back; sig-windows-tools#36 put it back in
// flannel's start script); and the persistent routes are put back in the
// table as it is rebuilt ("Persistent entries are automatically inserted
// again in the route table each time the route table is rebuilt",
// Win32_IP4PersistedRouteTable), on the adapter that reaches their gateway;
// a persistent route bound to the physical adapter stays bound to it, which
// no longer has the host's address, and is not active (Microsoft
// KB2966111; sig-windows-tools' flannel start script added its routes with
// route /p add and no interface for this).

// physicalAdapter and virtualAdapter are the machine's adapter before and
// after HNS's virtual switch.
const (
	physicalAdapter = "Ethernet"
	virtualAdapter  = "vEthernet (Ethernet)"
	defaultRouteKey = "route:0.0.0.0/0"
)

// defaultRoute is a new machine's: its gateway, on its one adapter.
const defaultRoute = physicalAdapter + " via 192.0.2.1"

// putVirtualSwitch moves the host onto HNS's virtual adapter. m.mu must be
// held.
func (m *Machine) putVirtualSwitch() {
	for k, v := range m.facts {
		if !strings.HasPrefix(k, "route:") {
			continue
		}
		rest, ok := strings.CutPrefix(v, physicalAdapter+" ")
		if !ok {
			continue
		}
		if k == defaultRouteKey || strings.HasSuffix(v, " persistent") {
			m.facts[k] = virtualAdapter + " " + rest
			continue
		}
		// Not persistent, or bound to the physical adapter: gone from
		// the table.
		delete(m.facts, k)
	}
}

// Route returns the route to dest ("" for none): ALIAS via NEXTHOP, and
// persistent for one Windows keeps.
func (m *Machine) Route(dest string) string { return m.Fact("route:" + dest) }
