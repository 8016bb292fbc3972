package kind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/underlay"
)

// Remote nodes (the cluster file's remoteNodes): Linux nodes made from the
// cluster's node image but outside kind's Docker network, on a second
// Docker network of their own that reaches the kind network only through
// the kind host, and joined with kubeadm join through the routed underlay
// (infra/underlay): exactly the rules and the route the harness makes for
// a lab machine. They are the harness's test of that path on a machine
// without Windows or a lab.
const (
	// LabelUnderlay marks a remote node: on its container, and on its node
	// (set by its kubelet at the join), with the shape as value.
	LabelUnderlay = "winconform.io/underlay"
	// labelNetworkOf marks the remote nodes' network with its cluster.
	labelNetworkOf = "winconform.io/underlay-network-of"
	// kindClusterLabel and kindRoleLabel are kind's own container labels
	// (sigs.k8s.io/kind pkg/cluster/internal/providers/docker/constants.go):
	// with them kind lists a remote node among the cluster's nodes, loads
	// images into it, collects its logs and deletes it with the cluster.
	kindClusterLabel = "io.x-k8s.kind.cluster"
	kindRoleLabel    = "io.x-k8s.kind.role"
	// labRouterHost is the host number, in the remote network, of the
	// address the remote nodes' default route names: a lab router that
	// knows nothing of the kind network (nothing answers there), so that
	// only the harness's route reaches it.
	labRouterHost = 254
)

// kindNetwork is the Docker network kind puts nodes on.
func kindNetwork() string {
	if n := os.Getenv("KIND_EXPERIMENTAL_DOCKER_NETWORK"); n != "" {
		return n
	}
	return "kind"
}

// RemoteNetwork is the Docker network of cluster's remote nodes.
func RemoteNetwork(cluster string) string { return cluster + "-remote" }

// RemoteNodeName is the i-th (from 1) remote node's name, as kind names
// workers: <cluster>-remote, <cluster>-remote2, ...
func RemoteNodeName(cluster string, i int) string {
	if i == 1 {
		return cluster + "-remote"
	}
	return fmt.Sprintf("%s-remote%d", cluster, i)
}

// dockerNetwork is what the harness reads of a Docker network.
type dockerNetwork struct {
	Name    string
	ID      string
	Subnet  netip.Prefix
	Gateway netip.Addr
	Bridge  string
}

// inspectNetwork reads a Docker network's IPv4 subnet, gateway and bridge.
func inspectNetwork(ctx context.Context, d *docker.Client, name string) (dockerNetwork, error) {
	out, err := d.Output(ctx, nil, "network", "inspect", "--format", "{{json .}}", name)
	if err != nil {
		return dockerNetwork{}, err
	}
	var raw struct {
		Name string
		ID   string `json:"Id"`
		IPAM struct {
			Config []struct{ Subnet, Gateway string }
		}
		Options map[string]string
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return dockerNetwork{}, fmt.Errorf("docker network inspect %s: %w", name, err)
	}
	n := dockerNetwork{Name: name, ID: raw.ID, Bridge: raw.Options["com.docker.network.bridge.name"]}
	if n.Bridge == "" && len(raw.ID) >= 12 {
		n.Bridge = "br-" + raw.ID[:12]
	}
	for _, c := range raw.IPAM.Config {
		p, err := netip.ParsePrefix(c.Subnet)
		if err != nil || !p.Addr().Is4() {
			continue
		}
		n.Subnet = p.Masked()
		n.Gateway, _ = netip.ParseAddr(c.Gateway)
		return n, nil
	}
	return n, fmt.Errorf("Docker network %s has no IPv4 subnet", name)
}

// containerIP is a container's address on a Docker network.
func containerIP(ctx context.Context, d *docker.Client, container, network string) (netip.Addr, error) {
	out, err := d.Output(ctx, nil, "inspect", "--format", fmt.Sprintf("{{with index .NetworkSettings.Networks %q}}{{.IPAddress}}{{end}}", network), container)
	if err != nil {
		return netip.Addr{}, err
	}
	a, err := netip.ParseAddr(strings.TrimSpace(string(out)))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("container %s has no address on the Docker network %s", container, network)
	}
	return a, nil
}

// NodeRunner runs commands in a kind node (docker exec), for the
// underlay's Linux side.
type NodeRunner struct{ Node nodes.Node }

