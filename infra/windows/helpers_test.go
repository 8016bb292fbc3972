package windows_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/simmachine"
	"github.com/winconform/winconform/testing/steptest"
	"github.com/winconform/winconform/testing/wsmantest"
)

// testPassword is distinctive, so that a leak is easy to find.
const testPassword = "S1mulated-P@ss'word\u2019-7f3c"

const testVersion = "v1.37.2"

// fakeCluster is a ControlPlane over a fake clientset: its join command
// carries a bootstrap token it records (as a Secret, like kubeadm), and the
// simulated machine's kubeadm join registers the Node through it, Ready,
// as a Windows node labelled with the build the kubelet would report.
type fakeCluster struct {
	cs       *fake.Clientset
	endpoint string
	caPEM    []byte
	caHash   string

	mu         sync.Mutex
	tokens     []string
	buildLabel string // node.kubernetes.io/windows-build the kubelet sets
	joins      []simmachine.JoinRequest
	// kubelets start the pods bound to a joined node, by node name.
	kubelets map[string]func(images ...string) error
	// clockOffset is how far the API server's clock is ahead of true time.
	clockOffset time.Duration
	// version is the API server's version; testVersion when empty.
	version string
}

var _ windows.ControlPlane = (*fakeCluster)(nil)

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	caPEM, caHash := testCA(t)
	cs := fake.NewClientset()
	// Eviction deletes the pod, as the API server does.
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(metav1.Object)
		err := cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), a.GetNamespace(), ev.GetName())
		return true, nil, err
	})
	f := &fakeCluster{cs: cs, endpoint: "192.0.2.10:6443", caPEM: caPEM, caHash: caHash, buildLabel: "10.0.20348",
		kubelets: map[string]func(...string) error{}}
	cs.PrependReactor("create", "pods", f.kubelet)
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n    server: https://winconform-control-plane:6443\n    certificate-authority-data: %s\n",
		b64(caPEM))
	_, err := cs.CoreV1().ConfigMaps("kube-public").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: "kube-public"},
		Data:       map[string]string{"kubeconfig": kc},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// joinFor is the simulated machine's kubeadm join: the cluster's onJoin,
// after which the machine's kubelet starts the pods bound to its node.
func (f *fakeCluster) joinFor(sim *simmachine.Machine) func(simmachine.JoinRequest) error {
	return func(req simmachine.JoinRequest) error {
		f.mu.Lock()
		f.kubelets[req.NodeName] = sim.StartPod
		f.mu.Unlock()
		return f.onJoin(req)
	}
}

// kubelet is what a joined node's kubelet makes of a pod bound to it: the
// simulated machine starts it (Running), or says why it cannot, which the
// kubelet reports as an event of the pod and leaves it Pending.
func (f *fakeCluster) kubelet(a k8stesting.Action) (bool, runtime.Object, error) {
	if a.GetSubresource() != "" {
		return false, nil, nil
	}
	pod, ok := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return false, nil, nil
	}
	f.mu.Lock()
	start := f.kubelets[pod.Spec.NodeName]
	f.mu.Unlock()
	if start == nil {
		return false, nil, nil
	}
	var images []string
	for _, c := range pod.Spec.Containers {
		images = append(images, c.Image)
	}
	pod.Status.Phase = corev1.PodPending
	var perr *simmachine.PodError
	switch err := start(images...); {
	case err == nil:
		pod.Status.Phase = corev1.PodRunning
	case errors.As(err, &perr):
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", pod.Name, time.Now().UnixNano()), Namespace: pod.Namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name},
			Reason:         perr.Reason, Message: perr.Message, Type: corev1.EventTypeWarning,
			LastTimestamp: metav1.Now(),
		}
		if err := f.cs.Tracker().Add(ev); err != nil {
			return true, nil, err
		}
	default:
		return true, nil, err
	}
	return false, nil, nil
}

// APIServerTime is the API server's clock (windows.APIServerClock).
func (f *fakeCluster) APIServerTime(context.Context) (time.Time, error) {
	return time.Now().Add(f.clockOffset), nil
}

