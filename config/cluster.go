package config

import (
	_ "embed"
	"fmt"
	"net"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/internal/kubelines"
)

// MaxRemoteNodes is the most Linux nodes a cluster joins through the
// routed underlay (remoteNodes, --remote-nodes).
const MaxRemoteNodes = 4

// Cluster is the cluster file: the local kind cluster `winconform up`
// makes. A field the file leaves out takes the embedded default's value
// (cluster.yaml, what `make up` and `make e2e` make).
type Cluster struct {
	// Name is the kind cluster's name (its node containers are
	// <name>-control-plane, <name>-worker...).
	Name string `yaml:"name" json:"name"`
	// KubernetesVersion is a release of a line the harness supports
	// (v1.36.3), or a line's name (1.36, v1.36) for its newest served
	// patch; the newest line's by default (internal/kubelines).
	KubernetesVersion string `yaml:"kubernetesVersion" json:"kubernetesVersion,omitempty"`
	// NodeImage defaults to kindest/node:<kubernetesVersion>.
	NodeImage string `yaml:"nodeImage" json:"nodeImage,omitempty"`
	// NodeImageBuild is BuildAuto, BuildAlways or BuildNever.
	NodeImageBuild string `yaml:"nodeImageBuild" json:"nodeImageBuild,omitempty"`
	// Workers is the number of Linux worker nodes beside the control plane.
	Workers int `yaml:"workers" json:"workers"`
	// RemoteNodes is the number of Linux nodes made on a network of their
	// own, joined through the routed underlay (infra/underlay) as a lab
	// machine is. They need root and the vxlan back end.
	RemoteNodes int        `yaml:"remoteNodes" json:"remoteNodes,omitempty"`
	Networking  Networking `yaml:"networking" json:"networking"`
	CNI         CNI        `yaml:"cni" json:"cni"`
	// LoadBalancer is MetalLB, which gives LoadBalancer Services addresses
	// of the Docker network; on unless switched off.
	LoadBalancer LoadBalancer `yaml:"loadBalancer" json:"loadBalancer"`
	// ReadyTimeout bounds the wait for every node and system pod to be Ready.
	ReadyTimeout Duration `yaml:"readyTimeout" json:"readyTimeout,omitempty"`
}

// Networking is the cluster's addressing.
type Networking struct {
	PodSubnet     string `yaml:"podSubnet" json:"podSubnet"`
	ServiceSubnet string `yaml:"serviceSubnet" json:"serviceSubnet"`
	// APIServerAddress is the host address the API server listens on: one
	// the Windows machines can reach (or 0.0.0.0) for a hybrid cluster.
	APIServerAddress string `yaml:"apiServerAddress" json:"apiServerAddress,omitempty"`
	// APIServerPort is the host port; 0 picks a free one.
	APIServerPort int32 `yaml:"apiServerPort" json:"apiServerPort,omitempty"`
	// CertSANs are extra names and addresses in the API server's certificate.
	CertSANs []string `yaml:"certSANs" json:"certSANs,omitempty"`
}

// CNI is flannel's back end: VXLAN (with its VNI and port) or HostGW.
type CNI struct {
	Backend string `yaml:"backend" json:"backend"`
	VNI     int    `yaml:"vni" json:"vni,omitempty"`
	Port    int    `yaml:"port" json:"port,omitempty"`
}

// Flannel's back ends, and the VNI and port Windows flannel's vxlan (overlay
// networking on HNS) needs.
const (
	VXLAN       = "vxlan"
	HostGW      = "host-gw"
	WindowsVNI  = 4096
	WindowsPort = 4789
)

// LoadBalancer says whether `up` installs MetalLB, and with which addresses.
type LoadBalancer struct {
	// Enabled: MetalLB is installed (the embedded default says true).
	Enabled *bool `yaml:"enabled" json:"enabled,omitempty"`
	// Addresses is the pool: a range (172.18.255.200-172.18.255.250) or a
	// CIDR of the kind Docker network, away from the node addresses. Empty:
	// a /28 in the upper half of the network, computed when the cluster is made.
	Addresses string `yaml:"addresses" json:"addresses,omitempty"`
}

// On reports whether MetalLB is to be installed.
func (l LoadBalancer) On() bool { return l.Enabled == nil || *l.Enabled }

// Duration is a time.Duration written as Go writes one: 90s, 5m.
type Duration struct{ time.Duration }

// MarshalText writes the duration as Go does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a duration; its error says the fix after "; ".
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("%s is not a duration; write one such as 5m or 90s", Quote(string(text)))
	}
	d.Duration = v
	return nil
}

// Node image policies: what up does when the node image is not present.
const (
	BuildAuto   = "auto"   // pull it; where that fails, build one locally
	BuildAlways = "always" // always use a locally built image
	BuildNever  = "never"  // pull it or fail
)

//go:embed cluster.yaml
var clusterYAML []byte

// DefaultCluster is the embedded default cluster.
func DefaultCluster() Cluster {
	c, err := Parse[Cluster]("cluster.yaml (embedded)", clusterYAML, nil)
	if err != nil {
		panic(err) // a test keeps the embedded file valid
	}
	return *c
}

// defaults is the embedded default as written, which a file's fields
// overwrite.
var defaultCluster = sync.OnceValue(func() Cluster {
	var c Cluster
	l := newLoader("cluster.yaml (embedded)", nil)
	l.decode(nil, l.document(clusterYAML), reflect.ValueOf(&c).Elem(), "Cluster")
	if err := l.err(); err != nil {
		panic(err)
	}
	return c
})

func (*Cluster) defaults() *Cluster { c := defaultCluster(); return &c }

func (*Cluster) kind() string { return "Cluster" }

