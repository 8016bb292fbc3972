package kind

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/kubeletconfig"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/kubelines"
)

// Config is a local cluster: the cluster file (config.Cluster) `winconform
// up --config` reads, and what the harness makes of it.
type Config struct{ config.Cluster }

// DefaultConfig is the embedded default cluster.
func DefaultConfig() Config { return Config{config.DefaultCluster()} }

// LoadConfig reads a cluster file; an empty path means the embedded default.
func LoadConfig(path string) (Config, error) {
	if path == "" {
		return DefaultConfig(), nil
	}
	c, err := config.Load[config.Cluster](path, nil, check)
	if err != nil {
		return Config{}, err
	}
	return Config{*c}, nil
}

// check adds what only infra knows: the load balancer's pool, flannel's
// settings.
func check(c *config.Cluster) field.ErrorList {
	var errs field.ErrorList
	if a := c.LoadBalancer.Addresses; a != "" {
		if _, err := metallb.ParsePool(a); err != nil {
			errs = append(errs, config.Invalid(field.NewPath("loadBalancer", "addresses"), err.Error(), "write a range or a CIDR of the kind network, such as 172.18.255.200-172.18.255.250"))
		}
	}
	if err := (Config{*c}).flannel("validation", false).Validate(); err != nil {
		path, msg, _ := strings.Cut(err.Error(), ": ")
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: path, BadValue: field.OmitValueType{}, Detail: msg})
	}
	return errs
}

// WithKubernetesVersion returns c on Kubernetes version (as kubernetesVersion
// takes it: v1.36.3 or 1.36), the override of `--kubernetes-version` and
// `make KUBERNETES_VERSION=...`. A node image left to its default follows
// the version; one the cluster file names stays.
func (c Config) WithKubernetesVersion(version string) (Config, error) {
	_, release, err := kubelines.Resolve(version)
	if err != nil {
		return c, err
	}
	if c.NodeImage == config.DefaultNodeImage(c.KubernetesVersion) {
		c.NodeImage = config.DefaultNodeImage(release)
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

// Validate returns every problem of c (once its overrides are applied),
// each naming its field and the fix.
func (c Config) Validate() error {
	return config.Errors(append(c.Cluster.Validate(), check(&c.Cluster)...))
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
	kc.KubeadmConfigPatches = append(kc.KubeadmConfigPatches, kubeletconfig.ClusterPatch(c.Line(), cgroupV1))
	kc.KubeadmConfigPatchesJSON6902 = housekeepingPatches()
	return kc
}