// Name is the node's name.
func (r NodeRunner) Name() string { return r.Node.String() }

// Run runs argv in the node.
func (r NodeRunner) Run(ctx context.Context, argv ...string) (string, string, error) {
	var out, errb bytes.Buffer
	cmd := r.Node.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SetStdout(&out)
	cmd.SetStderr(&errb)
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// kindNetworkOf is the kind side of the underlay for the cluster as it is.
func (c *Cluster) kindNetworkOf(ctx context.Context) (underlay.Network, error) {
	kn, err := inspectNetwork(ctx, c.docker, kindNetwork())
	if err != nil {
		return underlay.Network{}, err
	}
	cp, err := containerIP(ctx, c.docker, c.cfg.Name+"-control-plane", kindNetwork())
	if err != nil {
		return underlay.Network{}, err
	}
	pods, err := netip.ParsePrefix(c.cfg.Networking.PodSubnet)
	if err != nil {
		return underlay.Network{}, err
	}
	return underlay.Network{Cluster: c.cfg.Name, Subnet: kn.Subnet, Bridge: kn.Bridge, ControlPlane: cp, PodSubnet: pods,
		Backend: c.cfg.CNI.Backend, VXLANPort: c.cfg.CNI.Port}, nil
}

// remoteMachines are the cluster's remote nodes as they are: their
// containers (labelled with the shape) on the remote network.
func (c *Cluster) remoteMachines(ctx context.Context) ([]underlay.Machine, error) {
	out, err := c.docker.Output(ctx, nil, "ps", "-a", "--filter", "label="+kindClusterLabel+"="+c.cfg.Name,
		"--filter", "label="+LabelUnderlay, "--format", "{{.Names}}")
	if err != nil {
		return nil, err
	}
	names := strings.Fields(string(out))
	if len(names) == 0 {
		return nil, nil
	}
	rn, err := inspectNetwork(ctx, c.docker, RemoteNetwork(c.cfg.Name))
	if err != nil {
		return nil, fmt.Errorf("the remote nodes' network: %w", err)
	}
	var ms []underlay.Machine
	for _, name := range names {
		addr, err := containerIP(ctx, c.docker, name, rn.Name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, underlay.Machine{Name: name, OS: underlay.Linux, Address: addr, Shape: underlay.Routed, Via: rn.Gateway})
	}
	return ms, nil
}

// UnderlayPlan is the underlay of the cluster's remote nodes as they are,
// with the machines given (an inventory's) added.
func (c *Cluster) UnderlayPlan(ctx context.Context, more ...underlay.Machine) (underlay.Plan, error) {
	n, err := c.kindNetworkOf(ctx)
	if err != nil {
		return underlay.Plan{}, err
	}
	ms, err := c.remoteMachines(ctx)
	if err != nil {
		return underlay.Plan{}, err
	}
	return underlay.NewPlan(n, append(ms, more...))
}

// UnderlaySides are the Linux sides of the remote nodes (docker exec) and
// the control-plane node, from which the check reaches the machines.
// Commands in the nodes go through docker exec: on a host that needs the
// shim, so do these (it stays on for this process).
func (c *Cluster) UnderlaySides(ctx context.Context) (map[string]underlay.Side, underlay.KindSide, error) {
	if _, err := c.prepareExisting(ctx, &Result{Name: c.cfg.Name, Timings: c.timings}); err != nil {
		return nil, nil, err
	}
	all, err := c.provider.ListNodes(c.cfg.Name)
	if err != nil {
		return nil, nil, err
	}
	sides := map[string]underlay.Side{}
	var cp underlay.KindSide
	for _, n := range all {
		if n.String() == c.cfg.Name+"-control-plane" {
			cp = underlay.LinuxSide{Run: NodeRunner{Node: n}}
		} else {
			sides[n.String()] = underlay.LinuxSide{Run: NodeRunner{Node: n}}
		}
	}
	if cp == nil {
		return nil, nil, fmt.Errorf("cluster %q has no control-plane node", c.cfg.Name)
	}
	return sides, cp, nil
}

// ensureRemoteNodes makes the cluster's remote nodes and joins them through
// the routed underlay: the remote network, the node containers, the kind
// host's rules, each node's route to the kind network through the kind
// host, kubeadm join. Every part is left as it is when it is already there,
// so that a reused cluster gets its rules back.
func (c *Cluster) ensureRemoteNodes(ctx context.Context, cs kubernetes.Interface, image string) error {
	if c.cfg.RemoteNodes == 0 {
		return nil
	}
	if err := underlay.CheckRoot(fmt.Sprintf("remoteNodes: %d (Linux nodes joined through the routed underlay)", c.cfg.RemoteNodes)); err != nil {
		return err
	}
	host, err := underlay.NewHost()
	if err != nil {
		return err
	}
	if err := c.sweepUnderlays(ctx, host); err != nil {
		return err
	}
	kn, err := c.kindNetworkOf(ctx)
	if err != nil {
		return err
	}
	rn, err := c.ensureRemoteNetwork(ctx)
	if err != nil {
		return err
	}
	if rn.Subnet.Overlaps(kn.Subnet) {
		return fmt.Errorf("the remote nodes' network %s (%s) overlaps the kind network %s", rn.Name, rn.Subnet, kn.Subnet)
	}
	var machines []underlay.Machine
	for i := 1; i <= c.cfg.RemoteNodes; i++ {
		name := RemoteNodeName(c.cfg.Name, i)
		if err := c.ensureRemoteContainer(ctx, name, image, rn, kn); err != nil {
			return err
		}
		addr, err := containerIP(ctx, c.docker, name, rn.Name)
		if err != nil {
			return err
		}
		machines = append(machines, underlay.Machine{Name: name, OS: underlay.Linux, Address: addr, Shape: underlay.Routed, Via: rn.Gateway})
	}
	plan, err := underlay.NewPlan(kn, machines)
	if err != nil {
		return err
	}
	changes, err := host.Apply(plan)
	for _, ch := range changes {
		c.logf("underlay: %s", ch)
	}
	if err != nil {
		return fmt.Errorf("the kind host's underlay rules: %w", err)
	}
	all, err := c.provider.ListNodes(c.cfg.Name)
	if err != nil {
		return err
	}
	byName := map[string]nodes.Node{}
	var cp nodes.Node
	for _, n := range all {
		byName[n.String()] = n
		if n.String() == c.cfg.Name+"-control-plane" {
			cp = n
		}
	}
	for _, m := range machines {
		n := byName[m.Name]
		if n == nil {
			return fmt.Errorf("remote node %s: kind does not list its container", m.Name)
		}
		side := underlay.LinuxSide{Run: NodeRunner{Node: n}}
		for _, r := range plan.RoutesOf(m.Name) {
			changed, err := side.EnsureRoute(ctx, r)
			if err != nil {
				return err
			}
			if changed {
				c.logf("underlay: on %s: %s", m.Name, side.RouteCommand(r))
			}
		}
		if err := c.joinRemote(ctx, cs, cp, n, m, kn); err != nil {
			return fmt.Errorf("remote node %s: %w", m.Name, err)
		}
	}
	return nil
}

// sweepUnderlays removes the underlay rules and remote networks of
// clusters kind no longer knows (what a killed run left).
func (c *Cluster) sweepUnderlays(ctx context.Context, host *underlay.Host) error {
	clusters, err := c.provider.List()
	if err != nil {
		return err
	}
	keep := func(cluster string) bool { return cluster == c.cfg.Name || slices.Contains(clusters, cluster) }
	changes, err := host.Sweep(keep)
	for _, ch := range changes {
		c.logf("underlay: left by a cluster that is gone: %s", ch)
	}
	if err != nil {
		return err
	}
	out, err := c.docker.Output(ctx, nil, "network", "ls", "--filter", "label="+labelNetworkOf, "--format", "{{.Name}} {{.Label \""+labelNetworkOf+"\"}}")
	if err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, cluster, ok := strings.Cut(strings.TrimSpace(l), " ")
		if !ok || keep(cluster) {
			continue
		}
		if err := c.docker.Run(ctx, "network", "rm", name); err != nil {
			c.logf("underlay: the Docker network %s of cluster %s, which is gone, cannot be removed: %v", name, cluster, err)
			continue
		}
		c.logf("underlay: left by a cluster that is gone: removed the Docker network %s", name)
	}
	return nil
}

