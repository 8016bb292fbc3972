package nodeconfig

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeadm "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	"sigs.k8s.io/yaml"
)

// The files kubeadm join reads, by their names in JoinDir. kubeadm join
// runs with JoinDir as its working directory, and the JoinConfiguration
// names the others relative to it: kubeadm validates
// discovery.file.kubeConfigPath with url.Parse before anything else
// (ValidateDiscoveryKubeConfigPath, cmd/kubeadm/app/apis/kubeadm/validation,
// k8s.io/kubernetes v1.37.2), and Go parses a Windows path's drive letter
// ("C:\...") as a URL scheme, which kubeadm then refuses ("if a URL is
// used, the scheme must be https"); a relative path has no scheme, and
// kubeadm stats it in its working directory, on Windows as on Linux.
const (
	JoinConfigFile   = "join.yaml"
	DiscoveryFile    = "discovery.conf"
	PatchesDir       = "patches"
	KubeletPatchFile = PatchesDir + "/kubeletconfiguration+merge.yaml"
	joinAPIVersion   = "kubeadm.k8s.io/v1beta4"
	discoveryUser    = "tls-bootstrap-token-user"
	discoveryCluster = "kubernetes"
)

// TokenPlaceholder is a bootstrap token in kubeadm's format that is never a
// live one: what `winconform join --render` writes in place of the token a
// join makes (kubeadm's own documentation uses it as its example).
const TokenPlaceholder = "abcdef.0123456789abcdef"

// bootstrapToken is kubeadm's token format, <6 of [a-z0-9]>.<16 of [a-z0-9]>
// (k8s.io/cluster-bootstrap/token/api BootstrapTokenPattern).
var bootstrapToken = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)

// Join is what kubeadm join on a machine is given.
type Join struct {
	// NodeName is the node's name (the inventory's machine name).
	NodeName string
	// NodeIP is the node's address, given to the kubelet as --node-ip
	// through kubeadm; "" leaves the choice to the kubelet.
	NodeIP string
	// Token is the bootstrap token, <id>.<secret>.
	Token string
	// Endpoint is the API server's host:port as the machine reaches it.
	Endpoint string
	// CACert is the cluster's CA certificate, PEM.
	CACert []byte
}

// File is one file a step places on the machine: Name relative to the
// directory the step writes into, Data its exact bytes.
type File struct {
	Name string
	Data []byte
}

// Validate checks j field by field, as the errors of kubeadm's own
// validation would name them later, on the machine.
func (j Join) Validate() field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("join")
	for _, msg := range validation.IsDNS1123Subdomain(j.NodeName) {
		errs = append(errs, field.Invalid(p.Child("nodeName"), j.NodeName, msg))
	}
	if j.NodeIP != "" && net.ParseIP(j.NodeIP) == nil {
		errs = append(errs, field.Invalid(p.Child("nodeIP"), j.NodeIP, "not an IP address"))
	}
	if !bootstrapToken.MatchString(j.Token) {
		errs = append(errs, field.Invalid(p.Child("token"), "<hidden>", "not a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}"))
	}
	if host, port, err := net.SplitHostPort(j.Endpoint); err != nil || host == "" {
		errs = append(errs, field.Invalid(p.Child("endpoint"), j.Endpoint, "not host:port"))
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		errs = append(errs, field.Invalid(p.Child("endpoint"), j.Endpoint, "the port is not 1 to 65535"))
	}
	if err := checkCA(j.CACert); err != nil {
		errs = append(errs, field.Invalid(p.Child("caCert"), "<PEM>", err.Error()))
	}
	return errs
}

func checkCA(data []byte) error {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return fmt.Errorf("no PEM CERTIFICATE block")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return err
	}
	return nil
}

// JoinFiles are the files the kubeadm-join step writes into JoinDir, in
// the order it writes them: the JoinConfiguration (JoinConfigFile), the
// discovery kubeconfig it names (DiscoveryFile), and the patch that gives
// the node's kubelet a Windows configuration (KubeletPatchFile, in the
// patches directory the JoinConfiguration names).
func (j Join) JoinFiles() ([]File, error) {
	if errs := j.Validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	cfg, err := j.joinConfiguration()
	if err != nil {
		return nil, err
	}
	disc, err := DiscoveryKubeconfig(j.Endpoint, j.CACert)
	if err != nil {
		return nil, err
	}
	return []File{
		{Name: JoinConfigFile, Data: cfg},
		{Name: DiscoveryFile, Data: disc},
		{Name: KubeletPatchFile, Data: KubeletConfigPatch()},
	}, nil
}

// joinParam is the kubeadm-join step's JoinFiles parameter: the files, and
// which of them kubeadm join is given, as JSON.
type joinParam struct {
	Config string      `json:"config"`
	Files  []paramFile `json:"files"`
}

