package kind

import (
	_ "embed"
	"fmt"
	"net"
	"os"
	"regexp"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/strictyaml"
)

// Node image policies: what Up does when the node image is not present.
const (
	BuildAuto   = "auto"   // pull it; where that fails, build one locally
	BuildAlways = "always" // always use a locally built image
	BuildNever  = "never"  // pull it or fail
)

// Config is a local cluster: the file `winconform up --config` reads. The
// embedded default (default.yaml) is the cluster `make up` and `make e2e` use.
type Config struct {
	// Name is the kind cluster's name (node containers are <name>-control-plane, <name>-worker...).
	Name string `json:"name"`
	// KubernetesVersion is the cluster's Kubernetes: a release of a line
	// the harness supports (v1.36.3), or a line's name (1.36, v1.36) for
	// its newest served patch; internal/kubelines lists the lines. It
	// defaults to the newest line's (kubelines.Default).
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// NodeImage defaults to kindest/node:<kubernetesVersion>.
	NodeImage string `json:"nodeImage,omitempty"`
	// NodeImageBuild is auto, always or never.
	NodeImageBuild string `json:"nodeImageBuild,omitempty"`
	// Workers is the number of Linux worker nodes beside the control plane.
	Workers int `json:"workers"`
	// RemoteNodes is the number of Linux nodes made outside kind's Docker
	// network, on a network of their own that reaches it only through this
	// host, and joined through the routed underlay (infra/underlay), as a
	// lab machine is. They need root and the vxlan back end.
	RemoteNodes int        `json:"remoteNodes,omitempty"`
	Networking  Networking `json:"networking"`
	CNI         CNI        `json:"cni"`
	// LoadBalancer is MetalLB, which gives LoadBalancer Services addresses
	// of the Docker network; on unless switched off.
	LoadBalancer LoadBalancer `json:"loadBalancer"`
	// ReadyTimeout bounds the wait for every node and system pod to be Ready.
	ReadyTimeout Duration `json:"readyTimeout,omitempty"`
}

// Networking is the cluster's addressing.
type Networking struct {
	PodSubnet     string `json:"podSubnet"`
	ServiceSubnet string `json:"serviceSubnet"`
	// APIServerAddress is the host address the API server listens on; set it
	// to an address the Windows machines can reach (or 0.0.0.0) for a hybrid cluster.
	APIServerAddress string `json:"apiServerAddress,omitempty"`
	// APIServerPort is the host port; 0 picks a free one.
	APIServerPort int32 `json:"apiServerPort,omitempty"`
	// CertSANs are extra names and addresses in the API server's certificate.
	CertSANs []string `json:"certSANs,omitempty"`
}

// CNI is the flannel back end.
type CNI struct {
	Backend string `json:"backend"`
	VNI     int    `json:"vni,omitempty"`
	Port    int    `json:"port,omitempty"`
}

// LoadBalancer says whether `up` installs MetalLB, and with which addresses.
type LoadBalancer struct {
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
	// Addresses is the pool: a range (172.18.255.200-172.18.255.250) or a
	// CIDR of the kind Docker network, away from the node addresses. Empty:
	// a /28 in the upper half of the network, computed when the cluster is made.
	Addresses string `json:"addresses,omitempty"`
}

// On reports whether MetalLB is to be installed.
func (l LoadBalancer) On() bool { return l.Enabled == nil || *l.Enabled }

// Duration is a time.Duration written as "5m" in YAML.
type Duration struct{ time.Duration }

