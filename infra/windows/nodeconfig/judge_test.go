package nodeconfig_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/testing/upstream"
)

// kindKubelet is the KubeletConfiguration of a cluster kind made, as the
// kubelet-config ConfigMap holds it: kind v0.33.0's template
// (pkg/cluster/internal/kubeadm/config.go) with the harness's cgroup v1
// patch (infra/kind, failCgroupV1Off).
const kindKubelet = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
cgroupRoot: /kubelet
failSwapOn: false
failCgroupV1: false
imageGCHighThresholdPercent: 100
evictionHard:
  nodefs.available: "0%"
  nodefs.inodesFree: "0%"
  imagefs.available: "0%"
`

func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func sampleJoin(t *testing.T) nodeconfig.Join {
	return nodeconfig.Join{NodeName: "win-2022-a", NodeIP: "192.168.56.20", Token: "w1nc0n.5ecretf0rt35ts00", Endpoint: "192.168.56.1:6443", CACert: testCA(t)}
}

// kubeadm takes the join's files: it decodes the JoinConfiguration strictly,
// defaults and validates it (the discovery file where kubeadm stats it),
// and its kubelet phase writes the node's config.yaml and kubeadm-flags.env.
func TestKubeadmTakesTheJoinFiles(t *testing.T) {
	files, err := sampleJoin(t).JoinFiles()
	if err != nil {
		t.Fatal(err)
	}
	res, err := upstream.CheckJoin(files, []byte(kindKubelet))
	if err != nil {
		t.Fatalf("kubeadm refused the join's files: %v", err)
	}
	if res.NodeName != "win-2022-a" || res.CRISocket != nodeconfig.CRISocket {
		t.Errorf("kubeadm read node %q, socket %q", res.NodeName, res.CRISocket)
	}
	if !slices.Contains(res.KubeadmFlags, "--node-ip=192.168.56.20") {
		t.Errorf("kubeadm-flags.env: %v, want --node-ip", res.KubeadmFlags)
	}
	t.Logf("from source: %s", strings.Join(res.FromSource, "; "))
	t.Logf("config.yaml:\n%s", res.KubeletConfig)
}