// ensureRemoteNetwork makes the remote nodes' Docker network, without
// Docker's masquerade (a lab network's addresses reach the kind host as
// they are).
func (c *Cluster) ensureRemoteNetwork(ctx context.Context) (dockerNetwork, error) {
	name := RemoteNetwork(c.cfg.Name)
	if n, err := inspectNetwork(ctx, c.docker, name); err == nil {
		return n, nil
	}
	if err := c.docker.Run(ctx, "network", "create", "--driver", "bridge", "--label", labelNetworkOf+"="+c.cfg.Name,
		"-o", "com.docker.network.bridge.enable_ip_masquerade=false", name); err != nil {
		return dockerNetwork{}, fmt.Errorf("making the remote nodes' network: %w", err)
	}
	c.logf("underlay: made the Docker network %s for the remote nodes", name)
	return inspectNetwork(ctx, c.docker, name)
}

// ensureRemoteContainer starts a remote node's container as kind starts a
// node's (kind's own docker run arguments, through the docker shim where
// this host needs it), on the remote network, with the control plane's
// name in its /etc/hosts (kind's kubeconfigs name it), and its default
// route sent to a lab router that does not know the kind network.
func (c *Cluster) ensureRemoteContainer(ctx context.Context, name, image string, rn dockerNetwork, kn underlay.Network) error {
	if out, err := c.docker.Output(ctx, nil, "inspect", "--format", "{{.State.Running}}", name); err == nil {
		if strings.TrimSpace(string(out)) != "true" {
			return fmt.Errorf("remote node %s exists but is not running: delete the cluster (winconform down) and make it again", name)
		}
		return nil
	}
	args := []string{"run", "--name", name, "--hostname", name,
		"--label", kindClusterLabel + "=" + c.cfg.Name, "--label", kindRoleLabel + "=worker", "--label", LabelUnderlay + "=" + string(underlay.Routed),
		"--net", rn.Name, "--add-host", c.cfg.Name + "-control-plane:" + kn.ControlPlane.String(),
		"--privileged", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--tmpfs", "/tmp", "--tmpfs", "/run", "--volume", "/var", "--volume", "/lib/modules:/lib/modules:ro",
		"-e", "KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER",
		"--detach", "--tty", "--restart=on-failure:1", "--init=false", "--cgroupns=private", image}
	// The docker on PATH: the shim, when kind needs it here (prepareHost).
	bin, err := exec.LookPath("docker")
	if err != nil {
		return err
	}
	run := &docker.Client{Bin: bin}
	if err := run.Run(ctx, args...); err != nil {
		return fmt.Errorf("starting remote node %s: %w", name, err)
	}
	c.logf("underlay: started remote node %s on the Docker network %s", name, rn.Name)
	// systemd and containerd up, before anything runs in it.
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		out, _ := c.docker.Output(ctx, nil, "exec", name, "systemctl", "is-active", "containerd")
		return strings.TrimSpace(string(out)) == "active", nil
	})
	if err != nil {
		return fmt.Errorf("remote node %s: containerd did not start within 2m", name)
	}
	router := rn.Subnet.Addr().As4()
	router[3] = labRouterHost
	if err := c.docker.Run(ctx, "exec", name, "ip", "route", "replace", "default", "via", netip.AddrFrom4(router).String()); err != nil {
		return fmt.Errorf("remote node %s: its lab default route: %w", name, err)
	}
	return nil
}