// UnmarshalJSON reads "90s", "5m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) < 2 || s[0] != '"' {
		return fmt.Errorf("duration %s: write it as a quoted string such as \"5m\"", s)
	}
	v, err := time.ParseDuration(s[1 : len(s)-1])
	if err != nil {
		return fmt.Errorf("want a duration such as \"5m\" or \"90s\"")
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

//go:embed default.yaml
var defaultConfig []byte

// DefaultConfig is the embedded default cluster.
func DefaultConfig() Config {
	c, err := ParseConfig("default.yaml (embedded)", defaultConfig)
	if err != nil {
		panic(err) // a test keeps the embedded file valid
	}
	return c
}

// LoadConfig reads a cluster file; an empty path means the embedded default.
func LoadConfig(path string) (Config, error) {
	if path == "" {
		return DefaultConfig(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("cluster config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig decodes and validates a cluster file, as kind reads its own:
// a strict decode (internal/strictyaml: every problem at once, each with
// its line and field, an unknown field with the nearest known one) over the
// embedded default, so that every field the file leaves out has the
// default's value; then the defaults that depend on other fields; then
// validation.
func ParseConfig(source string, data []byte) (Config, error) {
	// The file alone first: its problems, and the CNI back end it names.
	var own Config
	var d strictyaml.Decoder
	d.Unmarshal(data, &own)
	if err := strictyaml.Err(source, d.Problems); err != nil {
		return Config{}, err
	}
	c := decodeDefault()
	var over strictyaml.Decoder
	over.Unmarshal(data, &c)
	// The default's vni and port are vxlan's: a file that names its back end
	// has the vni and port it sets, or that back end's defaults.
	if own.CNI.Backend != "" {
		c.CNI = own.CNI
	}
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return Config{}, d.Wrap(source, err)
	}
	return c, nil
}

// decodeDefault is the embedded default, decoded (a test keeps it valid).
func decodeDefault() Config {
	var c Config
	var d strictyaml.Decoder
	d.Unmarshal(defaultConfig, &c)
	if err := strictyaml.Err("default.yaml (embedded)", d.Problems); err != nil {
		panic(err)
	}
	return c
}

func (c *Config) setDefaults() {
	if c.KubernetesVersion == "" {
		c.KubernetesVersion = kubelines.Default().Version
	}
	// A line's name stands for its newest patch; a bad version is left for
	// Validate to name.
	if _, release, err := kubelines.Resolve(c.KubernetesVersion); err == nil {
		c.KubernetesVersion = release
	}
	if c.NodeImage == "" {
		c.NodeImage = defaultNodeImage(c.KubernetesVersion)
	}
	if c.NodeImageBuild == "" {
		c.NodeImageBuild = BuildAuto
	}
	if c.CNI.Backend == "" {
		c.CNI.Backend = cni.VXLAN
	}
	if c.CNI.Backend == cni.VXLAN {
		if c.CNI.VNI == 0 {
			c.CNI.VNI = cni.WindowsVNI
		}
		if c.CNI.Port == 0 {
			c.CNI.Port = cni.WindowsPort
		}
	}
	if c.ReadyTimeout.Duration == 0 {
		c.ReadyTimeout.Duration = 5 * time.Minute
	}
	if c.LoadBalancer.Enabled == nil {
		on := true
		c.LoadBalancer.Enabled = &on
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)

// defaultNodeImage is kind's published node image of a Kubernetes release;
// where it cannot be pulled, Up builds one (nodeImageBuild: auto).
func defaultNodeImage(version string) string { return "kindest/node:" + version }

// WithKubernetesVersion returns c on Kubernetes version (as kubernetesVersion
// takes it: v1.36.3 or 1.36), the override of `--kubernetes-version` and
// `make KUBERNETES_VERSION=...`. A node image left to its default follows
// the version; one the cluster file names stays.
func (c Config) WithKubernetesVersion(version string) (Config, error) {
	_, release, err := kubelines.Resolve(version)
	if err != nil {
		return c, err
	}
	if c.NodeImage == defaultNodeImage(c.KubernetesVersion) {
		c.NodeImage = defaultNodeImage(release)
	}
	c.KubernetesVersion = release
	return c, nil
}

// Line returns the supported Kubernetes line of the cluster's version
// (Validate has refused any other).
func (c Config) Line() kubelines.Line {
	l, err := kubelines.Find(c.KubernetesVersion)
	if err != nil {
		return kubelines.Default()
	}
	return l
}

// Validate names the first wrong field and the fix.
func (c Config) Validate() error {
	if !dnsLabel.MatchString(c.Name) {
		return fmt.Errorf("name: %q is not a cluster name: use lower-case letters, digits and '-', at most 40", c.Name)
	}
	// Any supported line can be built locally (infra/nodeimage); a line the
	// harness does not support is refused, whatever the node image.
	if _, release, err := kubelines.Resolve(c.KubernetesVersion); err != nil {
		return fmt.Errorf("kubernetesVersion: %w", err)
	} else if release != c.KubernetesVersion {
		return fmt.Errorf("kubernetesVersion: %q: write the release, %s", c.KubernetesVersion, release)
	}
	switch c.NodeImageBuild {
	case BuildAuto, BuildAlways, BuildNever:
	default:
		return fmt.Errorf("nodeImageBuild: %q: use %s, %s or %s", c.NodeImageBuild, BuildAuto, BuildAlways, BuildNever)
	}
	if c.Workers < 0 || c.Workers > 10 {
		return fmt.Errorf("workers: %d: use 0 to 10 Linux workers", c.Workers)
	}
	if c.RemoteNodes < 0 || c.RemoteNodes > 4 {
		return fmt.Errorf("remoteNodes: %d: use 0 to 4 remote Linux nodes", c.RemoteNodes)
	}
	if c.RemoteNodes > 0 && c.CNI.Backend != cni.VXLAN {
		return fmt.Errorf("remoteNodes: %d with cni.backend %s: remote nodes reach the kind nodes through a router (the kind host), and flannel's %s needs every node on one L2 network; use cni.backend: vxlan", c.RemoteNodes, c.CNI.Backend, c.CNI.Backend)
	}
	for _, f := range []struct{ field, cidr string }{
		{"networking.podSubnet", c.Networking.PodSubnet},
		{"networking.serviceSubnet", c.Networking.ServiceSubnet},
	} {
		if _, _, err := net.ParseCIDR(f.cidr); err != nil {
			return fmt.Errorf("%s: %q is not a CIDR (for example 10.244.0.0/16)", f.field, f.cidr)
		}
	}
	if a := c.Networking.APIServerAddress; a != "" && net.ParseIP(a) == nil {
		return fmt.Errorf("networking.apiServerAddress: %q is not an IP address", a)
	}
	if p := c.Networking.APIServerPort; p < 0 || p > 65535 {
		return fmt.Errorf("networking.apiServerPort: %d is not a port", p)
	}
	for i, san := range c.Networking.CertSANs {
		if san == "" {
			return fmt.Errorf("networking.certSANs[%d] is empty", i)
		}
	}
	if a := c.LoadBalancer.Addresses; a != "" {
		if !c.LoadBalancer.On() {
			return fmt.Errorf("loadBalancer.addresses: %q is set but loadBalancer.enabled is false: drop one of them", a)
		}
		if _, err := metallb.ParsePool(a); err != nil {
			return fmt.Errorf("loadBalancer.addresses: %w", err)
		}
	}
	if c.ReadyTimeout.Duration < 10*time.Second {
		return fmt.Errorf("readyTimeout: %s is too short to bring a cluster up: use at least 10s", c.ReadyTimeout.Duration)
	}
	return c.flannel("validation", false).Validate()
}

// flannel is the CNI configuration for image (local: pre-loaded in the node image).
func (c Config) flannel(image string, local bool) cni.Flannel {
	return cni.Flannel{Backend: c.CNI.Backend, VNI: c.CNI.VNI, Port: c.CNI.Port, PodSubnet: c.Networking.PodSubnet, Image: image, Local: local}
}

// CNIManifest is flannel's manifest for the cluster: with the flannel image
// pre-loaded in a locally built node image, or else flannel's published one.
func (c Config) CNIManifest(localNodeImage bool) ([]byte, error) {
	image := cni.UpstreamFlannelImage
	if localNodeImage {
		image = nodeimage.FlannelImage()
	}
	return c.flannel(image, localNodeImage).Manifest()
}

// failCgroupV1Off is the kubeadm configuration patch that lets the kubelet
// start on a cgroup v1 host: from 1.35 its configuration's failCgroupV1
// defaults to true (k8s.io/kubelet config/v1beta1 FailCgroupV1; the
// kubelet's validation refuses cgroup v1 then), and kind v0.33 leaves it
// unset (its KubeletConfiguration template,
// pkg/cluster/internal/kubeadm/config.go). kind merges a patch into the
// document of the same kind; kubeadm uploads the KubeletConfiguration for
// every node that joins.
const failCgroupV1Off = "kind: KubeletConfiguration\nfailCgroupV1: false\n"

// HousekeepingInterval is how often cAdvisor samples each container on the
// nodes winconform makes: the kubelet's --housekeeping-interval, 10 s by
// default with a jitter of up to 100% (pkg/kubelet/cadvisor/cadvisor_linux.go,
// cAdvisor's manager/container.go). The kubelet's summary API gives a Linux
// pod's figures from these samples only, so the specs that wait for new
// figures (e2e.SummaryPoll) waited 10 to 40 s each for the default; a run
// on a cluster made elsewhere still does. Upstream's node e2e tests set the
// flag for the same reason (cmd/kubelet/app/options/globalflags_linux.go:
// "e2e node tests rely on this").
const HousekeepingInterval = "2s"

// housekeepingPatches add --housekeeping-interval to the kubelet's extra
// arguments of every node. kind merges a merge patch's list whole (it would
// drop kind's node-ip), so these are JSON 6902 additions, one per kubeadm
// API kind's templates use: v1beta4 (a list, Kubernetes 1.36 and later) and
// v1beta3 (a map); a patch whose document is not there is not applied.
func housekeepingPatches() []v1alpha4.PatchJSON6902 {
	var out []v1alpha4.PatchJSON6902
	for _, kind := range []string{"InitConfiguration", "JoinConfiguration"} {
		out = append(out,
			v1alpha4.PatchJSON6902{Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: kind,
				Patch: "- op: add\n  path: /nodeRegistration/kubeletExtraArgs/-\n  value: {name: housekeeping-interval, value: \"" + HousekeepingInterval + "\"}\n"},
			v1alpha4.PatchJSON6902{Group: "kubeadm.k8s.io", Version: "v1beta3", Kind: kind,
				Patch: "- op: add\n  path: /nodeRegistration/kubeletExtraArgs/housekeeping-interval\n  value: \"" + HousekeepingInterval + "\"\n"})
	}
	return out
}

// KindConfig renders c as kind's own configuration, with nodeImage on every
// node. On a cgroup v1 host (cgroupV1) a line whose kubelet refuses cgroup
// v1 by default gets failCgroupV1: false; on cgroup v2 nothing changes.
func (c Config) KindConfig(nodeImage string, cgroupV1 bool) *v1alpha4.Cluster {
	kc := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:     c.Name,
		Networking: v1alpha4.Networking{
			PodSubnet:         c.Networking.PodSubnet,
			ServiceSubnet:     c.Networking.ServiceSubnet,
			APIServerAddress:  c.Networking.APIServerAddress,
			APIServerPort:     c.Networking.APIServerPort,
			DisableDefaultCNI: true, // flannel instead of kindnet
			KubeProxyMode:     v1alpha4.IPTablesProxyMode,
		},
	}
	kc.Nodes = append(kc.Nodes, v1alpha4.Node{Role: v1alpha4.ControlPlaneRole, Image: nodeImage})
	for i := 0; i < c.Workers; i++ {
		kc.Nodes = append(kc.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: nodeImage})
	}
	if len(c.Networking.CertSANs) > 0 {
		// A merge patch replaces the list, so it repeats kind's own names.
		addr := c.Networking.APIServerAddress
		if addr == "" {
			addr = "127.0.0.1"
		}
		sans := append([]string{"localhost", addr}, c.Networking.CertSANs...)
		patch, _ := yaml.Marshal(map[string]any{"kind": "ClusterConfiguration", "apiServer": map[string]any{"certSANs": sans}})
		kc.KubeadmConfigPatches = append(kc.KubeadmConfigPatches, string(patch))
	}
	if cgroupV1 && c.Line().NeedsFailCgroupV1Off {
		kc.KubeadmConfigPatches = append(kc.KubeadmConfigPatches, failCgroupV1Off)
	}
	kc.KubeadmConfigPatchesJSON6902 = housekeepingPatches()
	return kc
}
