package windows

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// APIControlPlane is any cluster reached through its API server as a
// control plane for Windows machines: bootstrap tokens are Secrets it makes
// itself, as `kubeadm token create` does, so no access to a control-plane
// node is needed. The cluster must accept bootstrap tokens for node joins
// (kubeadm-made clusters do).
type APIControlPlane struct {
	Rest   *rest.Config
	Client kubernetes.Interface
	// Endpoint is the API server's host:port as the machines reach it;
	// the REST config's host when empty.
	Endpoint string
	// TokenTTL bounds the bootstrap token's life; one hour when zero.
	TokenTTL time.Duration
}

var _ ControlPlane = (*APIControlPlane)(nil)

// KubernetesVersion is the API server's version, such as v1.34.4.
func (a *APIControlPlane) KubernetesVersion() string {
	v, err := a.Client.Discovery().ServerVersion()
	if err != nil {
		return ""
	}
	version, _, _ := strings.Cut(v.GitVersion, "+")
	return version
}

// Clientset reaches the cluster.
func (a *APIControlPlane) Clientset() kubernetes.Interface { return a.Client }

// RESTConfig reaches the cluster.
func (a *APIControlPlane) RESTConfig() *rest.Config { return a.Rest }

// JoinCommand makes a bootstrap token for node joins and says where the API
// server is and which CA it has.
func (a *APIControlPlane) JoinCommand(ctx context.Context) (JoinCommand, error) {
	endpoint := a.Endpoint
	if endpoint == "" {
		u, err := url.Parse(a.Rest.Host)
		if err != nil || u.Host == "" {
			return JoinCommand{}, fmt.Errorf("%w: the API server address %q has no host:port", ErrJoinCommand, a.Rest.Host)
		}
		endpoint = u.Host
		if _, _, err := net.SplitHostPort(endpoint); err != nil {
			endpoint = net.JoinHostPort(endpoint, "443")
		}
	}
	hashes, err := caHashes(a.Rest)
	if err != nil {
		return JoinCommand{}, fmt.Errorf("%w: %v", ErrJoinCommand, err)
	}
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return JoinCommand{}, err
	}
	id, secret, _ := strings.Cut(token, ".")
	ttl := a.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	_, err = a.Client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenExpirationKey:       time.Now().Add(ttl).UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      "system:bootstrappers:kubeadm:default-node-token",
			bootstrapapi.BootstrapTokenDescriptionKey:      "made by winconform to join a Windows machine",
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return JoinCommand{}, fmt.Errorf("%w: creating a bootstrap token: %v", ErrJoinCommand, err)
	}
	return JoinCommand{Endpoint: endpoint, Token: token, CACertHashes: hashes}, nil
}

// caHashes are the hashes of the CA certificates a REST config trusts.
func caHashes(cfg *rest.Config) ([]string, error) {
	data, err := restCA(cfg)
	if err != nil {
		return nil, err
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil && len(data) > 0 {
		return nil, fmt.Errorf("the kubeconfig's CA: %w", err)
	}
	var hashes []string
	for _, cert := range certs {
		hashes = append(hashes, CACertHash(cert))
	}
	if len(hashes) == 0 {
		return nil, fmt.Errorf("the kubeconfig names no CA certificate, so the machines could not check the API server's")
	}
	return hashes, nil
}
