package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/kube"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/internal/kubefile"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/text"
)

// Options are how Up runs, as opposed to what it makes (Config).
type Options struct {
	// Kubeconfig is the file that receives the cluster's credentials.
	Kubeconfig string
	// CacheDir keeps node image builds and logs.
	CacheDir string
	// ShimDir receives the docker shim where this host needs it (default:
	// CacheDir/shim); the CLI gives its own _output/shim, so that checkouts
	// sharing the cache never run each other's binary as their shim.
	ShimDir string
	// LogDir receives the cluster's logs when it fails to come up.
	LogDir string
	// Images are image archives (docker save format) loaded into every node.
	Images []ImageArchive
	// Log receives progress lines.
	Log io.Writer
}

// ImageArchive is an image archive and what it holds, for the log.
type ImageArchive struct {
	Name string
	Path string
}

// Result says what Up made or found.
type Result struct {
	Name       string `json:"name"`
	Kubeconfig string `json:"kubeconfig"`
	NodeImage  string `json:"nodeImage"`
	LocalImage bool   `json:"localNodeImage"`
	// KubernetesVersion is the cluster's Kubernetes release.
	KubernetesVersion string `json:"kubernetesVersion"`
	// Cgroup is the host's cgroup version as the nodes see it, and what the
	// kubelet was told of it: "v2", "v1" or "v1, failCgroupV1 off".
	Cgroup   string        `json:"cgroup,omitempty"`
	CgroupV1 bool          `json:"-"`
	Reused   bool          `json:"reused"`
	Quirks   docker.Quirks `json:"hostQuirks"`
	// LoadBalancer is what serves LoadBalancer Services; nil when nothing does.
	LoadBalancer *LoadBalancerResult `json:"loadBalancer,omitempty"`
	Timings      map[string]string   `json:"timings"`
}

// Cluster runs kind for one cluster configuration.
type Cluster struct {
	cfg      Config
	opts     Options
	docker   *docker.Client
	provider *cluster.Provider
	timings  map[string]string
}

// New checks that docker answers and prepares kind's provider.
func New(ctx context.Context, cfg Config, opts Options) (*Cluster, error) {
	d, err := docker.New()
	if err != nil {
		return nil, err
	}
	if _, err := d.Ping(ctx); err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.CacheDir == "" {
		opts.CacheDir = nodeimage.DefaultCacheDir()
	}
	if opts.ShimDir == "" {
		opts.ShimDir = filepath.Join(opts.CacheDir, "shim")
	}
	return &Cluster{
		cfg: cfg, opts: opts, docker: d,
		provider: cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindcmd.NewLogger())),
		timings:  map[string]string{},
	}, nil
}

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, format+"\n", args...)
}

func (c *Cluster) timed(name string, f func() error) error {
	start := time.Now()
	err := f()
	c.timings[name] = time.Since(start).Round(100 * time.Millisecond).String()
	return err
}

// Exists reports whether kind has nodes for the cluster's name.
func (c *Cluster) Exists() (bool, error) {
	n, err := c.provider.ListNodes(c.cfg.Name)
	return len(n) > 0, err
}

