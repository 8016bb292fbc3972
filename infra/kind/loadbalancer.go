package kind

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/infra/metallb"
)

// LoadBalancerResult says what `up` installed to serve LoadBalancer Services.
type LoadBalancerResult struct {
	Implementation string `json:"implementation"`
	Controller     string `json:"controllerImage,omitempty"`
	Speaker        string `json:"speakerImage,omitempty"`
	Network        string `json:"dockerNetwork,omitempty"`
	Pool           string `json:"addressPool"`
	Available      int64  `json:"availableAddresses"`
}

// dockerNetworkName is the Docker network kind puts the nodes on.
func dockerNetworkName() string {
	if n := os.Getenv("KIND_EXPERIMENTAL_DOCKER_NETWORK"); n != "" {
		return n
	}
	return "kind"
}

// dockerNetwork inspects the nodes' Docker network; ok is false when it does
// not exist (yet: kind makes it with the first cluster).
func (c *Cluster) dockerNetwork(ctx context.Context) (n metallb.Network, ok bool, err error) {
	name := dockerNetworkName()
	out, err := c.docker.Output(ctx, nil, "network", "inspect", name)
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "no such network") || strings.Contains(strings.ToLower(err.Error()), "not found") {
			return n, false, nil
		}
		return n, false, fmt.Errorf("inspecting the Docker network %s: %w", name, err)
	}
	n, err = metallb.ParseNetwork(out)
	return n, err == nil, err
}

// checkPool refuses, before any node is made or an existing cluster is
// used, a configured pool that does not fit the Docker network as it is now.
// (A new cluster's pool is checked again once its nodes are on the network.)
func (c *Cluster) checkPool(ctx context.Context) error {
	lb := c.cfg.LoadBalancer
	if !lb.On() || lb.Addresses == "" {
		return nil
	}
	pool, err := metallb.ParsePool(lb.Addresses)
	if err != nil {
		return fmt.Errorf("loadBalancer.addresses: %w", err)
	}
	n, ok, err := c.dockerNetwork(ctx)
	if err != nil || !ok {
		return err // checked again once kind has made the network
	}
	return n.Check(pool)
}

// pool inspects the Docker network, with the cluster's nodes on it, and
// chooses the cluster's pool there.
func (c *Cluster) pool(ctx context.Context) (metallb.Pool, metallb.Network, error) {
	n, ok, err := c.dockerNetwork(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("the Docker network %s does not exist, though the cluster's nodes should be on it", dockerNetworkName())
	}
	if err != nil {
		return metallb.Pool{}, n, err
	}
	pool, err := choosePool(c.cfg, n)
	return pool, n, err
}

// choosePool is the configured pool, checked against the network, or else
// one computed from the address of the cluster's control-plane node.
func choosePool(cfg Config, n metallb.Network) (metallb.Pool, error) {
	if a := cfg.LoadBalancer.Addresses; a != "" {
		pool, err := metallb.ParsePool(a)
		if err != nil {
			return pool, fmt.Errorf("loadBalancer.addresses: %w", err)
		}
		return pool, n.Check(pool)
	}
	cp := cfg.Name + "-control-plane"
	anchor, ok := n.Containers[cp]
	if !ok {
		return metallb.Pool{}, fmt.Errorf("the control-plane node %s is not on the Docker network %s", cp, n.Name)
	}
	return metallb.DefaultPool(n, anchor)
}

// loadBalancerImages are MetalLB's images for the node image in use.
func loadBalancerImages(localNodeImage bool) metallb.Images {
	if localNodeImage {
		return metallb.LocalImages()
	}
	return metallb.UpstreamImages()
}

// installLoadBalancer applies MetalLB with the cluster's pool; the readiness
// wait that follows covers its pods.
func (c *Cluster) installLoadBalancer(ctx context.Context, restCfg *rest.Config, res *Result) error {
	pool, n, err := c.pool(ctx)
	if err != nil {
		return err
	}
	dir, err := metallb.ModuleDir(ctx, c.opts.Log)
	if err != nil {
		return err
	}
	crds, err := metallb.CRDs(dir)
	if err != nil {
		return err
	}
	img := loadBalancerImages(res.LocalImage)
	if err := metallb.Install(ctx, restCfg, crds, img, pool, LabelUnderlay, time.Minute); err != nil {
		return err
	}
	res.LoadBalancer = &LoadBalancerResult{
		Implementation: "MetalLB " + metallb.Version + " (L2)", Controller: img.Controller, Speaker: img.Speaker,
		Network: n.Name + " " + n.Subnet.String(), Pool: pool.String(),
	}
	return nil
}

// waitLoadBalancer waits until MetalLB's controller has taken the pool in,
// and says what was installed.
func (c *Cluster) waitLoadBalancer(ctx context.Context, restCfg *rest.Config, res *Result) error {
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	st, err := metallb.WaitPool(ctx, dyn, time.Minute)
	if err != nil {
		return err
	}
	lb := res.LoadBalancer
	lb.Available = st.Available
	c.logf("load balancer: MetalLB %s in L2 mode (controller %s, speaker %s), address pool %s on the Docker network %s, %d addresses free",
		metallb.Version, lb.Controller, lb.Speaker, lb.Pool, lb.Network, st.Available)
	return nil
}

// existingLoadBalancer finds the pool the harness installed on an existing
// cluster; nil when there is none.
func (c *Cluster) existingLoadBalancer(ctx context.Context, restCfg *rest.Config) (*LoadBalancerResult, error) {
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	u, err := dyn.Resource(metallb.PoolResource).Namespace(metallb.Namespace).Get(ctx, metallb.PoolName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) { // no pool, or no MetalLB at all
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	addrs, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "addresses")
	avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableIPv4")
	return &LoadBalancerResult{Implementation: "MetalLB (L2)", Pool: strings.Join(addrs, ","), Available: avail}, nil
}

// samePool reports whether two ways of writing a pool are the same addresses.
func samePool(a, b string) bool {
	pa, errA := metallb.ParsePool(a)
	pb, errB := metallb.ParsePool(b)
	return errA == nil && errB == nil && pa == pb
}
