package windows_test

import (
	"slices"
	"testing"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

const metadataRoute = windows.CloudMetadataAddress + "/32"

// flannelOnFirstPod makes the node's first pod wait for flannel's network,
// as a real node's does (a pod's network needs the CNI's, which flanneld
// makes): the External network, which puts HNS's virtual switch on the
// machine's adapter.
func flannelOnFirstPod(r *rig) {
	join := r.cluster.joinFor(r.sim)
	r.sim.OnJoin = func(req simmachine.JoinRequest) error {
		err := join(req)
		r.cluster.mu.Lock()
		r.cluster.kubelets[req.NodeName] = func(images ...string) error {
			if !slices.Contains(r.sim.HNSNetworks(), "External") {
				r.sim.AddHNSNetwork("External")
				r.sim.AddHNSNetwork("flannel.4096")
			}
			return r.sim.StartPod(images...)
		}
		r.cluster.mu.Unlock()
		return err
	}
}

// TestJoinGivesACloudMachineItsMetadataRoute joins a cloud VM whose image
// routes 169.254.169.254 on its adapter (GCE's images add such a route;
// Azure's DHCP gives one): flannel's External network puts HNS's virtual
// switch on the adapter, and the adapter's routes are gone with it
// (rancher/rancher#20156: the kubelet's metadata lookups failed until the
// route was put back; kubernetes-sigs/sig-windows-tools#36 put it back in
// flannel's start script). The join gives the machine a persistent route
// through its default gateway (IBM's and Azure's guidance for Windows
// route the metadata service through the default gateway), which Windows
// puts back whenever it rebuilds the route table
// (Win32_IP4PersistedRouteTable), so it outlives the virtual switch; a
// second join changes nothing.
func TestJoinGivesACloudMachineItsMetadataRoute(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) { m.CloudMetadataRoute = true })
	r.sim.SetFact("route:"+metadataRoute, "Ethernet via 192.0.2.1") // the cloud image's own
	flannelOnFirstPod(r)
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if !slices.Contains(r.sim.HNSNetworks(), "External") {
		t.Fatal("no pod started, so flannel made no network: the test shows nothing")
	}
	if got, want := r.sim.Route(metadataRoute), "vEthernet (Ethernet) via 192.0.2.1 persistent"; got != want {
		t.Errorf("after the join, the route to %s is %q, want %q", metadataRoute, got, want)
	}
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("second Join: %v", err)
	}
	if st, _ := rep.Step(windows.StepMetadataRoute); st.Changed || st.Skipped {
		t.Errorf("a second join: changed %t, skipped %t; want the route left as it is", st.Changed, st.Skipped)
	}
}

// TestJoinLeavesALabMachinesRoutes: a lab machine has no metadata service,
// and its inventory does not ask for the route (cloudMetadataRoute is off
// unless set): the step is skipped, saying why, and no route is made.
func TestJoinLeavesALabMachinesRoutes(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if st, _ := rep.Step(windows.StepMetadataRoute); !st.Skipped || st.SkipReason == "" {
		t.Errorf("the metadata route step on a lab machine: %+v", st)
	}
	if got := r.sim.Route(metadataRoute); got != "" {
		t.Errorf("a lab machine has a route to %s: %q", metadataRoute, got)
	}
}