// Up makes the cluster, or checks and reuses it when it exists. A cluster
// that fails to come up, or whose making is interrupted, is deleted, with
// its logs kept in Options.LogDir.
func (c *Cluster) Up(ctx context.Context) (*Result, error) {
	res := &Result{Name: c.cfg.Name, Kubeconfig: c.opts.Kubeconfig, KubernetesVersion: c.cfg.KubernetesVersion, Timings: c.timings}
	if c.cfg.RemoteNodes > 0 {
		// Refused up front, before any cluster work.
		if err := underlay.CheckRoot(fmt.Sprintf("remoteNodes: %d (Linux nodes joined through the routed underlay)", c.cfg.RemoteNodes)); err != nil {
			return nil, err
		}
	}
	if err := c.checkPool(ctx); err != nil {
		return nil, err
	}
	if err := c.detectCgroup(ctx, res); err != nil {
		return nil, err
	}
	exists, err := c.Exists()
	if err != nil {
		return nil, err
	}
	if exists {
		// Before any work: a cluster of another line is not the one asked for.
		if err := c.checkExistingLine(ctx); err != nil {
			return nil, err
		}
		restore, err := c.prepareExisting(ctx, res)
		if err != nil {
			return nil, err
		}
		defer restore()
		return c.reuse(ctx, res)
	}
	if err := c.timed("node image", func() error { return c.resolveImage(ctx, res) }); err != nil {
		return nil, err
	}
	restore, err := c.prepareHost(ctx, res)
	if err != nil {
		return nil, err
	}
	defer restore()
	if err := c.timed("docker network", func() error { return c.reserveNetwork(ctx) }); err != nil {
		return nil, err
	}
	if err := c.timed("kind create", func() error { return c.create(ctx, res.NodeImage, res.CgroupV1) }); err != nil {
		return nil, err
	}
	// From here on, a failure deletes the cluster.
	if err := c.finish(ctx, res); err != nil {
		logs := c.collectLogs()
		derr := c.delete()
		msg := fmt.Sprintf("cluster %q did not come up: %v", c.cfg.Name, err)
		if logs != "" {
			msg += "; its logs are in " + logs
		}
		if derr != nil {
			return nil, fmt.Errorf("%s; deleting it failed too: %v (run: winconform down --name %s)", msg, derr, c.cfg.Name)
		}
		return nil, errors.New(msg + "; the cluster was deleted")
	}
	return res, nil
}

// detectCgroup records the host's cgroup version and whether the kubelet
// gets failCgroupV1: false for it (KindConfig).
func (c *Cluster) detectCgroup(ctx context.Context, res *Result) error {
	v, err := c.docker.CgroupVersion(ctx)
	if err != nil {
		return err
	}
	res.CgroupV1 = v == 1
	res.Cgroup = CgroupNote(res.CgroupV1, c.cfg.Line())
	if res.CgroupV1 {
		c.logf("cgroup v1 host: Kubernetes %s's kubelet refuses cgroup v1 unless told otherwise; the cluster's kubelets get failCgroupV1: false (%s)", c.cfg.Line().Name(), res.Cgroup)
	}
	return nil
}

// CgroupNote says what the kubelets of line run with on a host of the
// given cgroup version: "v2", "v1", or "v1, failCgroupV1 off" where the
// line's kubelet needs it.
func CgroupNote(cgroupV1 bool, line kubelines.Line) string {
	switch {
	case !cgroupV1:
		return "v2"
	case line.NeedsFailCgroupV1Off:
		return "v1, failCgroupV1 off"
	default:
		return "v1"
	}
}

// finish installs flannel and MetalLB, loads the test images and waits for readiness.
func (c *Cluster) finish(ctx context.Context, res *Result) error {
	restCfg, cs, err := c.clients()
	if err != nil {
		return err
	}
	// Every node has joined: kind's well-known token has done its work.
	if err := c.dropKindToken(ctx, cs); err != nil {
		return err
	}
	if err := c.timed("cni", func() error { return c.installCNI(ctx, restCfg, res.LocalImage) }); err != nil {
		return fmt.Errorf("installing flannel: %w", err)
	}
	// MetalLB waits on the API server, loading images on the nodes' containerd:
	// side by side.
	lbDone := make(chan error, 1)
	var lbTime time.Duration
	if c.cfg.LoadBalancer.On() {
		go func() {
			start := time.Now()
			err := c.installLoadBalancer(ctx, restCfg, res)
			lbTime = time.Since(start)
			lbDone <- err
		}()
	} else {
		lbDone <- nil
		c.logf("load balancer: none (loadBalancer.enabled: false): LoadBalancer Services get no external address")
	}
	remoteErr := c.timed("remote nodes", func() error { return c.ensureRemoteNodes(ctx, cs, res.NodeImage) })
	imgErr := remoteErr
	if imgErr == nil {
		imgErr = c.timed("load images", func() error { return c.LoadImages(ctx) })
	}
	lbErr := <-lbDone
	if c.cfg.LoadBalancer.On() {
		c.timings["load balancer (beside load images)"] = lbTime.Round(100 * time.Millisecond).String()
	}
	if lbErr != nil {
		return fmt.Errorf("installing MetalLB: %w", lbErr)
	}
	if imgErr != nil {
		return imgErr
	}
	err = c.timed("ready", func() error {
		return kube.WaitReady(ctx, cs, c.readiness(res), c.cfg.ReadyTimeout.Duration)
	})
	if err != nil || res.LoadBalancer == nil {
		return err
	}
	return c.timed("load balancer pool", func() error { return c.waitLoadBalancer(ctx, restCfg, res) })
}

