package metallb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/infra/kube"
)

// GroupVersion is the API version of MetalLB's configuration.
const GroupVersion = "metallb.io/v1beta1"

// PoolResource is the IPAddressPool resource.
var PoolResource = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}

// Install applies MetalLB's CRDs (crds, see CRDs), waits until the API
// server serves them, then applies its objects (Manifest) and the pool
// (PoolManifest; nodes labelled notOn do not announce it). It does not wait for the pods: the caller's readiness wait
// covers Namespace.
func Install(ctx context.Context, cfg *rest.Config, crds []byte, img Images, pool Pool, notOn string, timeout time.Duration) error {
	objects, err := Manifest(img)
	if err != nil {
		return err
	}
	poolDoc, err := PoolManifest(pool, notOn)
	if err != nil {
		return err
	}
	if err := kube.Apply(ctx, cfg, crds, "winconform"); err != nil {
		return fmt.Errorf("MetalLB CRDs: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := waitServed(ctx, dc, timeout, "ipaddresspools", "l2advertisements"); err != nil {
		return err
	}
	// One apply for both: each apply discovers the API anew.
	if err := kube.Apply(ctx, cfg, append(append(objects, '\n'), poolDoc...), "winconform"); err != nil {
		return fmt.Errorf("MetalLB: %w", err)
	}
	return nil
}

// waitServed polls discovery until GroupVersion lists every resource.
func waitServed(ctx context.Context, dc discovery.DiscoveryInterface, timeout time.Duration, resources ...string) error {
	var missing []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion(GroupVersion)
		served := map[string]bool{}
		if err == nil {
			for _, r := range list.APIResources {
				served[r.Name] = true
			}
		}
		missing = missing[:0]
		for _, r := range resources {
			if !served[r] {
				missing = append(missing, r)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		return fmt.Errorf("the API server did not serve MetalLB's %s (%s) within %s of applying its CRDs", slices.Clone(missing), GroupVersion, timeout)
	}
	return nil
}

// PoolStatus is what MetalLB's controller reports of the pool.
type PoolStatus struct {
	Available, Assigned int64
}

// WaitPool waits until the controller has taken the pool in: it then
// reports the pool's free addresses in the pool's status.
func WaitPool(ctx context.Context, dyn dynamic.Interface, timeout time.Duration) (PoolStatus, error) {
	var st PoolStatus
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(PoolResource).Namespace(Namespace).Get(ctx, PoolName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			last = "the IPAddressPool " + PoolName + " does not exist"
			return false, nil
		}
		if err != nil {
			last = err.Error()
			return false, nil
		}
		st, last = poolStatus(u)
		return last == "", nil
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return st, ctx.Err()
		}
		return st, fmt.Errorf("MetalLB's controller did not take the address pool in within %s: %s", timeout, last)
	}
	return st, nil
}

// poolStatus reads an IPAddressPool's status; the string says why it is not
// usable yet ("" when it is).
func poolStatus(u *unstructured.Unstructured) (PoolStatus, string) {
	avail, found, _ := unstructured.NestedInt64(u.Object, "status", "availableIPv4")
	assigned, _, _ := unstructured.NestedInt64(u.Object, "status", "assignedIPv4")
	st := PoolStatus{Available: avail, Assigned: assigned}
	switch {
	case !found:
		return st, "the pool has no status yet"
	case avail == 0 && assigned == 0:
		return st, "the pool reports no IPv4 address"
	}
	return st, ""
}
