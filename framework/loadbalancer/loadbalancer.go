// Package loadbalancer tells, before a spec makes a LoadBalancer Service,
// whether anything in the cluster will answer for it: a known implementation
// found by what it leaves in the API (MetalLB's address pools, Cilium's
// load-balancer IP pools, a cloud provider's node IDs, cloud-provider-kind's
// node type), or, where none is known and the cluster is not one where that
// settles it (kind), a short look at the Service for any controller's answer.
// A cluster with nothing is known at once, without a wait.
package loadbalancer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Resources whose objects show an implementation.
var (
	MetalLBPools = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
	CiliumPools  = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumloadbalancerippools"}
)

// cloudProviders are the provider-ID schemes of clouds whose controller
// managers implement LoadBalancer Services.
var cloudProviders = map[string]string{
	"aws": "AWS", "azure": "Azure", "gce": "Google Cloud", "openstack": "OpenStack",
	"digitalocean": "DigitalOcean", "linode": "Linode", "hcloud": "Hetzner Cloud", "oci": "Oracle Cloud",
	"ibm": "IBM Cloud", "alicloud": "Alibaba Cloud", "scaleway": "Scaleway", "exoscale": "Exoscale",
}

// kindNodeType is the instance type cloud-provider-kind gives the nodes it runs for.
const kindNodeType = "kind-node"

// Wait bounds the wait for an address where an implementation was found;
// QuickCheck bounds the look for any answer where none is known.
var (
	Wait       = 2 * time.Minute
	QuickCheck = 10 * time.Second
)

// ErrNoAnswer means no controller answered for the Service within QuickCheck.
var ErrNoAnswer = errors.New("no controller answered")

// Finding is what Detect found.
type Finding struct {
	// Implementation names what serves LoadBalancer Services; "" when nothing known does.
	Implementation string
	// Detail: what the implementation showed, or what was looked for.
	Detail string
	// Unsure is set when no known implementation was found but the cluster
	// may have one that leaves no trace Detect knows (not a kind cluster).
	Unsure bool
}

// Found reports whether a known implementation was found.
func (f Finding) Found() bool { return f.Implementation != "" }

// String says what was found, for the spec's log.
func (f Finding) String() string {
	if f.Found() {
		return f.Implementation + " (" + f.Detail + ")"
	}
	return f.Detail
}

// Detect looks for a LoadBalancer implementation, in one round of API reads.
func Detect(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface) (Finding, error) {
	var looked []string
	blind := false // a list the harness may not read: what it hides may be there
	pools, err := list(ctx, dyn, MetalLBPools)
	if apierrors.IsForbidden(err) {
		looked, blind, err = append(looked, "MetalLB's pools not readable (forbidden)"), true, nil
	}
	if err != nil {
		return Finding{}, err
	}
	switch usable := autoAssigned(pools); {
	case len(usable) > 0:
		return Finding{Implementation: "MetalLB", Detail: "address pools " + strings.Join(usable, ", ")}, nil
	case len(pools) > 0:
		looked = append(looked, fmt.Sprintf("MetalLB is installed but none of its %d IPAddressPools assigns addresses automatically", len(pools)))
	case pools != nil:
		looked = append(looked, "MetalLB is installed but has no IPAddressPool")
	case !blind:
		looked = append(looked, "no MetalLB")
	}
	cilium, err := list(ctx, dyn, CiliumPools)
	switch {
	case apierrors.IsForbidden(err):
		looked, blind = append(looked, "Cilium's pools not readable (forbidden)"), true
	case err != nil:
		return Finding{}, err
	case len(cilium) > 0:
		return Finding{Implementation: "Cilium LB IPAM", Detail: "load-balancer IP pools " + names(cilium)}, nil
	default:
		looked = append(looked, "no Cilium LB IPAM pool")
	}

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Finding{}, fmt.Errorf("listing nodes: %w", err)
	}
	kind := 0
	for _, n := range nodes.Items {
		scheme, _, ok := strings.Cut(n.Spec.ProviderID, "://")
		if cloud, known := cloudProviders[scheme]; ok && known {
			return Finding{Implementation: cloud + "'s cloud controller manager", Detail: "node " + n.Name + " has provider ID " + n.Spec.ProviderID}, nil
		}
		if n.Labels[corev1.LabelInstanceTypeStable] == kindNodeType {
			return Finding{Implementation: "cloud-provider-kind", Detail: "node " + n.Name + " has instance type " + kindNodeType}, nil
		}
		if scheme == "kind" && ok {
			kind++
		}
	}
	looked = append(looked, "no cloud provider on the nodes", "no cloud-provider-kind")
	f := Finding{Detail: "looked for a LoadBalancer implementation and found none: " + strings.Join(looked, ", ")}
	if kind == 0 || blind {
		// Not a kind cluster (whose nodes kind gives kind:// provider IDs, also
		// where Windows machines joined it), or one whose pools the harness may
		// not read: an implementation Detect does not see may be there.
		f.Unsure = true
	}
	return f, nil
}

