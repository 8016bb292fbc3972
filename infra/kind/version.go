package kind

import (
	"regexp"

	"github.com/winconform/winconform"
)

var kubernetesRequire = regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes\s+(v\d+\.\d+\.\d+)`)

// HarnessKubernetesVersion is the Kubernetes release the harness is built
// against (the k8s.io/kubernetes requirement in go.mod): the version a locally
// built node image has.
func HarnessKubernetesVersion() string {
	m := kubernetesRequire.FindSubmatch(winconform.GoMod)
	if m == nil {
		panic("go.mod requires no k8s.io/kubernetes version") // the module cannot build without one
	}
	return string(m[1])
}
