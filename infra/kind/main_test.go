package kind

import (
	"os"
	"testing"

	"github.com/winconform/winconform/infra/docker"
)

// TestMain lets the test binary act as the docker shim, as the harness's
// own binary does where kind runs through it (docker.Activate links the
// running executable as docker).
func TestMain(m *testing.M) {
	if docker.IsShim(os.Args[0]) {
		os.Exit(docker.ShimMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}