// list lists the objects of r in every namespace; nil (not an empty slice)
// when the API server does not serve r.
func list(ctx context.Context, dyn dynamic.Interface, r schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	l, err := dyn.Resource(r).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", r.GroupResource(), err) // still IsForbidden
	}
	if l.Items == nil {
		return []unstructured.Unstructured{}, nil
	}
	return l.Items, nil
}

// autoAssigned describes the MetalLB pools that hand out addresses to any
// Service (spec.autoAssign is not false).
func autoAssigned(pools []unstructured.Unstructured) []string {
	var out []string
	for _, p := range pools {
		if auto, found, _ := unstructured.NestedBool(p.Object, "spec", "autoAssign"); found && !auto {
			continue
		}
		addrs, _, _ := unstructured.NestedStringSlice(p.Object, "spec", "addresses")
		out = append(out, fmt.Sprintf("%s/%s (%s)", p.GetNamespace(), p.GetName(), strings.Join(addrs, ", ")))
	}
	sort.Strings(out)
	return out
}

func names(objs []unstructured.Unstructured) string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// ExternalAddress waits for the Service's first external address (an IP or
// a host name). Where f found an implementation it waits up to Wait and an
// error says the implementation gave none. Where f is Unsure it first looks
// for any answer (an address, or an event about the Service) for up to
// QuickCheck, and returns ErrNoAnswer when there is none.
func (f Finding) ExternalAddress(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) (string, error) {
	timeout := Wait
	if !f.Found() {
		if !f.Unsure {
			return "", fmt.Errorf("%w: %s", ErrNoAnswer, f.Detail)
		}
		addr, answered, err := quickCheck(ctx, cs, svc)
		if err != nil || addr != "" {
			return addr, err
		}
		if answered == "" {
			return "", fmt.Errorf("%w for the LoadBalancer Service within %s (an address or an event), and %s", ErrNoAnswer, QuickCheck, f.Detail)
		}
		timeout = Wait - QuickCheck
	}
	var addr string
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		addr, last = address(ctx, cs, svc)
		return addr != "", nil
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return "", ctx.Err()
		}
		msg := fmt.Sprintf("%s gave the LoadBalancer Service %s/%s no external address within %s", orUnknown(f.Implementation), svc.Namespace, svc.Name, timeout)
		if last != nil {
			msg += " (last error: " + last.Error() + ")"
		}
		if ev := events(ctx, cs, svc); ev != "" {
			msg += "; its events: " + ev
		}
		return "", errors.New(msg)
	}
	return addr, nil
}

func orUnknown(impl string) string {
	if impl == "" {
		return "the controller that answered"
	}
	return impl
}

// quickCheck polls the Service and its events for up to QuickCheck; it
// returns the address when one came, else what answered ("" when nothing).
func quickCheck(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) (addr, answered string, err error) {
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, QuickCheck, true, func(ctx context.Context) (bool, error) {
		addr, _ = address(ctx, cs, svc)
		answered = events(ctx, cs, svc)
		return addr != "" || answered != "", nil
	})
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return "", "", ctx.Err()
	}
	return addr, answered, nil
}

func address(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) (string, error) {
	s, err := cs.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			return in.IP, nil
		}
		if in.Hostname != "" {
			return in.Hostname, nil
		}
	}
	return "", nil
}

// events describes the events about the Service ("" when there are none).
func events(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) string {
	sel := fields.Set{"involvedObject.kind": "Service", "involvedObject.name": svc.Name}.AsSelector().String()
	l, err := cs.CoreV1().Events(svc.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return ""
	}
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Kind != "Service" || e.InvolvedObject.Name != svc.Name {
			continue // a fake client ignores field selectors
		}
		out = append(out, fmt.Sprintf("%s %s from %s: %s", e.Type, e.Reason, e.Source.Component+e.ReportingController, e.Message))
	}
	return strings.Join(out, "; ")
}

// ForPodsAnywhere sets what a LoadBalancer Service needs to answer for pods
// that may all run on Windows nodes: externalTrafficPolicy Cluster. MetalLB
// (the harness's, infra/metallb) announces an address in layer 2 from one
// node with a speaker, elected among the nodes with a speaker when the
// policy is Cluster, among the nodes with both a speaker and a ready
// endpoint when it is Local (speaker/layer2_controller.go, ShouldAnnounce,
// MetalLB v0.15.2; older MetalLB announced no Service whose endpoints all
// ran on nodes without a speaker: metallb/metallb#954, #322). Its speakers
// run on Linux nodes only, so with Local a Service whose endpoints are all
// on Windows nodes is never announced (a limitation: docs/network-matrix.md);
// with Cluster a Linux node announces it, and its kube-proxy forwards to the
// Windows pods over the overlay.
func ForPodsAnywhere(svc *corev1.Service) {
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
}
