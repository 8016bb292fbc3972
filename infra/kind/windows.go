package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/winconform/winconform/infra/windows"
)

// WindowsControlPlane is a kind cluster as infra/windows needs it to join
// remote Windows machines: its Kubernetes version, bootstrap tokens made by
// kubeadm in the control-plane node, the API server address the machines
// reach, and clients.
type WindowsControlPlane struct {
	version  string
	endpoint string
	cfg      Config
	restCfg  *rest.Config
	cs       kubernetes.Interface
	node     nodes.Node
}

var _ windows.ControlPlane = (*WindowsControlPlane)(nil)

// WindowsControlPlane returns the cluster, which must exist, as a control
// plane for Windows machines. Its kubeconfig is exported first when the
// file is missing. It fails, saying what to set, when the API server
// listens where remote machines cannot reach it.
func (c *Cluster) WindowsControlPlane(ctx context.Context) (*WindowsControlPlane, error) {
	if _, err := WindowsAPIServerAddress(c.cfg); err != nil {
		return nil, err
	}
	all, err := c.provider.ListNodes(c.cfg.Name)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("cluster %q does not exist: make it first (winconform up)", c.cfg.Name)
	}
	cp, err := nodeutils.BootstrapControlPlaneNode(all)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", c.cfg.Name, err)
	}
	// Tokens are made by kubeadm in the node, through docker exec: on a host
	// that needs the shim, so does this. It stays on for this process.
	if _, err := c.prepareExisting(ctx, &Result{Name: c.cfg.Name, Timings: c.timings}); err != nil {
		return nil, err
	}
	if _, err := os.Stat(c.opts.Kubeconfig); err != nil {
		if err := c.provider.ExportKubeConfig(c.cfg.Name, c.opts.Kubeconfig, false); err != nil {
			return nil, fmt.Errorf("cluster %q: writing its kubeconfig: %w", c.cfg.Name, err)
		}
	}
	restCfg, cs, err := c.clients()
	if err != nil {
		return nil, err
	}
	// A cluster made before the harness deleted kind's token has it still.
	if err := c.dropKindToken(ctx, cs); err != nil {
		return nil, err
	}
	endpoint, err := WindowsEndpoint(c.cfg, restCfg.Host)
	if err != nil {
		return nil, err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cluster %q: asking the API server its version: %w", c.cfg.Name, err)
	}
	version := v.GitVersion
	if i := strings.IndexByte(version, '+'); i > 0 {
		version = version[:i]
	}
	return &WindowsControlPlane{version: version, endpoint: endpoint, cfg: c.cfg, restCfg: restCfg, cs: cs, node: cp}, nil
}

// KubernetesVersion is the API server's version, such as v1.34.4.
func (w *WindowsControlPlane) KubernetesVersion() string { return w.version }

// Endpoint is the API server's host:port as the Windows machines reach it.
func (w *WindowsControlPlane) Endpoint() string { return w.endpoint }

// ServiceSubnet is the cluster's Service CIDR.
func (w *WindowsControlPlane) ServiceSubnet() string { return w.cfg.Networking.ServiceSubnet }

// Clientset reaches the cluster as its administrator.
func (w *WindowsControlPlane) Clientset() kubernetes.Interface { return w.cs }

// RESTConfig is the administrator's REST config.
func (w *WindowsControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(w.restCfg) }

// JoinCommand makes a bootstrap token valid for an hour with kubeadm in the
// control-plane node (kubeadm token create --print-join-command --ttl 1h),
// and returns the join command with the endpoint the machines reach in
// place of kind's own (the control-plane container's address).
func (w *WindowsControlPlane) JoinCommand(ctx context.Context) (windows.JoinCommand, error) {
	var stdout, stderr bytes.Buffer
	cmd := w.node.CommandContext(ctx, "kubeadm", "token", "create", "--print-join-command", "--ttl", "1h")
	cmd.SetStdout(&stdout)
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err != nil {
		return windows.JoinCommand{}, fmt.Errorf("kubeadm token create in %s: %w: %s", w.node.String(), err, strings.TrimSpace(stderr.String()))
	}
	jc, err := ParseJoinCommand(stdout.String())
	if err != nil {
		return windows.JoinCommand{}, err
	}
	jc.Endpoint = w.endpoint
	return jc, nil
}