type paramFile struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// Param is JoinFiles as the kubeadm-join step takes them (its JoinFiles
// parameter): JSON of the files and the JoinConfiguration's name.
func (j Join) Param() (string, error) {
	files, err := j.JoinFiles()
	if err != nil {
		return "", err
	}
	p := joinParam{Config: JoinConfigFile}
	for _, f := range files {
		p.Files = append(p.Files, paramFile{f.Name, string(f.Data)})
	}
	data, err := json.Marshal(p)
	return string(data), err
}

// ParseParam reads the kubeadm-join step's JoinFiles parameter: the files
// and the name of the JoinConfiguration among them.
func ParseParam(param string) (config string, files []File, err error) {
	var p joinParam
	dec := json.NewDecoder(strings.NewReader(param))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return "", nil, fmt.Errorf("nodeconfig: the join's files: %w", err)
	}
	found := false
	for _, f := range p.Files {
		if f.Name == "" || strings.Contains(f.Name, "..") || strings.HasPrefix(f.Name, "/") || strings.Contains(f.Name, `\`) {
			return "", nil, fmt.Errorf("nodeconfig: the join's files: %q is no name relative to the join's directory", f.Name)
		}
		found = found || f.Name == p.Config
		files = append(files, File{Name: f.Name, Data: []byte(f.Data)})
	}
	if !found {
		return "", nil, fmt.Errorf("nodeconfig: the join's files have no %q, the JoinConfiguration they name", p.Config)
	}
	return p.Config, files, nil
}

// joinConfiguration is kubeadm's JoinConfiguration, v1beta4: discovery
// through DiscoveryFile and the bootstrap token, the node's name, the CRI
// socket, the node's address as a kubelet argument, and PatchesDir.
func (j Join) joinConfiguration() ([]byte, error) {
	cfg := kubeadm.JoinConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: joinAPIVersion, Kind: "JoinConfiguration"},
		Discovery: kubeadm.Discovery{
			File:              &kubeadm.FileDiscovery{KubeConfigPath: DiscoveryFile},
			TLSBootstrapToken: j.Token,
		},
		// No taints: the harness applies the inventory's (infra/windows, the node step).
		NodeRegistration: kubeadm.NodeRegistrationOptions{Name: j.NodeName, CRISocket: CRISocket, Taints: []corev1.Taint{}},
		Patches:          &kubeadm.Patches{Directory: PatchesDir},
	}
	if j.NodeIP != "" {
		cfg.NodeRegistration.KubeletExtraArgs = []kubeadm.Arg{{Name: "node-ip", Value: j.NodeIP}}
	}
	return yaml.Marshal(cfg)
}

// DiscoveryKubeconfig is the kubeconfig kubeadm join reads for file
// discovery: the API server as the machines reach it and the cluster's CA,
// no credentials (the bootstrap token is the JoinConfiguration's
// tlsBootstrapToken).
//
// A discovery file, rather than token discovery: with token discovery,
// kubeadm takes the API server address for the TLS bootstrap from the
// cluster-info ConfigMap, which on kind is the control-plane container's
// address, unreachable from the machines; with a discovery file it keeps
// the file's address.
func DiscoveryKubeconfig(endpoint string, caPEM []byte) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[discoveryCluster] = &clientcmdapi.Cluster{Server: "https://" + endpoint, CertificateAuthorityData: caPEM}
	kc.AuthInfos[discoveryUser] = &clientcmdapi.AuthInfo{}
	kc.Contexts[discoveryUser+"@"+discoveryCluster] = &clientcmdapi.Context{Cluster: discoveryCluster, AuthInfo: discoveryUser}
	kc.CurrentContext = discoveryUser + "@" + discoveryCluster
	return clientcmd.Write(*kc)
}

// PlaceholderCACert stands for the cluster's CA where the join's files are
// rendered without a cluster (`winconform join --render`): a self-signed
// certificate of no cluster, named so.
const PlaceholderCACert = `-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIBATAKBggqhkjOPQQDAjBBMT8wPQYDVQQDEzZ3aW5jb25m
b3JtIGpvaW4gLS1yZW5kZXIgcGxhY2Vob2xkZXIgKG5vIGNsdXN0ZXIncyBDQSkw
HhcNMjYwMTAxMDAwMDAwWhcNMzYwMTAxMDAwMDAwWjBBMT8wPQYDVQQDEzZ3aW5j
b25mb3JtIGpvaW4gLS1yZW5kZXIgcGxhY2Vob2xkZXIgKG5vIGNsdXN0ZXIncyBD
QSkwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARD5tt2ACULLNgP8O/PYRE+Cjr3
qpF1rp3pT2liABIY+B3oYy+nww48foJ+5IQcJEdUW9amgIVwcnfVmVriQOhFo0Iw
QDAOBgNVHQ8BAf8EBAMCAgQwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUBUQ3
tZW+5Ohq2EJDaFfCwwPHb3IwCgYIKoZIzj0EAwIDSAAwRQIhAJQoataPEM1EIQJk
fpWatZ9R0hetMABPpBZV/b1rSC8+AiB5DEo7eEkLQneBYrfViZZRR5Tj/wcpDXAq
aoKpbXypKA==
-----END CERTIFICATE-----
`
