package windows

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"text/template"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/kube"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
)

// The objects PrepareControlPlane makes and looks at.
const (
	KubeProxyWindowsDaemonSet = "kube-proxy-windows"
	FlannelWindowsDaemonSet   = "kube-flannel-ds-windows"
	FlannelNamespace          = "kube-flannel"
	FlannelConfigMap          = "kube-flannel-cfg"
	// HostProcessImage is the image name (see images.Ref) the Windows
	// DaemonSets run: a minimal HostProcess image; the binaries are the
	// machine's.
	HostProcessImage = "windows-hostprocess"
)

// LinuxOnlyDaemonSets are the DaemonSets that must stay off Windows nodes
// (LIM-08), as namespace/name.
var LinuxOnlyDaemonSets = []string{"kube-system/kube-proxy", FlannelNamespace + "/kube-flannel-ds"}

//go:embed manifests/windows-node-services.yaml.tmpl
var manifestTemplate string

// The HostProcess start scripts, each after their shared helpers
// (hostprocess.ps1), as their ConfigMaps' run.ps1 holds them.
var (
	//go:embed manifests/hostprocess.ps1
	hostProcessHelpers string
	//go:embed manifests/kube-proxy-windows.ps1
	kubeProxyOwn string
	//go:embed manifests/flannel-windows.ps1
	flannelOwn string

	kubeProxyScript = hostProcessHelpers + "\n" + kubeProxyOwn
	flannelScript   = hostProcessHelpers + "\n" + flannelOwn
)

var manifest = template.Must(template.New("windows").Funcs(template.FuncMap{
	"indent": func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		s = strings.ReplaceAll(strings.TrimRight(s, "\n"), "\r\n", "\n")
		return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	},
}).Parse(manifestTemplate))

// PrepareOptions say what the Windows nodes' services need of the cluster.
type PrepareOptions struct {
	// APIServerEndpoint is the API server's host:port as the machines reach
	// it (required).
	APIServerEndpoint string
	// ServiceSubnet is the cluster's Service CIDR, such as 10.96.0.0/12
	// (required): pods reach Services there through the overlay.
	ServiceSubnet string
	// PodSubnet is flannel's network; read from kube-flannel-cfg when empty.
	PodSubnet string
	// VNI and Port are flannel's vxlan ones; read from kube-flannel-cfg when
	// zero. Windows needs VNI 4096 and port 4789.
	VNI, Port int
	// FieldManager is the server-side apply field manager; winconform when
	// empty.
	FieldManager string
	// Log receives progress lines.
	Log io.Writer
}

// NetworkName is the HNS network flannel's vxlan back end makes on Windows
// for a VNI.
func NetworkName(vni int) string { return fmt.Sprintf("flannel.%d", vni) }

// RenderManifest renders the Windows nodes' objects (PrepareControlPlane
// applies them): the kube-proxy-windows and kube-flannel-ds-windows
// HostProcess DaemonSets, their ConfigMaps and RBAC. Every field of opts but
// FieldManager and Log must be set.
func RenderManifest(opts PrepareOptions) ([]byte, error) {
	var problems []string
	if host, port, err := net.SplitHostPort(opts.APIServerEndpoint); err != nil || host == "" || port == "" {
		problems = append(problems, fmt.Sprintf("the API server endpoint %q is not host:port", opts.APIServerEndpoint))
	}
	for _, c := range []struct{ what, cidr string }{{"service subnet", opts.ServiceSubnet}, {"pod subnet", opts.PodSubnet}} {
		if _, _, err := net.ParseCIDR(c.cidr); err != nil {
			problems = append(problems, fmt.Sprintf("the %s %q is not a CIDR", c.what, c.cidr))
		}
	}
	if err := cni.ForWindows(cni.VXLAN, opts.VNI, opts.Port); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("windows: %s", strings.Join(problems, "; "))
	}
	cniConf, err := CNIConfig(opts.VNI, opts.PodSubnet, opts.ServiceSubnet)
	if err != nil {
		return nil, err
	}
	proxyArgs, err := nodeconfig.KubeProxyArgs(NetworkName(opts.VNI), opts.PodSubnet)
	if err != nil {
		return nil, err
	}
	// A JSON string is a YAML scalar, double-quoted.
	proxyArgsJSON, err := json.Marshal(proxyArgs)
	if err != nil {
		return nil, err
	}
	proxyArgsValue, err := json.Marshal(string(proxyArgsJSON))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = manifest.Execute(&buf, map[string]any{
		"KubeProxyArgs":   string(proxyArgsValue),
		"APIServer":       opts.APIServerEndpoint,
		"Image":           images.Ref(HostProcessImage),
		"NetworkName":     NetworkName(opts.VNI),
		"PodSubnet":       opts.PodSubnet,
		"VNI":             opts.VNI,
		"Port":            opts.Port,
		"CNIConfig":       cniConf,
		"KubeProxyScript": kubeProxyScript,
		"FlannelScript":   flannelScript,
	})
	return buf.Bytes(), err
}

