package nodeconfig_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/upstream"
)

var kindKubelet = string(upstream.KindKubelet(kubelines.Default()))

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

// kubeletArgs are the kubelet's flags as the join gives them on a machine:
// the harness's, the node's name and address, and the flags kubeadm wrote
// into kubeadm-flags.env (lib.ps1's Get-KubeletCommandLine puts kubeadm's
// in place of the same flag, the others at the end).
func kubeletArgs(j nodeconfig.Join, kubeadmFlags []string) []string {
	args := append(nodeconfig.KubeletFlags(), "--hostname-override="+j.NodeName)
	if j.NodeIP != "" {
		args = append(args, "--node-ip="+j.NodeIP)
	}
	for _, f := range kubeadmFlags {
		name, _, _ := strings.Cut(f, "=")
		i := slices.IndexFunc(args, func(a string) bool { return a == name || strings.HasPrefix(a, name+"=") })
		if i >= 0 {
			args[i] = f
		} else {
			args = append(args, f)
		}
	}
	return args
}

// The kubelet takes its command line and the config.yaml kubeadm writes
// from the cluster's (kind's) KubeletConfiguration and the join's patch:
// image garbage collection and eviction at the kubelet's own defaults, not
// kind's Linux settings, no cgroups.
func TestTheKubeletTakesItsCommandLineAndConfiguration(t *testing.T) {
	j := sampleJoin(t)
	files, err := j.JoinFiles()
	if err != nil {
		t.Fatal(err)
	}
	joined, err := upstream.CheckJoin(files, []byte(kindKubelet))
	if err != nil {
		t.Fatal(err)
	}
	res, err := upstream.CheckKubelet(kubeletArgs(j, joined.KubeadmFlags), joined.KubeletConfig)
	if err != nil {
		t.Fatalf("the kubelet refused: %v", err)
	}
	kc := res.Config
	if kc.ImageGCHighThresholdPercent != 85 || kc.ImageGCLowThresholdPercent != 80 {
		t.Errorf("image garbage collection from %d%% to %d%%, want the kubelet's defaults 85%% to 80%%", kc.ImageGCHighThresholdPercent, kc.ImageGCLowThresholdPercent)
	}
	if kc.EvictionHard != nil {
		t.Errorf("evictionHard %v: want it unset, so that the Windows kubelet takes its own thresholds (cmd/kubelet/app/server.go)", kc.EvictionHard)
	}
	if kc.CgroupRoot != "" || kc.CgroupsPerQOS || !slices.Equal(kc.EnforceNodeAllocatable, []string{"none"}) || kc.ResolverConfig != "" {
		t.Errorf("cgroupRoot %q, cgroupsPerQOS %v, enforceNodeAllocatable %v, resolvConf %q", kc.CgroupRoot, kc.CgroupsPerQOS, kc.EnforceNodeAllocatable, kc.ResolverConfig)
	}
	// The cluster's log query settings reach the Windows node (the join's
	// patch keeps them): a failed spec's bundle reads its logs through the
	// API server.
	if !kc.EnableSystemLogHandler || !kc.EnableSystemLogQuery {
		t.Errorf("enableSystemLogHandler %v, enableSystemLogQuery %v: the Windows node would not serve log queries", kc.EnableSystemLogHandler, kc.EnableSystemLogQuery)
	}
	if kc.ContainerRuntimeEndpoint != nodeconfig.CRISocket {
		t.Errorf("containerRuntimeEndpoint %q, want %q", kc.ContainerRuntimeEndpoint, nodeconfig.CRISocket)
	}
	if !res.Flags.WindowsService && runtime.GOOS == "windows" {
		t.Error("the kubelet does not run as a Windows service")
	}
	if res.Flags.HostnameOverride != j.NodeName || res.Flags.NodeIP != j.NodeIP {
		t.Errorf("hostname-override %q, node-ip %q", res.Flags.HostnameOverride, res.Flags.NodeIP)
	}
	t.Logf("from source: %s", strings.Join(append(joined.FromSource, res.FromSource...), "; "))
}

// kube-proxy takes its flags: the harness's and the two the start script
// adds on the node.
func TestKubeProxyTakesItsFlags(t *testing.T) {
	args, err := nodeconfig.KubeProxyArgs("flannel.4096", "10.244.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	fromSource, err := upstream.CheckKubeProxy(append(args, "--hostname-override=win-2022-a", "--source-vip=10.244.3.2"))
	if err != nil {
		t.Fatalf("kube-proxy refused: %v", err)
	}
	t.Logf("from source: %s", strings.Join(fromSource, "; "))
}
