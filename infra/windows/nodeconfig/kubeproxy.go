package nodeconfig

import (
	"fmt"
	"net"
)

// KubeProxyKubeconfig is the kubeconfig the kube-proxy-windows start script
// writes (the API server the node reaches, the pod's ServiceAccount token).
const KubeProxyKubeconfig = `C:\winconform\node\kube-proxy\kubeconfig.conf`

// KubeProxyArgs are kube-proxy's flags on a Windows node but for the two
// only the node knows when kube-proxy starts, which the start script adds:
// --hostname-override (the node's name, from the pod's NODE_NAME) and
// --source-vip (an address of the node's pod subnet it reserves from
// host-local). kube-proxy runs in kernel-space mode (winkernel) on
// flannel's overlay network, without direct server return.
func KubeProxyArgs(networkName, clusterCIDR string) ([]string, error) {
	if networkName == "" {
		return nil, fmt.Errorf("nodeconfig: kube-proxy needs the HNS network's name")
	}
	if _, _, err := net.ParseCIDR(clusterCIDR); err != nil {
		return nil, fmt.Errorf("nodeconfig: kube-proxy's cluster CIDR %q: %v", clusterCIDR, err)
	}
	return []string{
		"--proxy-mode=kernelspace",
		"--network-name=" + networkName,
		"--enable-dsr=false",
		"--cluster-cidr=" + clusterCIDR,
		"--kubeconfig=" + KubeProxyKubeconfig,
		"--v=2",
	}, nil
}