// CNIConfig is the CNI configuration of a Windows node: flannel, delegating
// to win-overlay on the HNS v2 API (which containerd needs), with outbound
// NAT except to pods and Services, and Service traffic through the overlay.
func CNIConfig(vni int, podSubnet, serviceSubnet string) (string, error) {
	conf := map[string]any{
		"name":         NetworkName(vni),
		"cniVersion":   "0.3.0",
		"type":         "flannel",
		"capabilities": map[string]bool{"portMappings": true, "dns": true},
		"delegate": map[string]any{
			"type":       "win-overlay",
			"apiVersion": 2,
			"policies": []any{
				map[string]any{"name": "EndpointPolicy", "value": map[string]any{
					"Type": "OutBoundNAT", "Settings": map[string]any{"Exceptions": []string{podSubnet, serviceSubnet}},
				}},
				map[string]any{"name": "EndpointPolicy", "value": map[string]any{
					"Type": "SDNRoute", "Settings": map[string]any{"DestinationPrefix": serviceSubnet, "NeedEncap": true},
				}},
			},
		},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	return string(data), err
}

// flannelNetConf is the part of flannel's net-conf.json that matters here.
type flannelNetConf struct {
	Network string `json:"Network"`
	Backend struct {
		Type string `json:"Type"`
		VNI  int    `json:"VNI"`
		Port int    `json:"Port"`
	} `json:"Backend"`
}

// PrepareControlPlane readies the cluster for Windows nodes: it applies
// the Windows kube-proxy (kernel-space mode) and flannel (vxlan) HostProcess
// DaemonSets with their ConfigMaps and RBAC, and makes sure the Linux-only
// DaemonSets (kube-system/kube-proxy, kube-flannel/kube-flannel-ds) select
// kubernetes.io/os=linux, patching those that do not (LIM-08). It needs the
// kube-proxy and flannel ServiceAccounts and kube-flannel-cfg that kubeadm
// and the cluster's flannel made.
func PrepareControlPlane(ctx context.Context, restCfg *rest.Config, opts PrepareOptions) error {
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	for _, sa := range []struct{ ns, name, who string }{
		{metav1.NamespaceSystem, "kube-proxy", "kubeadm"},
		{FlannelNamespace, "flannel", "the cluster's flannel (infra/cni)"},
	} {
		if _, err := cs.CoreV1().ServiceAccounts(sa.ns).Get(ctx, sa.name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("windows: the ServiceAccount %s/%s, which %s makes, is needed for Windows nodes: %w", sa.ns, sa.name, sa.who, err)
		}
	}
	cm, err := cs.CoreV1().ConfigMaps(FlannelNamespace).Get(ctx, FlannelConfigMap, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("windows: flannel's configuration %s/%s: %w", FlannelNamespace, FlannelConfigMap, err)
	}
	var nc flannelNetConf
	if err := json.Unmarshal([]byte(cm.Data["net-conf.json"]), &nc); err != nil {
		return fmt.Errorf("windows: %s/%s: net-conf.json does not parse: %w", FlannelNamespace, FlannelConfigMap, err)
	}
	if !strings.EqualFold(nc.Backend.Type, cni.VXLAN) {
		return fmt.Errorf("windows: the cluster's flannel (%s/%s): %w", FlannelNamespace, FlannelConfigMap, cni.ForWindows(nc.Backend.Type, nc.Backend.VNI, nc.Backend.Port))
	}
	if opts.PodSubnet == "" {
		opts.PodSubnet = nc.Network
	}
	if opts.VNI == 0 {
		opts.VNI = nc.Backend.VNI
	}
	if opts.Port == 0 {
		opts.Port = nc.Backend.Port
	}
	if opts.FieldManager == "" {
		opts.FieldManager = "winconform"
	}
	data, err := RenderManifest(opts)
	if err != nil {
		return err
	}
	if err := kube.Apply(ctx, restCfg, data, opts.FieldManager); err != nil {
		return fmt.Errorf("windows: applying the Windows node services: %w", err)
	}
	logf("applied %s and %s (HostProcess, image %s, API server %s)", KubeProxyWindowsDaemonSet, FlannelWindowsDaemonSet, images.Ref(HostProcessImage), opts.APIServerEndpoint)
	patched, err := EnsureLinuxOnly(ctx, cs)
	for _, p := range patched {
		logf("daemonset %s now selects %s=linux", p, LabelOS)
	}
	return err
}

// EnsureLinuxOnly patches the Linux-only DaemonSets that lack the
// nodeSelector kubernetes.io/os=linux, and returns those it patched.
func EnsureLinuxOnly(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	patch := []byte(`{"spec":{"template":{"spec":{"nodeSelector":{"` + LabelOS + `":"linux"}}}}}`)
	var patched []string
	var errs []error
	for _, id := range LinuxOnlyDaemonSets {
		ns, name, _ := strings.Cut(id, "/")
		ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("daemonset %s: %w", id, err))
			continue
		}
		if ds.Spec.Template.Spec.NodeSelector[LabelOS] == "linux" {
			continue
		}
		if _, err := cs.AppsV1().DaemonSets(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("patching daemonset %s: %w", id, err))
			continue
		}
		patched = append(patched, id)
	}
	return patched, errors.Join(errs...)
}

