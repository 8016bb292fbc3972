package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeadmscheme "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/scheme"
	"k8s.io/kubernetes/cmd/kubeadm/app/componentconfigs"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	kubeletphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubelet"
	kubeadmutil "k8s.io/kubernetes/cmd/kubeadm/app/util"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/config/strict"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
)

const kubernetesModule = "k8s.io/kubernetes"

// JoinResult is what kubeadm made of a join's files.
type JoinResult struct {
	// NodeName and CRISocket are the JoinConfiguration's, as kubeadm read
	// them.
	NodeName, CRISocket string
	// Token is the TLS bootstrap token kubeadm join will use, and
	// Discovery the kubeconfig it reads for file discovery, from where it
	// reads it.
	Token     string
	Discovery []byte
	// KubeletConfig is the node's config.yaml as kubeadm join writes it: the
	// cluster's KubeletConfiguration with the instance configuration and
	// the JoinConfiguration's patches applied.
	KubeletConfig []byte
	// KubeadmFlags are the kubelet flags kubeadm join writes into
	// kubeadm-flags.env, as kubeadm reads them back.
	KubeadmFlags []string
	// FromSource lists what was checked against Windows source files
	// rather than run (on Linux).
	FromSource []string
}

// kubeadmJoinInput is the kubeadm judge's input in its child process.
type kubeadmJoinInput struct {
	ConfigFile  string
	BaseKubelet string
}

// CheckJoin judges the files the kubeadm-join step writes, staged in a
// directory as the step writes them (kubeadm join runs there), with
// kubeadm's own code: its strict decoding (an unknown field, which kubeadm
// join only warns of, is an error here), its defaults and validation
// (configutil.BytesToJoinConfiguration, which stats the discovery file
// where kubeadm will), then its kubelet phase: the cluster's
// KubeletConfiguration baseKubelet (what the kubelet-config ConfigMap
// holds) fetched as kubeadm fetches it, the instance configuration and the
// JoinConfiguration's patches applied and config.yaml written
// (WriteConfigToDisk), and kubeadm-flags.env written.
//
// On Linux, kubeadm's defaults would turn a Windows CRI socket into a unix
// one (the Linux build's DefaultContainerRuntimeURLScheme): the socket's
// scheme is checked against the Windows build's constant instead
// (cmd/kubeadm/app/apis/kubeadm/v1beta4/defaults_windows.go).
func CheckJoin(files []nodeconfig.File, baseKubelet []byte) (JoinResult, error) {
	dir, err := os.MkdirTemp("", "kubeadm-join-")
	if err != nil {
		return JoinResult{}, err
	}
	defer os.RemoveAll(dir)
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return JoinResult{}, err
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return JoinResult{}, err
		}
	}
	var out struct {
		JoinResult
		Error string
	}
	if err := inChild(dir, "kubeadm-join", kubeadmJoinInput{ConfigFile: nodeconfig.JoinConfigFile, BaseKubelet: string(baseKubelet)}, &out); err != nil {
		return JoinResult{}, err
	}
	if out.Error != "" {
		return out.JoinResult, errors.New(out.Error)
	}
	if runtime.GOOS != "windows" {
		src, err := ReadSource(kubernetesModule, "cmd/kubeadm/app/apis/kubeadm/v1beta4/defaults_windows.go")
		if err != nil {
			return out.JoinResult, err
		}
		scheme, err := src.StringConst("DefaultContainerRuntimeURLScheme")
		if err != nil {
			return out.JoinResult, err
		}
		u, err := url.Parse(out.CRISocket)
		if err != nil || u.Scheme != scheme {
			return out.JoinResult, fmt.Errorf("nodeRegistration.criSocket %q: kubeadm on Windows takes the URL scheme %q only (%s)", out.CRISocket, scheme, src)
		}
		out.FromSource = append(out.FromSource, fmt.Sprintf("nodeRegistration.criSocket has the scheme %q of %s", scheme, src))
	}
	return out.JoinResult, nil
}

