package verdicts

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/winconform/winconform/framework/probeclient"
)

// NodeGone decides, from the error of reading a node after its machine was
// reset (INF-05), whether the node left the cluster: true when it is gone,
// false when it is still there, an error when the reading tells neither.
func NodeGone(err error) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err):
		return true, nil
	}
	return false, fmt.Errorf("reading the node told neither that it is there nor that it is gone: %w", err)
}

// ControlPlaneVersion checks the API server's version against the one the
// cluster was made at (INF-01): an error when they differ; partial names
// what was not seen when there was nothing to compare with.
func ControlPlaneVersion(got, want string) (partial string, err error) {
	switch {
	case want == "":
		return fmt.Sprintf("that %s is the version the cluster was made at: none was given (an existing cluster; pass --expect-kubernetes-version)", got), nil
	case got != want:
		return "", fmt.Errorf("the API server runs %s, the cluster was made at %s", got, want)
	}
	return "", nil
}

// CrossOS decides what INF-06's spec saw of flannel beyond the API's
// state (its DaemonSets ready, the nodes' back ends): traffic, the result
// of a probe from a pod of one OS to a pod of the other on another node,
// nil when no pod of the other OS could be reached for (peer names why).
// partial names what was not seen; an error is traffic that did not pass.
func CrossOS(peer string, traffic *probeclient.Result) (partial string, err error) {
	switch {
	case traffic == nil:
		return "pod traffic between Linux and Windows nodes: " + peer, nil
	case !traffic.OK:
		return "", fmt.Errorf("a pod could not reach a pod of the other OS on another node: %s", traffic.Describe())
	}
	return "", nil
}
