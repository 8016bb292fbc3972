package kind

import "testing"

// TestKindULASubnet checks the IPv6 subnet the harness gives kind's network
// against the one kind v0.33.0 made for the network named kind on this
// host (docker network inspect kind: fc00:f853:ccd:e793::/64), so that a
// network the harness makes is the one kind would have made.
func TestKindULASubnet(t *testing.T) {
	if got, want := kindULASubnet("kind"), "fc00:f853:ccd:e793::/64"; got != want {
		t.Errorf("kindULASubnet(kind) = %s, want %s", got, want)
	}
}