// kubeadmJoinChild runs in the staged directory.
func kubeadmJoinChild(data []byte) (any, error) {
	var in kubeadmJoinInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	res, err := JudgeJoinHere(in.ConfigFile, []byte(in.BaseKubelet))
	out := struct {
		JoinResult
		Error string
	}{JoinResult: res}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// JudgeJoinHere is kubeadm's judgement of a join's files in the working
// directory, where kubeadm join would run: configFile, the
// JoinConfiguration, decoded strictly, defaulted and validated, then the
// kubelet phase on the cluster's KubeletConfiguration baseKubelet (see
// CheckJoin, which stages the files and runs this in a child process; the
// Pester fakes' kubeadm runs it too, through tools/upstreamjudge, on
// Windows).
func JudgeJoinHere(configFile string, baseKubelet []byte) (JoinResult, error) {
	var res JoinResult
	b, err := os.ReadFile(configFile)
	if err != nil {
		return res, err
	}
	// kubeadm join only warns of fields it does not know: a field it
	// ignores is a mistake of the harness's.
	docs, err := kubeadmutil.SplitConfigDocuments(b)
	if err != nil {
		return res, fmt.Errorf("%s: %v", configFile, err)
	}
	for gvk, doc := range docs {
		if err := strict.VerifyUnmarshalStrict([]*kruntime.Scheme{kubeadmscheme.Scheme}, gvk, doc); err != nil {
			return res, fmt.Errorf("%s: %v", configFile, err)
		}
	}
	// The socket as written: kubeadm's Linux defaults would rewrite a
	// Windows one (see CheckJoin).
	for gvk, doc := range docs {
		if gvk.Kind == kubeadmconstants.JoinConfigurationKind {
			var raw struct {
				NodeRegistration struct{ CRISocket string } `json:"nodeRegistration"`
			}
			if err := yaml.Unmarshal(doc, &raw); err == nil {
				res.CRISocket = raw.NodeRegistration.CRISocket
			}
		}
	}
	cfg, err := configutil.BytesToJoinConfiguration(b, configutil.LoadOrDefaultConfigurationOptions{SkipCRIDetect: true})
	if err != nil {
		return res, err
	}
	res.NodeName, res.Token = cfg.NodeRegistration.Name, cfg.Discovery.TLSBootstrapToken
	if runtime.GOOS == "windows" {
		res.CRISocket = cfg.NodeRegistration.CRISocket
	}
	if cfg.Discovery.File != nil {
		if res.Discovery, err = os.ReadFile(cfg.Discovery.File.KubeConfigPath); err != nil {
			return res, fmt.Errorf("the discovery file: %v", err)
		}
	}

	// The kubelet phase, as kubeadm join runs it (cmd/kubeadm/app/cmd/phases/join/kubelet.go).
	cs := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: kubeadmconstants.KubeletBaseConfigurationConfigMap},
		Data:       map[string]string{kubeadmconstants.KubeletBaseConfigurationConfigMapKey: string(baseKubelet)},
	})
	cluster := &kubeadmapi.ClusterConfiguration{}
	if err := componentconfigs.FetchFromCluster(cluster, cs); err != nil {
		return res, fmt.Errorf("fetching the cluster's KubeletConfiguration: %v", err)
	}
	kubeletDir, err := os.MkdirTemp("", "kubelet-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(kubeletDir)
	if err := kubeletphase.WriteInstanceConfigToDisk(&kubeletconfig.KubeletConfiguration{ContainerRuntimeEndpoint: res.CRISocket}, kubeletDir); err != nil {
		return res, err
	}
	patches := ""
	if cfg.Patches != nil {
		patches = cfg.Patches.Directory
	}
	if err := kubeletphase.WriteConfigToDisk(cluster, kubeletDir, patches, io.Discard); err != nil {
		return res, err
	}
	if err := kubeletphase.WriteKubeletDynamicEnvFile(cluster, &cfg.NodeRegistration, cfg.ControlPlane == nil, kubeletDir); err != nil {
		return res, err
	}
	if res.KubeletConfig, err = os.ReadFile(filepath.Join(kubeletDir, kubeadmconstants.KubeletConfigurationFileName)); err != nil {
		return res, err
	}
	res.KubeadmFlags, err = kubeletphase.ReadKubeletDynamicEnvFile(filepath.Join(kubeletDir, kubeadmconstants.KubeletEnvFileName))
	return res, err
}
