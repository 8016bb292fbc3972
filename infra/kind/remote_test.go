package kind

import (
	"net/netip"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestRemoteNodeNames(t *testing.T) {
	if got := RemoteNodeName("wc", 1); got != "wc-remote" {
		t.Errorf("first remote node: %s", got)
	}
	if got := RemoteNodeName("wc", 2); got != "wc-remote2" {
		t.Errorf("second remote node: %s", got)
	}
	if got := RemoteNetwork("wc"); got != "wc-remote" {
		t.Errorf("remote network: %s", got)
	}
}

// The remote node's JoinConfiguration is kubeadm's v1beta4 (kubeletExtraArgs
// a list of name and value, cmd/kubeadm/app/apis/kubeadm/v1beta4): token
// discovery at the control-plane node's address, the node's own address
// and its underlay label for the kubelet, and cAdvisor's sampling interval
// of the nodes winconform makes.
func TestRemoteJoinConfig(t *testing.T) {
	doc := remoteJoinConfig("kubeadm.k8s.io/v1beta4", "172.18.0.4:6443", "abcdef.0123456789abcdef", []string{"sha256:00ff"}, "wc-remote", netip.MustParseAddr("192.168.80.2"))
	var got struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Discovery  struct {
			BootstrapToken struct {
				APIServerEndpoint string   `json:"apiServerEndpoint"`
				Token             string   `json:"token"`
				CACertHashes      []string `json:"caCertHashes"`
			} `json:"bootstrapToken"`
		} `json:"discovery"`
		NodeRegistration struct {
			Name             string `json:"name"`
			CRISocket        string `json:"criSocket"`
			KubeletExtraArgs []struct {
				Name, Value string
			} `json:"kubeletExtraArgs"`
		} `json:"nodeRegistration"`
	}
	if err := yaml.UnmarshalStrict([]byte(doc), &got); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	bt := got.Discovery.BootstrapToken
	if got.Kind != "JoinConfiguration" || bt.APIServerEndpoint != "172.18.0.4:6443" || bt.Token != "abcdef.0123456789abcdef" || len(bt.CACertHashes) != 1 {
		t.Errorf("discovery: %+v", got)
	}
	args := map[string]string{}
	for _, a := range got.NodeRegistration.KubeletExtraArgs {
		args[a.Name] = a.Value
	}
	if got.NodeRegistration.Name != "wc-remote" || args["node-ip"] != "192.168.80.2" || args["node-labels"] != "winconform.io/underlay=routed" ||
		args["housekeeping-interval"] != HousekeepingInterval {
		t.Errorf("nodeRegistration: %+v", got.NodeRegistration)
	}
}