func (f *fakeCluster) KubernetesVersion() string {
	if f.version != "" {
		return f.version
	}
	return testVersion
}
func (f *fakeCluster) Clientset() kubernetes.Interface { return f.cs }
func (f *fakeCluster) RESTConfig() *rest.Config {
	return &rest.Config{Host: "https://" + f.endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: f.caPEM}}
}
func (f *fakeCluster) JoinCommand(ctx context.Context) (windows.JoinCommand, error) {
	f.mu.Lock()
	id := fmt.Sprintf("abc%03d", len(f.tokens))
	token := id + ".0123456789abcdef"
	f.tokens = append(f.tokens, token)
	f.mu.Unlock()
	_, err := f.cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       "bootstrap.kubernetes.io/token",
	}, metav1.CreateOptions{})
	if err != nil {
		return windows.JoinCommand{}, err
	}
	return windows.JoinCommand{Endpoint: f.endpoint, Token: token, CACertHashes: []string{f.caHash}}, nil
}

func (f *fakeCluster) issued() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.tokens) }

// issuedTokens returns the bootstrap tokens made so far.
func (f *fakeCluster) issuedTokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tokens...)
}

// onJoin is the simulated kubeadm join's effect on the cluster: it checks
// the token and the discovery file, and registers the Node.
func (f *fakeCluster) onJoin(req simmachine.JoinRequest) error {
	f.mu.Lock()
	f.joins = append(f.joins, req)
	valid := len(f.tokens) > 0 && f.tokens[len(f.tokens)-1] == req.Token
	label := f.buildLabel
	f.mu.Unlock()
	ctx := context.Background()
	if !valid {
		return errors.New("couldn't validate the identity of the API Server: the token is not the one issued")
	}
	if _, err := f.cs.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+strings.Split(req.Token, ".")[0], metav1.GetOptions{}); err != nil {
		return fmt.Errorf("the bootstrap token is gone: %w", err)
	}
	kc, err := clientcmd.Load([]byte(req.DiscoveryConfig))
	if err != nil {
		return fmt.Errorf("the discovery file does not parse: %w", err)
	}
	if err := clientcmd.Validate(*kc); err != nil {
		return fmt.Errorf("the discovery file is not valid: %w", err)
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if cluster.Server != "https://"+f.endpoint || string(cluster.CertificateAuthorityData) != string(f.caPEM) {
		return fmt.Errorf("the discovery file names %s and another CA", cluster.Server)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: req.NodeName, Labels: map[string]string{
			"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": req.NodeName,
			"node.kubernetes.io/windows-build": label,
		}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}},
	}
	// The kubelet reports the address --node-ip gives it (the one of its
	// own choice otherwise, which the fake cluster leaves out).
	for _, f := range strings.Fields(req.KubeletCommand) {
		if ip, ok := strings.CutPrefix(f, "--node-ip="); ok {
			node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		}
	}
	_, err = f.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = f.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	}
	return err
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func testCA(t *testing.T) ([]byte, string) {
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
	cert, _ := x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), windows.CACertHash(cert)
}

// rig is a simulated machine behind the in-process WS-Management endpoint,
// reached by the real WinRM client, and a fake cluster.
type rig struct {
	t       *testing.T
	sim     *simmachine.Machine
	srv     *wsmantest.Server
	cluster *fakeCluster
	machine config.Machine
	exec    *remote.WinRM
}

func newRig(t *testing.T, cfg simmachine.Config, mutate ...func(*config.Machine)) *rig {
	t.Helper()
	cfg.Password = testPassword
	sim := simmachine.New(cfg)
	cluster := newFakeCluster(t)
	sim.OnJoin = cluster.joinFor(sim)
	srv := wsmantest.New(t, wsmantest.WithCredentials("Administrator", testPassword),
		wsmantest.WithHandler(sim.Handler()), wsmantest.WithIntercept(sim.Intercept()))
	m := config.Machine{
		Name: "win-2022-a", Address: srv.Host(),
		WinRM: config.WinRM{Port: config.Port(srv.Port()), HTTPS: false, Auth: config.AuthNTLM},
		User:  "Administrator", PasswordFrom: config.SecretRef{Secret: testPassword},
		Labels:             map[string]string{"topology.kubernetes.io/zone": "lab-1"},
		Taints:             []config.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		Binaries:           map[string]string{"probe": `C:\install\probe.exe`},
		DefenderExclusions: true,
	}
	for _, f := range mutate {
		f(&m)
	}
	r := &rig{t: t, sim: sim, srv: srv, cluster: cluster, machine: m}
	r.exec = r.connect(m)
	t.Cleanup(func() { assertStockTraffic(t, srv) })
	return r
}

