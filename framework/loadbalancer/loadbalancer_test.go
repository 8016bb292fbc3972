package loadbalancer

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/testing/upstream"
)

func node(name, providerID string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func kindNodes() []runtime.Object {
	return []runtime.Object{
		node("wc-control-plane", "kind://docker/wc/wc-control-plane", nil),
		node("wc-worker", "kind://docker/wc/wc-worker", nil),
	}
}

func metallbPool(name string, autoAssign *bool) *unstructured.Unstructured {
	spec := map[string]any{"addresses": []any{"172.18.255.176/28"}}
	if autoAssign != nil {
		spec["autoAssign"] = *autoAssign
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
		"metadata": map[string]any{"name": name, "namespace": "metallb-system"}, "spec": spec,
	}}
}

var lists = map[schema.GroupVersionResource]string{MetalLBPools: "IPAddressPoolList", CiliumPools: "CiliumLoadBalancerIPPoolList"}

// dynamicClient serves objs; the resources in absent answer as an API server
// without their CRD does.
func dynamicClient(absent []string, objs ...runtime.Object) *fakedynamic.FakeDynamicClient {
	dyn := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...)
	for _, r := range absent {
		dyn.PrependReactor("list", r, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: r}, "")
		})
	}
	return dyn
}

func TestDetect(t *testing.T) {
	ctx := context.Background()
	no := false
	none := []string{"ipaddresspools", "ciliumloadbalancerippools"}
	for _, tc := range []struct {
		name    string
		nodes   []runtime.Object
		dyn     *fakedynamic.FakeDynamicClient
		impl    string
		unsure  bool
		details []string
	}{
		{"plain kind: nothing, known at once", kindNodes(), dynamicClient(none), "", false,
			[]string{"found none", "no MetalLB", "no Cilium LB IPAM pool", "no cloud provider on the nodes", "no cloud-provider-kind"}},
		{"MetalLB with a pool", kindNodes(), dynamicClient(none[1:], metallbPool("winconform", nil)), "MetalLB", false,
			[]string{"metallb-system/winconform (172.18.255.176/28)"}},
		{"MetalLB without a pool", kindNodes(), dynamicClient(none[1:]), "", false,
			[]string{"MetalLB is installed but has no IPAddressPool"}},
		{"MetalLB whose only pool is not automatic", kindNodes(), dynamicClient(none[1:], metallbPool("manual", &no)), "", false,
			[]string{"none of its 1 IPAddressPools assigns addresses automatically"}},
		{"Cilium LB IPAM", kindNodes(), dynamicClient(none[:1], &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cilium.io/v2", "kind": "CiliumLoadBalancerIPPool", "metadata": map[string]any{"name": "blue"}}}),
			"Cilium LB IPAM", false, []string{"blue"}},
		{"a cloud", []runtime.Object{node("ip-10-0-0-1", "aws:///eu-west-1a/i-0abc", nil)}, dynamicClient(none), "AWS's cloud controller manager", false,
			[]string{"aws:///eu-west-1a/i-0abc"}},
		{"cloud-provider-kind", []runtime.Object{node("kind-control-plane", "kind://docker/kind/kind-control-plane",
			map[string]string{corev1.LabelInstanceTypeStable: "kind-node"})}, dynamicClient(none), "cloud-provider-kind", false, nil},
		{"kind with a Windows machine joined", append(kindNodes(), node("win-2022", "", nil)), dynamicClient(none), "", false, nil},
		{"an unknown cluster", []runtime.Object{node("bare-1", "", nil), node("bare-2", "metal://rack4/7", nil)}, dynamicClient(none), "", true,
			[]string{"found none"}},
	} {
		cs := fake.NewSimpleClientset(tc.nodes...)
		f, err := Detect(ctx, cs, tc.dyn)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if f.Implementation != tc.impl || f.Unsure != tc.unsure || f.Found() != (tc.impl != "") {
			t.Errorf("%s: found %q unsure %v, want %q %v (%s)", tc.name, f.Implementation, f.Unsure, tc.impl, tc.unsure, f.Detail)
		}
		for _, d := range tc.details {
			if !strings.Contains(f.String(), d) {
				t.Errorf("%s: %q does not say %q", tc.name, f, d)
			}
		}
	}
	// Pools the harness may not read: not "nothing found" but unsure, even on kind.
	dyn := dynamicClient(none[1:])
	dyn.PrependReactor("list", "ipaddresspools", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "ipaddresspools"}, "", errors.New("RBAC"))
	})
	f, err := Detect(ctx, fake.NewSimpleClientset(kindNodes()...), dyn)
	if err != nil || f.Found() || !f.Unsure || !strings.Contains(f.Detail, "MetalLB's pools not readable (forbidden)") {
		t.Errorf("a forbidden list: %+v, %v", f, err)
	}
	// Any other API error is an error.
	dyn = dynamicClient(nil)
	dyn.PrependReactor("list", "ciliumloadbalancerippools", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
	})
	if _, err := Detect(ctx, fake.NewSimpleClientset(kindNodes()...), dyn); err == nil || !strings.Contains(err.Error(), "ciliumloadbalancerippools") {
		t.Errorf("a failing list: %v", err)
	}
}

func lbService(ingress ...corev1.LoadBalancerIngress) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "lb", Namespace: "t"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}},
	}
}

