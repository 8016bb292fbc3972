package underlayfault

import (
	"os"
	"testing"

	"github.com/winconform/winconform/infra/docker"
)

// TestMain lets the test binary act as the docker shim, as the harness's
// binary does: on a host that needs it, kind's docker exec into the nodes
// goes through it.
func TestMain(m *testing.M) {
	if docker.IsShim(os.Args[0]) {
		os.Exit(docker.ShimMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}
