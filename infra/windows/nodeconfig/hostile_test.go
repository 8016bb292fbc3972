package nodeconfig_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/upstream"
)

// oldJoinConfiguration is what infra/windows/scripts/kubeadm-join.ps1 wrote
// until the join's files were composed in Go: ConvertTo-Json of its
// JoinConfiguration, the discovery file named by its Windows path. kubeadm
// refuses it: url.Parse takes the drive letter for a URL scheme.
const oldJoinConfiguration = `{
    "apiVersion":  "kubeadm.k8s.io/v1beta4",
    "kind":  "JoinConfiguration",
    "discovery":  {
                      "file":  {
                                   "kubeConfigPath":  "C:\\winconform\\join\\discovery.conf"
                               },
                      "tlsBootstrapToken":  "w1nc0n.5ecretf0rt35ts00"
                  },
    "nodeRegistration":  {
                             "name":  "win-2022-a",
                             "criSocket":  "npipe:////./pipe/containerd-containerd",
                             "kubeletExtraArgs":  [
                                                      {
                                                          "name":  "node-ip",
                                                          "value":  "192.168.56.20"
                                                      }
                                                  ]
                         }
}`

// replaceFile returns files with name's data changed by edit; a nil result
// of edit removes the file.
func replaceFile(files []nodeconfig.File, name string, edit func([]byte) []byte) []nodeconfig.File {
	var out []nodeconfig.File
	for _, f := range files {
		if f.Name == name {
			d := edit(bytes.Clone(f.Data))
			if d == nil {
				continue
			}
			f.Data = d
		}
		out = append(out, f)
	}
	return out
}

func sub(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
}

// Each judge refuses what its component refuses: a judge that accepts
// anything is no judge. (The messages wanted are in both builds' words: on
// Windows the component's own, on Linux the source check's.)
func TestKubeadmRefusesBrokenJoinFiles(t *testing.T) {
	good, err := sampleJoin(t).JoinFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		files []nodeconfig.File
		want  string
	}{
		{"the JoinConfiguration the PowerShell step wrote", replaceFile(good, nodeconfig.JoinConfigFile, func([]byte) []byte { return []byte(oldJoinConfiguration) }),
			"if a URL is used, the scheme must be https"},
		{"a field kubeadm does not know", replaceFile(good, nodeconfig.JoinConfigFile, sub("nodeRegistration:", "nodeRegistraton:")),
			"unknown field"},
		{"no discovery file where kubeadm looks", replaceFile(good, nodeconfig.DiscoveryFile, func([]byte) []byte { return nil }),
			"not a valid HTTPS URL or a file on disk"},
		{"a node name that is no DNS subdomain", replaceFile(good, nodeconfig.JoinConfigFile, sub("name: win-2022-a", "name: Win_2022_A")),
			"RFC 1123 subdomain"},
		{"a malformed bootstrap token", replaceFile(good, nodeconfig.JoinConfigFile, sub("tlsBootstrapToken: w1nc0n.5ecretf0rt35ts00", "tlsBootstrapToken: w1nc0n")),
			"tlsBootstrapToken"},
		{"a Linux CRI socket", replaceFile(good, nodeconfig.JoinConfigFile, sub(nodeconfig.CRISocket, "unix:///run/containerd/containerd.sock")),
			`"npipe"`},
		{"a patch that is no YAML", replaceFile(good, nodeconfig.KubeletPatchFile, func([]byte) []byte { return []byte("cgroupRoot: [\n") }),
			"patch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := upstream.CheckJoin(c.files, []byte(kindKubelet))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("kubeadm's judgement: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestKubeletRefusesBrokenInputs(t *testing.T) {
	j := sampleJoin(t)
	files, err := j.JoinFiles()
	if err != nil {
		t.Fatal(err)
	}
	joined, err := upstream.CheckJoin(files, []byte(kindKubelet))
	if err != nil {
		t.Fatal(err)
	}
	args := kubeletArgs(j, joined.KubeadmFlags)
	for _, c := range []struct {
		name   string
		args   []string
		config string
		want   string
	}{
		{"a misspelt Windows flag", slices.Concat(args, []string{"--windows-servic"}), "", "unknown flag"},
		{"a flag no kubelet has", slices.Concat(args, []string{"--pod-infra-container-image=registry.k8s.io/pause:3.10"}), "", "unknown flag"},
		{"an argument that is no flag", slices.Concat(args, []string{"kubelet.exe"}), "", "no flags"},
		{"a setting the Windows kubelet refuses", args, "userNamespaces:\n  idsPerPod: 65536\n", "UserNamespaces"},
		{"a threshold out of range", args, "imageGCHighThresholdPercent: 150\n", "imageGCHighThresholdPercent"},
		{"a key the kubelet does not know", args, "imageGCHighThreshold: 90\n", "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			config := append(bytes.Clone(joined.KubeletConfig), c.config...)
			_, err := upstream.CheckKubelet(c.args, config)
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
				t.Errorf("the kubelet's judgement: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestKubeProxyRefusesBrokenFlags(t *testing.T) {
	args, err := nodeconfig.KubeProxyArgs("flannel.4096", "10.244.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, flag, want string
	}{
		{"a Linux mode", "--proxy-mode=ipvs", "kernelspace"},
		{"no mode at all", "--proxy-mode=userspace", "ProxyMode"},
		{"a misspelt Windows flag", "--network-nme=flannel.4096", "unknown flag"},
		{"a cluster CIDR that is none", "--cluster-cidr=10.244.0.0", "ClusterCIDR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := upstream.CheckKubeProxy(slices.Concat(args, []string{c.flag}))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("kube-proxy's judgement: %v, want an error with %q", err, c.want)
			}
		})
	}
}