func event(reason string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "lb." + reason, Namespace: "t"},
		InvolvedObject: corev1.ObjectReference{Kind: "Service", Name: "lb", Namespace: "t"},
		Type:           "Normal", Reason: reason, Source: corev1.EventSource{Component: "cloud"}, Message: "working on it",
	}
}

func shortWaits(t *testing.T) {
	w, q := Wait, QuickCheck
	Wait, QuickCheck = 1500*time.Millisecond, 600*time.Millisecond
	t.Cleanup(func() { Wait, QuickCheck = w, q })
}

func TestExternalAddress(t *testing.T) {
	shortWaits(t)
	ctx := context.Background()
	found := Finding{Implementation: "MetalLB", Detail: "address pools x"}
	unsure := Finding{Detail: "looked for a LoadBalancer implementation and found none", Unsure: true}
	none := Finding{Detail: "looked for a LoadBalancer implementation and found none"}

	addr, err := found.ExternalAddress(ctx, fake.NewSimpleClientset(lbService(corev1.LoadBalancerIngress{IP: "172.18.255.176"})), lbService())
	if err != nil || addr != "172.18.255.176" {
		t.Errorf("an address: %q, %v", addr, err)
	}
	addr, err = found.ExternalAddress(ctx, fake.NewSimpleClientset(lbService(corev1.LoadBalancerIngress{Hostname: "lb.example"})), lbService())
	if err != nil || addr != "lb.example" {
		t.Errorf("a host name: %q, %v", addr, err)
	}
	// An implementation that gives no address fails, with the Service's events.
	_, err = found.ExternalAddress(ctx, fake.NewSimpleClientset(lbService(), event("AllocationFailed")), lbService())
	if err == nil || errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "MetalLB gave the LoadBalancer Service t/lb no external address") ||
		!strings.Contains(err.Error(), "AllocationFailed") {
		t.Errorf("no address from MetalLB: %v", err)
	}
	// Nothing known and nothing there: no wait at all.
	start := time.Now()
	_, err = none.ExternalAddress(ctx, fake.NewSimpleClientset(lbService()), lbService())
	if !errors.Is(err, ErrNoAnswer) || time.Since(start) > 100*time.Millisecond {
		t.Errorf("nothing known: %v after %s, want ErrNoAnswer at once", err, time.Since(start))
	}
	// Unsure, and nothing answers within QuickCheck: ErrNoAnswer.
	start = time.Now()
	_, err = unsure.ExternalAddress(ctx, fake.NewSimpleClientset(lbService()), lbService())
	if !errors.Is(err, ErrNoAnswer) || time.Since(start) > Wait {
		t.Errorf("unsure, no answer: %v after %s", err, time.Since(start))
	}
	// Unsure, but a controller speaks of the Service: it gets the full wait and
	// its failure is a failure.
	_, err = unsure.ExternalAddress(ctx, fake.NewSimpleClientset(lbService(), event("EnsuringLoadBalancer")), lbService())
	if err == nil || errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "the controller that answered gave") {
		t.Errorf("unsure, an event but no address: %v", err)
	}
	addr, err = unsure.ExternalAddress(ctx, fake.NewSimpleClientset(lbService(corev1.LoadBalancerIngress{IP: "203.0.113.7"})), lbService())
	if err != nil || addr != "203.0.113.7" {
		t.Errorf("unsure, an address: %q, %v", addr, err)
	}
	// Cancelled: the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := found.ExternalAddress(cctx, fake.NewSimpleClientset(lbService()), lbService()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// A LoadBalancer Service for pods that may all run on Windows nodes asks
// for externalTrafficPolicy Cluster (NET-26; before, the spec took the
// default, unsaid), which MetalLB's own election, at the version the
// harness installs, needs for them: with Cluster it elects among the nodes
// with a speaker, with Local among those with a speaker and an endpoint,
// which a Windows node never is (its speakers are Linux DaemonSet pods).
func TestForPodsAnywhereIsWhatMetalLBNeeds(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	ForPodsAnywhere(svc)
	if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Fatalf("externalTrafficPolicy %q, want Cluster", svc.Spec.ExternalTrafficPolicy)
	}
	if testing.Short() && os.Getenv("CI") == "" {
		t.Skip("reads MetalLB's source through the Go module proxy: not in a short run")
	}
	src, err := upstream.ReadModuleSource(metallb.Module, metallb.Version, "speaker/layer2_controller.go")
	if err != nil {
		t.Fatal(err)
	}
	all, err := src.Calls("ShouldAnnounce", "")
	if err != nil {
		t.Fatal(err)
	}
	local, err := src.Calls("ShouldAnnounce", "ServiceExternalTrafficPolicyTypeLocal")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(all, "nodesWithActiveSpeakers") || !slices.Contains(local, "nodesWithEndpoint") || slices.Contains(local, "nodesWithActiveSpeakers") {
		t.Errorf("%s: ShouldAnnounce no longer elects among the nodes with a speaker for Cluster and among those with an endpoint for Local (calls %v; under Local %v): check NET-26's policy and docs/network-matrix.md", src, all, local)
	}
	if !slices.Contains(all, "activeEndpointExists") {
		t.Errorf("%s: ShouldAnnounce no longer needs an active endpoint anywhere: %v", src, all)
	}
}