// LinuxOnlyDaemonSetsProblems describes every way in which the Linux-only
// DaemonSets (kube-proxy, flannel's Linux agent) fail to stay off Windows
// nodes (LIM-08): a DaemonSet missing or without the nodeSelector
// kubernetes.io/os=linux, or one of its pods on (or Pending for) a Windows
// node. None when all is well.
func LinuxOnlyDaemonSetsProblems(ctx context.Context, cs kubernetes.Interface) []string {
	var problems []string
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelOS + "=windows"})
	if err != nil {
		return []string{"cannot list the Windows nodes: " + err.Error()}
	}
	windowsNodes := map[string]bool{}
	for _, n := range nodes.Items {
		windowsNodes[n.Name] = true
	}
	for _, id := range LinuxOnlyDaemonSets {
		ns, name, _ := strings.Cut(id, "/")
		ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			problems = append(problems, fmt.Sprintf("daemonset %s does not exist", id))
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("daemonset %s: %v", id, err))
			continue
		}
		if v, ok := ds.Spec.Template.Spec.NodeSelector[LabelOS]; !ok {
			problems = append(problems, fmt.Sprintf("daemonset %s has no nodeSelector %s=linux", id, LabelOS))
		} else if v != "linux" {
			problems = append(problems, fmt.Sprintf("daemonset %s selects %s=%s, not linux", id, LabelOS, v))
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			problems = append(problems, fmt.Sprintf("daemonset %s: cannot list its pods: %v", id, err))
			continue
		}
		for _, p := range pods.Items {
			if !ownedBy(&p, ds) {
				continue
			}
			target := p.Spec.NodeName
			if target == "" {
				target = daemonPodNode(&p)
			}
			if windowsNodes[target] {
				problems = append(problems, fmt.Sprintf("pod %s/%s of daemonset %s is %s on Windows node %s", p.Namespace, p.Name, id, p.Status.Phase, target))
			}
		}
	}
	return problems
}

func ownedBy(p *corev1.Pod, ds *appsv1.DaemonSet) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet" && (ref.UID == ds.UID || (ds.UID == "" && ref.Name == ds.Name))
}

// daemonPodNode is the node a DaemonSet pod is for before it is bound: the
// DaemonSet controller pins it with node affinity on metadata.name.
func daemonPodNode(p *corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