// ParseJoinCommand reads what kubeadm token create --print-join-command
// prints: kubeadm join <endpoint> --token <token>
// --discovery-token-ca-cert-hash sha256:<hash> (several hashes are allowed;
// backslash line continuations too).
func ParseJoinCommand(out string) (windows.JoinCommand, error) {
	text := strings.ReplaceAll(out, "\\\n", " ")
	fields := strings.Fields(text)
	var jc windows.JoinCommand
	i := 0
	for i < len(fields) && fields[i] != "join" {
		i++
	}
	if i == len(fields) {
		return jc, fmt.Errorf("kubeadm printed no join command: %q", strings.TrimSpace(out))
	}
	for i++; i < len(fields); i++ {
		f := fields[i]
		name, value, hasValue := strings.Cut(f, "=")
		if strings.HasPrefix(f, "--") && !hasValue && i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "--") {
			i++
			value = fields[i]
		}
		switch {
		case !strings.HasPrefix(f, "--"):
			if jc.Endpoint == "" {
				jc.Endpoint = f
			}
		case name == "--token":
			jc.Token = value
		case name == "--discovery-token-ca-cert-hash":
			jc.CACertHashes = append(jc.CACertHashes, value)
		}
	}
	if err := jc.Validate(); err != nil {
		return jc, fmt.Errorf("kubeadm's join command: %w", err)
	}
	return jc, nil
}

// WindowsAPIServerAddress is the address of this host at which remote
// Windows machines reach the API server: networking.apiServerAddress, or,
// when that is 0.0.0.0 (every address), the first IP address in
// networking.certSANs. It fails when the API server listens on loopback
// only (kind's default).
func WindowsAPIServerAddress(cfg Config) (string, error) {
	addr := cfg.Networking.APIServerAddress
	ip := net.ParseIP(addr)
	switch {
	case addr == "" || ip != nil && ip.IsLoopback():
		shown := addr
		if shown == "" {
			shown = "unset, so kind's 127.0.0.1"
		}
		return "", fmt.Errorf("networking.apiServerAddress is %s: Windows machines cannot reach the API server there; set networking.apiServerAddress in the cluster file to an address of this host that the machines can reach (and list in networking.certSANs any name they use), then make the cluster again (winconform down, winconform up)", shown)
	case ip != nil && ip.IsUnspecified():
		for _, san := range cfg.Networking.CertSANs {
			if s := net.ParseIP(san); s != nil && !s.IsLoopback() && !s.IsUnspecified() {
				return san, nil
			}
		}
		return "", errors.New("networking.apiServerAddress is " + addr + ", every address of this host: put the address the Windows machines use to reach this host first among the IP addresses in networking.certSANs, so that the harness knows it and the API server's certificate names it")
	}
	return addr, nil
}

// WindowsEndpoint is WindowsAPIServerAddress with the API server's host
// port: networking.apiServerPort, or the port of the kubeconfig's server
// (kind picks one when the cluster file sets none).
func WindowsEndpoint(cfg Config, kubeconfigServer string) (string, error) {
	addr, err := WindowsAPIServerAddress(cfg)
	if err != nil {
		return "", err
	}
	port := strconv.Itoa(int(cfg.Networking.APIServerPort))
	if cfg.Networking.APIServerPort == 0 {
		u, err := url.Parse(kubeconfigServer)
		if err != nil || u.Port() == "" {
			return "", fmt.Errorf("the kubeconfig's server %q names no port, and networking.apiServerPort is not set", kubeconfigServer)
		}
		port = u.Port()
	}
	return net.JoinHostPort(addr, port), nil
}