// containerdConfig is the machine's containerd configuration, as the
// simulated machine's containerd reads its keys.
func (r *rig) containerdConfig() steptest.ContainerdConfig {
	r.t.Helper()
	cfg, err := steptest.ParseContainerdConfig(r.sim.Fact("file:" + nodeconfig.ContainerdConfigPath))
	if err != nil {
		r.t.Fatalf("the machine's %s: %v", nodeconfig.ContainerdConfigPath, err)
	}
	return cfg
}

// setContainerdConfig gives the machine the configuration the join writes
// for containerd version with the sandbox image.
func (r *rig) setContainerdConfig(version, sandbox string) {
	r.t.Helper()
	cfg, err := nodeconfig.Containerd{Version: version, SandboxImage: sandbox}.ConfigTOML()
	if err != nil {
		r.t.Fatal(err)
	}
	r.sim.SetFact("file:"+nodeconfig.ContainerdConfigPath, string(cfg))
}

// assertStockTraffic checks that the harness spoke to the simulated machine
// as a stock Windows Server's WinRM wants (wsmantest's default: HTTP on
// the listener, Basic off, AllowUnencrypted=false): every message sealed
// with NTLM, none with Basic credentials.
func assertStockTraffic(t *testing.T, srv *wsmantest.Server) {
	t.Helper()
	for _, r := range srv.Requests() {
		if !r.Sealed || r.Auth == "Basic" {
			t.Errorf("request #%d %s to the simulated machine: sealed %v, Authorization %q; a stock server wants every message sealed, and no Basic", r.Seq, r.Action, r.Sealed, r.Auth)
		}
	}
}

// connect makes the WinRM client the CLI makes, with short timeouts.
func (r *rig) connect(m config.Machine) *remote.WinRM {
	cfg := windows.RemoteConfig(m)
	cfg.ConnectTimeout = 2 * time.Second
	cfg.OperationTimeout = 2 * time.Second
	cfg.CleanupTimeout = time.Second
	w, err := remote.NewWinRM(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = w.Close() })
	return w
}

// testTimeouts are short: the simulated machine answers at once.
func testTimeouts() windows.Timeouts {
	return windows.Timeouts{
		Reboot: 3 * time.Second, RebootPoll: 10 * time.Millisecond, RebootPollMax: 50 * time.Millisecond,
		Ping: 2 * time.Second, NodeReady: time.Second, NodePoll: 10 * time.Millisecond, Drain: 500 * time.Millisecond,
		PodStart: time.Second,
	}
}

func (r *rig) join(opts windows.JoinOptions) (*windows.JoinReport, error) {
	r.t.Helper()
	if opts.Timeouts.Reboot == 0 {
		opts.Timeouts = testTimeouts()
	}
	if opts.Registry == nil {
		opts.Registry = r.sim // the registries the simulated machine pulls from
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return windows.Join(ctx, r.machine, r.exec, r.cluster, opts)
}

func (r *rig) reset() (*windows.ResetReport, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return windows.Reset(ctx, r.machine, r.exec, r.cluster, windows.ResetOptions{Timeouts: testTimeouts()})
}

func (r *rig) node() *corev1.Node {
	r.t.Helper()
	n, err := r.cluster.cs.CoreV1().Nodes().Get(context.Background(), r.machine.Name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("node %s: %v", r.machine.Name, err)
	}
	return n
}

// checkNoProblems fails on any contract violation the machine saw.
func (r *rig) checkNoProblems() {
	r.t.Helper()
	if p := r.sim.Problems(); len(p) > 0 {
		r.t.Errorf("the simulated machine saw problems:\n%s", strings.Join(p, "\n"))
	}
}

// assertNoPassword fails when the password is anywhere under dir, or in
// any of the texts.
func assertNoPassword(t *testing.T, dir string, texts ...string) {
	t.Helper()
	assertNoSecrets(t, []string{testPassword}, dir, texts...)
}

// assertNoSecrets fails when one of secrets is anywhere under dir, or in
// any of the texts.
func assertNoSecrets(t *testing.T, secrets []string, dir string, texts ...string) {
	t.Helper()
	for i, s := range texts {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("text #%d holds the secret %q", i, secret)
			}
		}
	}
	if dir == "" {
		return
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, secret := range secrets {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret %q", path, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Errorf("%s holds no file to check", dir)
	}
}

func reportJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func stepNames(rep *windows.JoinReport) []string {
	var out []string
	for _, s := range rep.Steps {
		out = append(out, s.Name)
	}
	return out
}