// remoteJoinConfig is the JoinConfiguration of a remote node: token
// discovery at the control-plane node's address (reached through the
// underlay), the node's address on its own network, its underlay label.
func remoteJoinConfig(apiVersion, endpoint, token string, hashes []string, node string, addr netip.Addr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    apiServerEndpoint: %q\n    token: %q\n    caCertHashes:\n", apiVersion, endpoint, token)
	for _, h := range hashes {
		fmt.Fprintf(&b, "    - %q\n", h)
	}
	fmt.Fprintf(&b, "nodeRegistration:\n  name: %q\n  criSocket: unix:///run/containerd/containerd.sock\n  kubeletExtraArgs:\n", node)
	fmt.Fprintf(&b, "    - name: node-ip\n      value: %q\n    - name: node-labels\n      value: %q\n", addr.String(), LabelUnderlay+"="+string(underlay.Routed))
	fmt.Fprintf(&b, "    - name: housekeeping-interval\n      value: %q\n", HousekeepingInterval)
	return b.String()
}

// joinRemote joins a remote node with kubeadm join, as kind joins its
// workers (preflight skipped: a node container fails its host checks), with
// a bootstrap token of its own, deleted afterwards. A node that is
// registered and has its kubelet's kubeconfig is left as it is.
func (c *Cluster) joinRemote(ctx context.Context, cs kubernetes.Interface, cp, n nodes.Node, m underlay.Machine, kn underlay.Network) error {
	run := NodeRunner{Node: n}
	if _, err := cs.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{}); err == nil {
		if _, _, err := run.Run(ctx, "test", "-f", "/etc/kubernetes/kubelet.conf"); err == nil {
			return nil
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	var stdout, stderr bytes.Buffer
	cmd := cp.CommandContext(ctx, "kubeadm", "token", "create", "--print-join-command", "--ttl", "15m")
	cmd.SetStdout(&stdout)
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubeadm token create: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	jc, err := ParseJoinCommand(stdout.String())
	if err != nil {
		return err
	}
	defer func() {
		_ = cp.Command("kubeadm", "token", "delete", strings.SplitN(jc.Token, ".", 2)[0]).Run()
	}()
	endpoint := netip.AddrPortFrom(kn.ControlPlane, underlay.APIServerPort).String()
	cfg := remoteJoinConfig("kubeadm.k8s.io/v1beta4", endpoint, jc.Token, jc.CACertHashes, m.Name, m.Address)
	write := n.CommandContext(ctx, "sh", "-c", "mkdir -p /kind && cat > /kind/winconform-join.yaml")
	write.SetStdin(strings.NewReader(cfg))
	if err := write.Run(); err != nil {
		return fmt.Errorf("writing the join configuration: %w", err)
	}
	c.logf("underlay: kubeadm join of remote node %s (%s) through the underlay, API server %s", m.Name, m.Address, endpoint)
	start := time.Now()
	jctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	out, errOut, err := run.Run(jctx, "kubeadm", "join", "--config", "/kind/winconform-join.yaml", "--skip-phases=preflight", "--v=1")
	if err != nil {
		tail := lastLines(errOut+out, 8)
		if jctx.Err() != nil {
			return fmt.Errorf("kubeadm join did not finish within 4m (the underlay's path to the API server at %s?): %s", endpoint, tail)
		}
		return fmt.Errorf("kubeadm join: %w: %s", err, tail)
	}
	c.logf("underlay: remote node %s joined in %s", m.Name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// removeUnderlay removes what the cluster's underlay added on this host:
// the remote nodes' network (kind deletes their containers with the
// cluster) and every rule marked for the cluster. Without root it removes
// what it can and says what it could not.
func (c *Cluster) removeUnderlay(ctx context.Context) ([]string, error) {
	var done []string
	var errs []error
	name := RemoteNetwork(c.cfg.Name)
	if _, err := inspectNetwork(ctx, c.docker, name); err == nil {
		if err := c.docker.Run(ctx, "network", "rm", name); err != nil {
			errs = append(errs, fmt.Errorf("removing the remote nodes' network: %w", err))
		} else {
			done = append(done, "removed the Docker network "+name)
		}
	}
	if err := underlay.CheckRoot("removing the cluster's underlay rules"); err != nil {
		return done, errors.Join(append(errs, err)...)
	}
	host, err := underlay.NewHost()
	if err != nil {
		return done, errors.Join(append(errs, err)...)
	}
	changes, err := host.Remove(c.cfg.Name)
	for _, ch := range changes {
		done = append(done, ch.String())
	}
	return done, errors.Join(append(errs, err)...)
}

// hasUnderlay says whether the cluster has anything of the underlay on
// this host to remove: the remote network, or (readable as root) a rule.
func (c *Cluster) hasUnderlay(ctx context.Context) bool {
	if _, err := inspectNetwork(ctx, c.docker, RemoteNetwork(c.cfg.Name)); err == nil {
		return true
	}
	if os.Geteuid() != 0 {
		return false
	}
	host, err := underlay.NewHost()
	if err != nil {
		return false
	}
	clusters, _ := host.Clusters()
	for _, cl := range clusters {
		if cl == c.cfg.Name {
			return true
		}
	}
	return false
}
