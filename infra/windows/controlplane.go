package windows

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	certutil "k8s.io/client-go/util/cert"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/userfile"
)

// ControlPlane is what joining and resetting Windows machines needs of the
// cluster. infra/kind implements it for the harness's kind clusters.
type ControlPlane interface {
	// KubernetesVersion is the cluster's version, such as v1.37.2: the
	// version of the kubelet, kubeadm and kube-proxy installed on machines
	// unless their inventory says another (ResolveVersions).
	KubernetesVersion() string
	// JoinCommand makes a bootstrap token and says how machines reach the
	// API server.
	JoinCommand(ctx context.Context) (JoinCommand, error)
	// Clientset and RESTConfig reach the cluster as an administrator.
	Clientset() kubernetes.Interface
	RESTConfig() *rest.Config
}

// JoinCommand is what kubeadm join needs: where the API server is, a
// bootstrap token, and the hashes of the cluster CA's public key. It prints
// without the token's secret.
type JoinCommand struct {
	// Endpoint is the API server's host:port as the machines reach it.
	Endpoint string
	// Token is the bootstrap token, <id>.<secret>.
	Token string
	// CACertHashes are "sha256:<hex>" hashes of the CA's public key.
	CACertHashes []string
}

var (
	tokenPattern  = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)
	caHashPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// TokenID is the public part of the token, the <id> of <id>.<secret>.
func (j JoinCommand) TokenID() string {
	if m := tokenPattern.FindStringSubmatch(j.Token); m != nil {
		return m[1]
	}
	return ""
}

// String shows the command without the token's secret.
func (j JoinCommand) String() string {
	token := "<none>"
	if id := j.TokenID(); id != "" {
		token = id + ".****************"
	} else if j.Token != "" {
		token = "********"
	}
	return fmt.Sprintf("kubeadm join %s --token %s --discovery-token-ca-cert-hash %s", j.Endpoint, token, strings.Join(j.CACertHashes, ","))
}

// GoString is String, so that %#v does not print the token either.
func (j JoinCommand) GoString() string { return "windows.JoinCommand{" + j.String() + "}" }

// Validate names what is wrong with the command.
func (j JoinCommand) Validate() error {
	var problems []string
	if host, port, err := net.SplitHostPort(j.Endpoint); err != nil || host == "" || port == "" {
		problems = append(problems, fmt.Sprintf("endpoint %q is not host:port", j.Endpoint))
	}
	if !tokenPattern.MatchString(j.Token) {
		problems = append(problems, "the token is not a bootstrap token ([a-z0-9]{6}.[a-z0-9]{16})")
	}
	if len(j.CACertHashes) == 0 {
		problems = append(problems, "no CA certificate hash")
	}
	for _, h := range j.CACertHashes {
		if !caHashPattern.MatchString(h) {
			problems = append(problems, fmt.Sprintf("CA certificate hash %q is not sha256:<64 hex digits>", h))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrJoinCommand, strings.Join(problems, "; "))
	}
	return nil
}

// CACertHash is kubeadm's hash of a CA certificate: "sha256:" and the hex
// SHA-256 of its Subject Public Key Info.
func CACertHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// verifyCA checks that one of the PEM certificates has one of the hashes.
func verifyCA(caPEM []byte, hashes []string) error {
	certs, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return fmt.Errorf("%w: the cluster CA: %v", ErrCACertHash, err)
	}
	var seen []string
	for _, cert := range certs {
		h := CACertHash(cert)
		if slices.Contains(hashes, h) {
			return nil
		}
		seen = append(seen, h)
	}
	return fmt.Errorf("%w: the cluster's CA has %s, the join command pins %s", ErrCACertHash, strings.Join(seen, ", "), strings.Join(hashes, ", "))
}

// clusterCA returns the cluster's CA certificates (PEM): from the
// kube-public/cluster-info ConfigMap, which kubeadm's own discovery reads,
// else from the REST config.
func clusterCA(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config) ([]byte, error) {
	cm, err := cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
	switch {
	case err == nil:
		kc, err := clientcmd.Load([]byte(cm.Data["kubeconfig"]))
		if err != nil {
			return nil, fmt.Errorf("kube-public/cluster-info: its kubeconfig does not parse: %w", err)
		}
		for _, c := range kc.Clusters {
			if len(c.CertificateAuthorityData) > 0 {
				return c.CertificateAuthorityData, nil
			}
		}
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading kube-public/cluster-info: %w", err)
	}
	if data, err := restCA(cfg); err != nil || len(data) > 0 {
		return data, err
	}
	return nil, errors.New("the cluster's CA is in neither kube-public/cluster-info nor the REST config")
}

// restCA is the CA a REST config trusts: its CAData, else its CAFile (read
// through the door for files a user names); none when it names neither.
func restCA(cfg *rest.Config) ([]byte, error) {
	switch {
	case cfg == nil:
		return nil, nil
	case len(cfg.CAData) > 0:
		return cfg.CAData, nil
	case cfg.CAFile != "":
		return userfile.Read("the kubeconfig's certificate-authority", cfg.CAFile, userfile.CA)
	}
	return nil, nil
}

// CheckJoinCommand proves that cp can join machines without touching one:
// it makes a join command (a bootstrap token), checks it, checks that the
// cluster's CA has one of its hashes and makes the discovery file from it,
// then deletes the token. The command it returns prints without its secret.
func CheckJoinCommand(ctx context.Context, cp ControlPlane) (JoinCommand, error) {
	jc, err := cp.JoinCommand(ctx)
	if err != nil {
		return jc, err
	}
	defer deleteBootstrapToken(cp.Clientset(), jc)
	if err := jc.Validate(); err != nil {
		return jc, err
	}
	ca, err := clusterCA(ctx, cp.Clientset(), cp.RESTConfig())
	if err != nil {
		return jc, fmt.Errorf("%w: %v", ErrCACertHash, err)
	}
	if err := verifyCA(ca, jc.CACertHashes); err != nil {
		return jc, err
	}
	_, err = nodeconfig.DiscoveryKubeconfig(jc.Endpoint, ca)
	return jc, err
}
