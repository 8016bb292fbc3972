package libvirt

import (
	"testing"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/vmstest"
)

// TestConformanceDockerBridge runs the provider contract against the real
// libvirtd: a stand-in guest on a Docker network's bridge, its address
// given by the provider.
func TestConformanceDockerBridge(t *testing.T) {
	p, disk := openStandin(t, standinSettings())
	vmstest.Conformance(t, p, vms.Spec{RunID: "conf-bridge", Image: disk, CPUs: 1, MemoryMiB: 256})
}