// readiness is what the cluster must show: its nodes, and every pod of the
// system namespaces, flannel's and, when installed, MetalLB's.
func (c *Cluster) readiness(res *Result) kube.Readiness {
	r := kube.Readiness{Nodes: 1 + c.cfg.Workers + c.cfg.RemoteNodes, Namespaces: []string{"kube-system", "kube-flannel"}}
	if res.LoadBalancer != nil {
		r.Namespaces = append(r.Namespaces, metallb.Namespace)
	}
	return r
}

// reuse checks an existing cluster and refreshes its kubeconfig and images.
func (c *Cluster) reuse(ctx context.Context, res *Result) (*Result, error) {
	res.Reused = true
	c.logf("cluster %q exists: checking it", c.cfg.Name)
	if err := c.provider.ExportKubeConfig(c.cfg.Name, c.opts.Kubeconfig, false); err != nil {
		return nil, fmt.Errorf("cluster %q exists but its kubeconfig cannot be written: %w", c.cfg.Name, err)
	}
	restCfg, cs, err := c.clients()
	if err != nil {
		return nil, err
	}
	if c.cfg.LoadBalancer.On() {
		lb, err := c.existingLoadBalancer(ctx, restCfg)
		if err != nil {
			return nil, fmt.Errorf("cluster %q exists but its load balancer cannot be looked up: %w", c.cfg.Name, err)
		}
		switch want := c.cfg.LoadBalancer.Addresses; {
		case lb == nil:
			c.logf("cluster %q exists without MetalLB (made with loadBalancer.enabled: false, or before the harness installed it): LoadBalancer specs will skip; `make down` and `make up` install it", c.cfg.Name)
		case want != "" && !samePool(want, lb.Pool):
			c.logf("cluster %q exists with the address pool %s, not %s as loadBalancer.addresses says: `make down` and `make up` apply it", c.cfg.Name, lb.Pool, want)
		}
		res.LoadBalancer = lb
	}
	// Remote nodes made, joined, and their underlay put back (a killed
	// run's host may have lost its rules).
	if err := c.ensureRemoteNodes(ctx, cs, res.NodeImage); err != nil {
		return nil, fmt.Errorf("cluster %q exists but its remote nodes cannot be made ready: %w", c.cfg.Name, err)
	}
	if err := kube.WaitReady(ctx, cs, c.readiness(res), time.Minute); err != nil {
		return nil, fmt.Errorf("cluster %q exists but is not healthy (%v): delete it with `make down` and run again", c.cfg.Name, err)
	}
	if lb := res.LoadBalancer; lb != nil {
		c.logf("load balancer: %s, address pool %s, %d addresses free", lb.Implementation, lb.Pool, lb.Available)
	}
	if err := c.dropKindToken(ctx, cs); err != nil {
		return nil, err
	}
	if err := c.LoadImages(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

func (c *Cluster) clients() (*rest.Config, kubernetes.Interface, error) {
	restCfg, err := kubefile.REST("kubeconfig", c.opts.Kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	restCfg.Timeout = 30 * time.Second
	cs, err := kubernetes.NewForConfig(restCfg)
	return restCfg, cs, err
}

// resolveImage picks the node image: the configured one when it is present
// or can be pulled (unless a local build is asked for), else a local build.
func (c *Cluster) resolveImage(ctx context.Context, res *Result) error {
	want := c.cfg.NodeImage
	if c.cfg.NodeImageBuild != config.BuildAlways {
		if c.docker.ImageExists(ctx, want) {
			res.NodeImage = want
		} else if err := c.docker.Pull(ctx, want, 5*time.Minute); err == nil {
			res.NodeImage = want
		} else if c.cfg.NodeImageBuild == config.BuildNever {
			return fmt.Errorf("node image %s is not present and cannot be pulled (%v): make it available, or set nodeImageBuild: auto to build one locally", want, err)
		} else {
			c.logf("node image %s cannot be pulled (%s): using a locally built one", want, text.FirstLine(err.Error()))
		}
	}
	if res.NodeImage == "" {
		tag, err := nodeimage.Ensure(ctx, c.docker, nodeimage.Spec{
			KubernetesVersion: c.cfg.KubernetesVersion, CacheDir: c.opts.CacheDir, Log: c.opts.Log,
		})
		if err != nil {
			return err
		}
		res.NodeImage = tag
	}
	key, err := c.docker.ImageLabel(ctx, res.NodeImage, nodeimage.KeyLabel)
	if err != nil {
		return err
	}
	res.LocalImage = key != ""
	c.logf("node image: %s", res.NodeImage)
	return nil
}

// prepareExisting finds the node image of the existing cluster and routes
// kind's docker commands through the shim where this host needs it, as
// prepareHost does for a new cluster: every use of an existing cluster's
// nodes (reuse, tokens for joins) goes through it.
func (c *Cluster) prepareExisting(ctx context.Context, res *Result) (func(), error) {
	image, err := c.docker.Output(ctx, nil, "inspect", "--format", "{{.Config.Image}}", c.cfg.Name+"-control-plane")
	if err != nil {
		return nil, fmt.Errorf("cluster %q exists but its control-plane container cannot be inspected: %w", c.cfg.Name, err)
	}
	res.NodeImage = strings.TrimSpace(string(image))
	key, _ := c.docker.ImageLabel(ctx, res.NodeImage, nodeimage.KeyLabel)
	res.LocalImage = key != ""
	return c.prepareHost(ctx, res)
}

// prepareHost detects what this host's docker cannot do that kind needs,
// with res.NodeImage, and routes kind's docker commands through the shim
// where needed. The returned function undoes the routing.
func (c *Cluster) prepareHost(ctx context.Context, res *Result) (func(), error) {
	err := c.timed("host quirks", func() (err error) { res.Quirks, err = c.docker.DetectQuirks(ctx, res.NodeImage); return })
	if err != nil {
		return nil, err
	}
	if res.Quirks.NoPrivileged {
		c.logf("docker cannot start --privileged containers here (%s): kind runs through the harness's docker shim, dropping %s",
			res.Quirks.Detail, strings.Join(res.Quirks.CapDrop, ","))
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return c.docker.Activate(res.Quirks, c.opts.ShimDir, self)
}

// create runs kind. kind's create cannot be cancelled, so an interruption
// deletes the nodes under it, which makes it fail fast; either way, kind
// deletes what it made when it fails.
func (c *Cluster) create(ctx context.Context, image string, cgroupV1 bool) error {
	if err := os.MkdirAll(filepath.Dir(c.opts.Kubeconfig), 0o755); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		done <- c.provider.Create(c.cfg.Name,
			cluster.CreateWithV1Alpha4Config(c.cfg.KindConfig(image, cgroupV1)),
			cluster.CreateWithKubeconfigPath(c.opts.Kubeconfig),
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false),
		)
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("kind create cluster %q: %w", c.cfg.Name, describeKindError(err))
		}
		return nil
	case <-ctx.Done():
		c.logf("interrupted: deleting the cluster being made")
		_ = c.delete()
		<-done
		_ = c.delete() // nodes kind made after the first delete
		return ctx.Err()
	}
}

// describeKindError adds the output of a failed command to kind's error.
func describeKindError(err error) error {
	var out []string
	for _, line := range strings.Split(kindErrorOutput(err), "\n") {
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	if len(out) > 6 {
		out = out[len(out)-6:]
	}
	if len(out) == 0 {
		return err
	}
	return fmt.Errorf("%w: %s", err, strings.Join(out, " | "))
}

// installCNI applies flannel; on an upstream node image it first puts the
// CNI plugins flannel needs (which kindest/node lacks) on every node.
func (c *Cluster) installCNI(ctx context.Context, restCfg *rest.Config, local bool) error {
	if !local {
		if err := c.installPlugins(ctx); err != nil {
			return err
		}
	}
	manifest, err := c.cfg.CNIManifest(local)
	if err != nil {
		return err
	}
	return kube.Apply(ctx, restCfg, manifest, "winconform")
}

func (c *Cluster) installPlugins(ctx context.Context) error {
	plugins, err := cni.BuildPlugins(ctx, c.opts.Log, filepath.Join(c.opts.CacheDir, "bin"))
	if err != nil {
		return err
	}
	ns, err := c.provider.ListNodes(c.cfg.Name)
	if err != nil {
		return err
	}
	for _, n := range ns {
		for name, path := range plugins {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dst := "/opt/cni/bin/" + name
			if err := n.Command("sh", "-c", "cat > "+dst+".tmp && chmod 0755 "+dst+".tmp && mv "+dst+".tmp "+dst).
				SetStdin(bytes.NewReader(data)).Run(); err != nil {
				return fmt.Errorf("copying CNI plugin %s to node %s: %w", name, n.String(), err)
			}
		}
	}
	return nil
}

// LoadImages loads Options.Images into every node of the cluster.
func (c *Cluster) LoadImages(ctx context.Context) error {
	if len(c.opts.Images) == 0 {
		return nil
	}
	ns, err := c.provider.ListNodes(c.cfg.Name)
	if err != nil {
		return err
	}
	for _, img := range c.opts.Images {
		for _, n := range ns {
			if err := loadArchive(n, img.Path); err != nil {
				return fmt.Errorf("loading image %s into node %s: %w", img.Name, n.String(), err)
			}
		}
		c.logf("loaded %s into %d nodes", img.Name, len(ns))
	}
	return nil
}

func loadArchive(n nodes.Node, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return nodeutils.LoadImageArchive(n, f)
}

// collectLogs exports the cluster's logs (kind's own collection: ExportLogs)
// and returns where they are, or "" when that failed. What it missed is
// logged, one line per node.
func (c *Cluster) collectLogs() string {
	if c.opts.LogDir == "" {
		return ""
	}
	dir := filepath.Join(c.opts.LogDir, c.cfg.Name+"-"+time.Now().UTC().Format("20060102T150405Z"))
	// What was collected is worth keeping, whatever was not.
	missed, err := c.ExportLogs(dir)
	if err != nil {
		c.logf("the node logs could not be collected: %v", err)
		return ""
	}
	for _, m := range missed {
		c.logf("%s", m)
	}
	return dir
}

// delete deletes the cluster's nodes (its remote nodes with them: they
// carry kind's labels), then what its underlay added on this host.
func (c *Cluster) delete() error {
	err := c.provider.Delete(c.cfg.Name, c.opts.Kubeconfig)
	return errors.Join(err, c.deleteUnderlay())
}

// deleteUnderlay removes the cluster's underlay from this host, when it
// has one, and says what it removed.
func (c *Cluster) deleteUnderlay() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if !c.hasUnderlay(ctx) {
		return nil
	}
	done, err := c.removeUnderlay(ctx)
	for _, d := range done {
		c.logf("underlay: %s", d)
	}
	return err
}

// Down deletes the cluster and its entry in the kubeconfig, and the
// cluster's underlay on this host (also when the cluster itself is gone:
// what a killed run left). Deleting a cluster that does not exist is not
// an error.
func (c *Cluster) Down() (bool, error) {
	exists, err := c.Exists()
	if err != nil {
		return false, err
	}
	if !exists {
		return false, c.deleteUnderlay()
	}
	return true, c.delete()
}

// kindErrorOutput is what the command behind a kind error printed.
func kindErrorOutput(err error) string {
	if re := kindexec.RunErrorForError(err); re != nil {
		return string(re.Output)
	}
	return ""
}
