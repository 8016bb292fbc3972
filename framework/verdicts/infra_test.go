package verdicts

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/winconform/winconform/framework/probeclient"
)

// INF-05: only the API server's NotFound says the node is gone; a timeout
// or a refused connection says nothing of the node.
func TestNodeGoneOnlyOnNotFound(t *testing.T) {
	if gone, err := NodeGone(apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "win-1")); !gone || err != nil {
		t.Errorf("NotFound: gone %v, %v", gone, err)
	}
	if gone, err := NodeGone(nil); gone || err != nil {
		t.Errorf("the node read back: gone %v, %v", gone, err)
	}
	timeout := fmt.Errorf("Get \"https://10.0.0.1:6443/api/v1/nodes/win-1\": %w", context.DeadlineExceeded)
	if gone, err := NodeGone(timeout); err == nil {
		t.Errorf("a timeout: gone %v, want an error", gone)
	}
	if gone, err := NodeGone(apierrors.NewServiceUnavailable("etcdserver: leader changed")); err == nil {
		t.Errorf("a 503: gone %v, want an error", gone)
	}
}

// INF-01 on an existing cluster, without the version the cluster was made
// at, sees the control plane's version but not that it is the chosen one:
// partial.
func TestControlPlaneVersionWithoutAnExpectation(t *testing.T) {
	if partial, err := ControlPlaneVersion("v1.37.2", ""); err != nil || partial == "" {
		t.Errorf("no expected version: partial %q, %v; want partial", partial, err)
	}
	if partial, err := ControlPlaneVersion("v1.37.2", "v1.37.2"); err != nil || partial != "" {
		t.Errorf("the expected version: partial %q, %v", partial, err)
	}
	if _, err := ControlPlaneVersion("v1.36.3", "v1.37.2"); err == nil {
		t.Error("another version: no error")
	}
}

// INF-06 is about pod traffic across Linux and Windows nodes: the API's
// state (flannel's DaemonSets ready, the nodes' back ends) is only part of
// it.
func TestCrossOSNeedsTraffic(t *testing.T) {
	if partial, err := CrossOS("the cluster has no Ready real Windows node", nil); err != nil || partial == "" {
		t.Errorf("no traffic across the OSes: partial %q, %v; want partial", partial, err)
	}
	ok := probeclient.Result{Target: "http://10.244.2.5:8080/", OK: true, LatencyMs: 2.5}
	if partial, err := CrossOS("", &ok); err != nil || partial != "" {
		t.Errorf("traffic passed: partial %q, %v", partial, err)
	}
	failed := probeclient.Result{Target: "http://10.244.2.5:8080/", ErrorClass: "timeout", Error: "dial tcp 10.244.2.5:8080: i/o timeout"}
	if _, err := CrossOS("", &failed); err == nil {
		t.Error("traffic that did not pass: no error")
	}
}
