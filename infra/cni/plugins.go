// Package cni holds the cluster network the harness installs: flannel, whose
// vxlan back end (VNI 4096, UDP port 4789) is the one Windows nodes join, or
// its host-gw back end; its manifest, and the CNI plugins it needs on a node.
package cni

import (
	"context"
	"io"
	"path/filepath"

	"github.com/winconform/winconform/infra/gotool"
)

const (
	// FlannelVersion is the version of flanneld.
	FlannelVersion = "v0.28.10"
	// PluginsVersion is the last containernetworking/plugins release that
	// still holds the flannel CNI plugin (flannel-io/cni-plugin is not on the
	// Go module proxy). It speaks CNI up to 0.4.0, so the flannel network
	// configuration says cniVersion 0.4.0.
	PluginsVersion = "v0.9.1"
	// ConfigVersion is the cniVersion of the flannel network configuration.
	ConfigVersion = "0.4.0"

	pluginsModule = "github.com/containernetworking/plugins"
)

// pluginPackages are the CNI plugins flannel needs on a Linux node: flannel
// itself, and bridge, to which it delegates.
var pluginPackages = map[string]string{
	"flannel": "plugins/meta/flannel",
	"bridge":  "plugins/main/bridge",
}

// BuildPlugins compiles the plugins into binDir (once per version) and
// returns their paths by name.
func BuildPlugins(ctx context.Context, log io.Writer, binDir string) (map[string]string, error) {
	out := map[string]string{}
	for name, pkg := range pluginPackages {
		dir := filepath.Join(binDir, "cni-"+name+"-"+PluginsVersion)
		if err := gotool.Install(ctx, log, dir, pluginsModule+"/"+pkg+"@"+PluginsVersion); err != nil {
			return nil, err
		}
		out[name] = filepath.Join(dir, name)
	}
	return out, nil
}