func (c *Cluster) check(l *loader) {
	// host-gw routes pods' packets as they are: a VNI or a VXLAN port
	// written beside it would be silently ignored.
	for _, key := range []string{"vni", "port"} {
		if p := field.NewPath("cni", key); c.CNI.Backend == HostGW && l.written(p) {
			l.add(p, 0, "is vxlan's, and cni.backend is host-gw, which has none", "remove cni."+key+", or use cni.backend: vxlan")
		}
	}
	c.setDefaults()
	l.addAll(c.Validate())
}

// setDefaults fills what depends on other fields: the newest line and a
// line's newest patch, kind's node image of the release, and the VNI and
// port that Windows flannel needs when the back end is vxlan. What depends
// on nothing is in the embedded cluster.yaml, and only there.
func (c *Cluster) setDefaults() {
	if c.KubernetesVersion == "" {
		c.KubernetesVersion = kubelines.Default().Version
	}
	if _, release, err := kubelines.Resolve(c.KubernetesVersion); err == nil {
		c.KubernetesVersion = release
	}
	if c.NodeImage == "" {
		c.NodeImage = DefaultNodeImage(c.KubernetesVersion)
	}
	if c.CNI.Backend == VXLAN && c.CNI.VNI == 0 {
		c.CNI.VNI = WindowsVNI
	}
	if c.CNI.Backend == VXLAN && c.CNI.Port == 0 {
		c.CNI.Port = WindowsPort
	}
}

// DefaultNodeImage is kind's published node image of a Kubernetes release.
func DefaultNodeImage(version string) string { return "kindest/node:" + version }

// Validate returns every problem of the cluster's values (the load
// balancer's pool and flannel's settings are infra/kind's to check).
func (c *Cluster) Validate() field.ErrorList {
	var errs field.ErrorList
	bad := func(msg, fix string, path ...string) {
		errs = append(errs, Invalid(field.NewPath(path[0], path[1:]...), msg, fix))
	}
	if !dnsLabel.MatchString(c.Name) || len(c.Name) > 40 {
		bad(Quote(c.Name)+" is not a cluster name", "use lower-case letters, digits and '-', at most 40", "name")
	}
	if _, release, err := kubelines.Resolve(c.KubernetesVersion); err != nil {
		bad(err.Error(), "write a release of a supported line, such as "+kubelines.Default().Version, "kubernetesVersion")
	} else if release != c.KubernetesVersion {
		bad(Quote(c.KubernetesVersion)+" is a line", "write the release, "+release, "kubernetesVersion")
	}
	if b := c.NodeImageBuild; b != BuildAuto && b != BuildAlways && b != BuildNever {
		bad(Quote(b)+" is not a node image policy", DidYouMean(b, []string{BuildAuto, BuildAlways, BuildNever})+"use auto, always or never", "nodeImageBuild")
	}
	if c.Workers < 0 || c.Workers > 10 {
		bad(fmt.Sprintf("%d is out of range", c.Workers), "use 0 to 10 Linux workers", "workers")
	}
	if c.RemoteNodes < 0 || c.RemoteNodes > MaxRemoteNodes {
		bad(fmt.Sprintf("%d is out of range", c.RemoteNodes), fmt.Sprintf("use 0 to %d remote Linux nodes", MaxRemoteNodes), "remoteNodes")
	} else if c.RemoteNodes > 0 && c.CNI.Backend != VXLAN {
		bad(fmt.Sprintf("%d with cni.backend %s: remote nodes reach the kind nodes through a router (the kind host), and flannel's %s needs every node on one L2 network", c.RemoteNodes, c.CNI.Backend, c.CNI.Backend),
			"use cni.backend: vxlan", "remoteNodes")
	}
	var nets []*net.IPNet
	for _, f := range []struct{ key, cidr string }{{"podSubnet", c.Networking.PodSubnet}, {"serviceSubnet", c.Networking.ServiceSubnet}} {
		if _, n, err := net.ParseCIDR(f.cidr); err != nil {
			bad(Quote(f.cidr)+" is not a CIDR", "write one such as 10.244.0.0/16", "networking", f.key)
		} else {
			nets = append(nets, n)
		}
	}
	// A pod address inside the Service range (or the other way) is routed
	// to kube-proxy's rules, not to the pod.
	if len(nets) == 2 && (nets[0].Contains(nets[1].IP) || nets[1].Contains(nets[0].IP)) {
		bad(fmt.Sprintf("%s overlaps networking.serviceSubnet %s", c.Networking.PodSubnet, c.Networking.ServiceSubnet),
			"give pods and Services ranges apart, such as 10.244.0.0/16 and 10.96.0.0/12", "networking", "podSubnet")
	}
	if a := c.Networking.APIServerAddress; a != "" && net.ParseIP(a) == nil {
		bad(Quote(a)+" is not an IP address", "write an address of this host the machines reach, or 0.0.0.0", "networking", "apiServerAddress")
	}
	if p := c.Networking.APIServerPort; p < 0 || p > 65535 {
		bad(fmt.Sprintf("%d is not a port", p), "use 1 to 65535, or 0 for a free one", "networking", "apiServerPort")
	}
	for i, san := range c.Networking.CertSANs {
		if san == "" {
			errs = append(errs, Invalid(field.NewPath("networking", "certSANs").Index(i), "is empty", "write a name or an address, or remove the item"))
		}
	}
	if a := c.LoadBalancer.Addresses; a != "" && !c.LoadBalancer.On() {
		bad(Quote(a)+" is set but loadBalancer.enabled is false", "drop one of them", "loadBalancer", "addresses")
	}
	if c.ReadyTimeout.Duration < 10*time.Second {
		bad(c.ReadyTimeout.String()+" is too short to bring a cluster up", "use at least 10s", "readyTimeout")
	}
	return errs
}
