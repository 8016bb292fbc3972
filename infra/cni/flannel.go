package cni

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"text/template"

	"github.com/winconform/winconform/config"
)

// Back ends of flannel that the harness supports, and the VNI and the
// standard VXLAN port Windows flannel's vxlan back end (overlay networking
// on HNS) needs: the cluster file's (config.Cluster).
const (
	VXLAN       = config.VXLAN
	HostGW      = config.HostGW
	WindowsVNI  = config.WindowsVNI
	WindowsPort = config.WindowsPort
)

// UpstreamFlannelImage is flannel's published image, used when the node image
// came from a registry too.
const UpstreamFlannelImage = "ghcr.io/flannel-io/flannel:" + FlannelVersion

// Flannel says how flannel runs on the cluster's Linux nodes.
type Flannel struct {
	Backend   string // vxlan or host-gw
	VNI       int    // vxlan only
	Port      int    // vxlan only
	PodSubnet string // the cluster's pod CIDR; flannel's Network
	Image     string
	// Local is set when Image was built on this machine and pre-loaded into
	// the nodes: it is never pulled, and it copies files with its own tool.
	Local bool
}

// Validate names the first field that is wrong and how to fix it.
func (f Flannel) Validate() error {
	switch f.Backend {
	case VXLAN:
		if f.VNI < 1 || f.VNI > 1<<24-1 {
			return fmt.Errorf("cni.vni: %d is not a VXLAN network identifier (1..16777215; Windows nodes need %d)", f.VNI, WindowsVNI)
		}
		if f.Port < 1 || f.Port > 65535 {
			return fmt.Errorf("cni.port: %d is not a UDP port (Windows nodes need %d)", f.Port, WindowsPort)
		}
	case HostGW:
	default:
		return fmt.Errorf("cni.backend: %q is not a flannel back end the harness supports: use %q or %q", f.Backend, VXLAN, HostGW)
	}
	if _, _, err := net.ParseCIDR(f.PodSubnet); err != nil {
		return fmt.Errorf("networking.podSubnet: %q is not a CIDR (for example 10.244.0.0/16)", f.PodSubnet)
	}
	if f.Image == "" {
		return fmt.Errorf("flannel image is empty")
	}
	return nil
}

//go:embed flannel.yaml.tmpl
var flannelTemplate string

var manifest = template.Must(template.New("flannel").Funcs(template.FuncMap{
	"indent": func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
	},
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}).Parse(flannelTemplate))

// netConfig is flanneld's net-conf.json.
func (f Flannel) netConfig() ([]byte, error) {
	backend := map[string]any{"Type": f.Backend}
	if f.Backend == VXLAN {
		backend["VNI"], backend["Port"] = f.VNI, f.Port
	}
	return json.MarshalIndent(map[string]any{
		"Network":        f.PodSubnet,
		"EnableNFTables": false,
		"Backend":        backend,
	}, "", "  ")
}

// cniConfig is the CNI network configuration flannel installs on each node.
func cniConfig() ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"name":       "cbr0",
		"cniVersion": ConfigVersion,
		"plugins": []any{
			map[string]any{"type": "flannel", "delegate": map[string]any{"hairpinMode": true, "isDefaultGateway": true}},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
}

// Manifest renders flannel's objects for the Linux nodes as YAML documents.
func (f Flannel) Manifest() ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	net, err := f.netConfig()
	if err != nil {
		return nil, err
	}
	cniConf, err := cniConfig()
	if err != nil {
		return nil, err
	}
	const src, dst = "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"
	data := map[string]any{
		"Image":         f.Image,
		"PullPolicy":    "IfNotPresent",
		"InstallConfig": []string{"cp", "-f", src, dst},
		"NetConfig":     string(net),
		"CNIConfig":     string(cniConf),
	}
	if f.Local {
		// The local image has no shell tools; flannel's own installer copies atomically.
		data["PullPolicy"] = "Never"
		data["InstallConfig"] = []string{"/opt/bin/install-conf", src, dst}
	}
	var buf bytes.Buffer
	if err := manifest.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ForWindows says whether flannel with this back end, VNI and port can take
// Windows nodes, naming the cluster file's field to fix: the harness joins
// them to flannel's vxlan back end, whose Windows side (win-overlay on HNS)
// takes VNI 4096 and UDP port 4789 only (flannel's
// Documentation/backends.md, vxlan: "For Windows" VNI 4096 and port 4789;
// host-gw on Windows needs an l2bridge network the harness does not make).
// Join, its rendering and the checks of the files before any cluster work
// all ask it.
func ForWindows(backend string, vni, port int) error {
	if !strings.EqualFold(backend, VXLAN) {
		return fmt.Errorf("cni.backend: %q: the harness joins Windows machines to flannel's %s back end only; set cni.backend: %s (VNI %d, port %d) in the cluster file, or leave cni out", backend, VXLAN, VXLAN, WindowsVNI, WindowsPort)
	}
	if vni != WindowsVNI || port != WindowsPort {
		return fmt.Errorf("cni.vni %d and cni.port %d: Windows nodes need flannel's vxlan on VNI %d and port %d; set them so in the cluster file, or leave them out", vni, port, WindowsVNI, WindowsPort)
	}
	return nil
}
