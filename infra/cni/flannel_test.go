package cni

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/winconform/winconform/infra/kube"
)

func defaults() Flannel {
	return Flannel{Backend: VXLAN, VNI: WindowsVNI, Port: WindowsPort, PodSubnet: "10.244.0.0/16", Image: UpstreamFlannelImage}
}

func TestConstants(t *testing.T) {
	if WindowsVNI != 4096 || WindowsPort != 4789 {
		t.Errorf("Windows overlay needs VNI 4096 and port 4789, have %d and %d", WindowsVNI, WindowsPort)
	}
	if UpstreamFlannelImage != "ghcr.io/flannel-io/flannel:"+FlannelVersion {
		t.Errorf("UpstreamFlannelImage = %q", UpstreamFlannelImage)
	}
	semver := regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	for name, v := range map[string]string{"FlannelVersion": FlannelVersion, "PluginsVersion": PluginsVersion} {
		if !semver.MatchString(v) {
			t.Errorf("%s = %q is not a module version", name, v)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := defaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Flannel)
		field  string // "" means valid
	}{
		{"vni 0", func(f *Flannel) { f.VNI = 0 }, "cni.vni"},
		{"vni negative", func(f *Flannel) { f.VNI = -1 }, "cni.vni"},
		{"vni 2^24", func(f *Flannel) { f.VNI = 1 << 24 }, "cni.vni"},
		{"vni max", func(f *Flannel) { f.VNI = 1<<24 - 1 }, ""},
		{"vni 1", func(f *Flannel) { f.VNI = 1 }, ""},
		{"port 0", func(f *Flannel) { f.Port = 0 }, "cni.port"},
		{"port 65536", func(f *Flannel) { f.Port = 65536 }, "cni.port"},
		{"port 8472", func(f *Flannel) { f.Port = 8472 }, ""},
		{"backend udp", func(f *Flannel) { f.Backend = "udp" }, "cni.backend"},
		{"backend empty", func(f *Flannel) { f.Backend = "" }, "cni.backend"},
		{"backend VXLAN", func(f *Flannel) { f.Backend = "VXLAN" }, "cni.backend"},
		{"host-gw needs no vni or port", func(f *Flannel) { f.Backend, f.VNI, f.Port = HostGW, 0, 0 }, ""},
		{"pod subnet without prefix", func(f *Flannel) { f.PodSubnet = "10.244.0.0" }, "networking.podSubnet"},
		{"pod subnet empty", func(f *Flannel) { f.PodSubnet = "" }, "networking.podSubnet"},
		{"pod subnet garbage", func(f *Flannel) { f.PodSubnet = "10.244.0.0/33" }, "networking.podSubnet"},
		{"host-gw bad subnet", func(f *Flannel) { f.Backend = HostGW; f.PodSubnet = "x" }, "networking.podSubnet"},
		{"ipv6 subnet", func(f *Flannel) { f.PodSubnet = "fd00:10:244::/56" }, ""},
		{"no image", func(f *Flannel) { f.Image = "" }, "image"},
	} {
		f := defaults()
		tc.mutate(&f)
		err := f.Validate()
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && err == nil:
			t.Errorf("%s: %+v accepted", tc.name, f)
		case tc.field != "" && !strings.Contains(err.Error(), tc.field):
			t.Errorf("%s: error %q does not name %s", tc.name, err, tc.field)
		}
	}
}

func TestValidateMessagesSayTheFix(t *testing.T) {
	f := defaults()
	f.VNI = 0
	if err := f.Validate(); err == nil || !strings.HasPrefix(err.Error(), "cni.vni: 0 ") || !strings.Contains(err.Error(), "Windows nodes need 4096") {
		t.Errorf("vni: %v", err)
	}
	f = defaults()
	f.Port = 0
	if err := f.Validate(); err == nil || !strings.HasPrefix(err.Error(), "cni.port: 0 ") || !strings.Contains(err.Error(), "Windows nodes need 4789") {
		t.Errorf("port: %v", err)
	}
	f = defaults()
	f.Backend = "wireguard"
	if err := f.Validate(); err == nil || !strings.HasPrefix(err.Error(), `cni.backend: "wireguard"`) ||
		!strings.Contains(err.Error(), `"vxlan"`) || !strings.Contains(err.Error(), `"host-gw"`) {
		t.Errorf("backend: %v", err)
	}
	// The back end is checked before the subnet.
	f.PodSubnet = "nope"
	if err := f.Validate(); err == nil || !strings.HasPrefix(err.Error(), "cni.backend") {
		t.Errorf("bad backend and subnet: %v", err)
	}
}

// rendered is a decoded flannel manifest.
type rendered struct {
	objs      []*unstructured.Unstructured
	ns        corev1.Namespace
	sa        corev1.ServiceAccount
	role      rbacv1.ClusterRole
	binding   rbacv1.ClusterRoleBinding
	cm        corev1.ConfigMap
	ds        appsv1.DaemonSet
	netConf   map[string]any
	cniConfig map[string]any
}

func render(t *testing.T, f Flannel) rendered {
	t.Helper()
	manifest, err := f.Manifest()
	if err != nil {
		t.Fatalf("Manifest: %v", err)
	}
	objs, err := kube.Objects(manifest)
	if err != nil {
		t.Fatalf("the manifest does not decode: %v\n%s", err, manifest)
	}
	r := rendered{objs: objs}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
		var into any
		switch o.GetKind() {
		case "Namespace":
			into = &r.ns
		case "ServiceAccount":
			into = &r.sa
		case "ClusterRole":
			into = &r.role
		case "ClusterRoleBinding":
			into = &r.binding
		case "ConfigMap":
			into = &r.cm
		case "DaemonSet":
			into = &r.ds
		default:
			t.Fatalf("unexpected %s in the manifest", o.GetKind())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	// Namespace and RBAC first: a server-side apply in order must not refer
	// to what does not exist yet.
	want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds = %q, want %q", kinds, want)
	}
	if err := json.Unmarshal([]byte(r.cm.Data["net-conf.json"]), &r.netConf); err != nil {
		t.Fatalf("net-conf.json: %v\n%s", err, r.cm.Data["net-conf.json"])
	}
	if err := json.Unmarshal([]byte(r.cm.Data["cni-conf.json"]), &r.cniConfig); err != nil {
		t.Fatalf("cni-conf.json: %v\n%s", err, r.cm.Data["cni-conf.json"])
	}
	return r
}

func TestManifestDefaults(t *testing.T) {
	r := render(t, defaults())

	// net-conf.json: the vxlan back end Windows nodes join.
	if r.netConf["Network"] != "10.244.0.0/16" {
		t.Errorf("Network = %v", r.netConf["Network"])
	}
	if r.netConf["EnableNFTables"] != false {
		t.Errorf("EnableNFTables = %v", r.netConf["EnableNFTables"])
	}
	backend, _ := r.netConf["Backend"].(map[string]any)
	if backend["Type"] != "vxlan" || backend["VNI"] != float64(4096) || backend["Port"] != float64(4789) || len(backend) != 3 {
		t.Errorf("Backend = %v, want Type vxlan, VNI 4096, Port 4789", backend)
	}

	// cni-conf.json: flannel delegating to the bridge, and portmap.
	if r.cniConfig["name"] != "cbr0" || r.cniConfig["cniVersion"] != ConfigVersion || ConfigVersion != "0.4.0" {
		t.Errorf("cni-conf.json = %v", r.cniConfig)
	}
	plugins, _ := r.cniConfig["plugins"].([]any)
	if len(plugins) != 2 {
		t.Fatalf("plugins = %v", plugins)
	}
	fl, _ := plugins[0].(map[string]any)
	delegate, _ := fl["delegate"].(map[string]any)
	if fl["type"] != "flannel" || delegate["hairpinMode"] != true || delegate["isDefaultGateway"] != true {
		t.Errorf("flannel plugin = %v", fl)
	}
	pm, _ := plugins[1].(map[string]any)
	caps, _ := pm["capabilities"].(map[string]any)
	if pm["type"] != "portmap" || caps["portMappings"] != true {
		t.Errorf("portmap plugin = %v", pm)
	}

	// The DaemonSet runs on Linux nodes only, with the upstream image.
	ds := r.ds
	if ds.Namespace != "kube-flannel" || ds.Name != "kube-flannel-ds" {
		t.Errorf("DaemonSet %s/%s", ds.Namespace, ds.Name)
	}
	spec := ds.Spec.Template.Spec
	if len(spec.NodeSelector) != 1 || spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("nodeSelector = %v, want kubernetes.io/os=linux only", spec.NodeSelector)
	}
	if !spec.HostNetwork {
		t.Error("flannel must run in the host network")
	}
	if ds.Spec.Selector == nil || ds.Spec.Selector.MatchLabels["app"] != "flannel" || ds.Spec.Template.Labels["app"] != "flannel" {
		t.Errorf("selector %v does not match template labels %v", ds.Spec.Selector, ds.Spec.Template.Labels)
	}
	if len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
		t.Fatalf("containers: %d init, %d", len(spec.InitContainers), len(spec.Containers))
	}
	install, flanneld := spec.InitContainers[0], spec.Containers[0]
	for _, c := range []corev1.Container{install, flanneld} {
		if c.Image != UpstreamFlannelImage {
			t.Errorf("%s image = %q, want %q", c.Name, c.Image, UpstreamFlannelImage)
		}
		if c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s pull policy = %q, want IfNotPresent", c.Name, c.ImagePullPolicy)
		}
	}
	if want := []string{"cp", "-f", "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"}; !slices.Equal(install.Command, want) {
		t.Errorf("install-cni command = %q, want %q", install.Command, want)
	}
	if !slices.Contains(flanneld.Command, "--kube-subnet-mgr") || flanneld.Command[0] != "/opt/bin/flanneld" {
		t.Errorf("flanneld command = %q", flanneld.Command)
	}
	if caps := flanneld.SecurityContext.Capabilities; caps == nil || !slices.Contains(caps.Add, "NET_ADMIN") || !slices.Contains(caps.Add, "NET_RAW") {
		t.Errorf("flanneld capabilities = %+v", flanneld.SecurityContext)
	}

	// The install container copies from the config map's mount to the CNI
	// configuration directory, both of which it mounts.
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]string{}
	for _, m := range install.VolumeMounts {
		mounts[m.Name] = m.MountPath
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("install-cni mounts undeclared volume %s", m.Name)
		}
	}
	if !strings.HasPrefix(install.Command[2], mounts["flannel-cfg"]) || !strings.HasPrefix(install.Command[3], mounts["cni"]+"/") {
		t.Errorf("install-cni copies %s -> %s with mounts %v", install.Command[2], install.Command[3], mounts)
	}
	if cm := volumes["flannel-cfg"].ConfigMap; cm == nil || cm.Name != r.cm.Name {
		t.Errorf("flannel-cfg volume does not use config map %s: %+v", r.cm.Name, volumes["flannel-cfg"])
	}
	if hp := volumes["cni"].HostPath; hp == nil || hp.Path != "/etc/cni/net.d" {
		t.Errorf("cni volume = %+v", volumes["cni"])
	}
	for _, m := range flanneld.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("kube-flannel mounts undeclared volume %s", m.Name)
		}
	}

	// Namespace, service account and RBAC fit together.
	if r.ns.Name != "kube-flannel" || r.cm.Namespace != "kube-flannel" || r.sa.Namespace != "kube-flannel" {
		t.Errorf("namespaces: ns %s, cm %s, sa %s", r.ns.Name, r.cm.Namespace, r.sa.Namespace)
	}
	if r.ns.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
		t.Errorf("kube-flannel must allow host-network pods: labels %v", r.ns.Labels)
	}
	if spec.ServiceAccountName != r.sa.Name {
		t.Errorf("DaemonSet runs as %q, manifest makes service account %q", spec.ServiceAccountName, r.sa.Name)
	}
	if r.binding.RoleRef.Kind != "ClusterRole" || r.binding.RoleRef.Name != r.role.Name {
		t.Errorf("binding refers to %+v, role is %s", r.binding.RoleRef, r.role.Name)
	}
	if len(r.binding.Subjects) != 1 || r.binding.Subjects[0].Name != r.sa.Name || r.binding.Subjects[0].Namespace != r.sa.Namespace {
		t.Errorf("binding subjects %+v", r.binding.Subjects)
	}
	canPatchNodeStatus := false
	for _, rule := range r.role.Rules {
		if slices.Contains(rule.Resources, "nodes/status") && slices.Contains(rule.Verbs, "patch") {
			canPatchNodeStatus = true
		}
	}
	if !canPatchNodeStatus {
		t.Errorf("flannel cannot patch nodes/status (its VTEP annotations): %+v", r.role.Rules)
	}
}

func TestManifestHostGW(t *testing.T) {
	f := defaults()
	f.Backend = HostGW // VNI and Port stay set: they must not leak into host-gw
	r := render(t, f)
	backend, _ := r.netConf["Backend"].(map[string]any)
	if backend["Type"] != "host-gw" {
		t.Errorf("Backend = %v", backend)
	}
	if _, ok := backend["VNI"]; ok {
		t.Errorf("host-gw back end has a VNI: %v", backend)
	}
	if _, ok := backend["Port"]; ok {
		t.Errorf("host-gw back end has a Port: %v", backend)
	}
}

func TestManifestCustomValues(t *testing.T) {
	f := Flannel{Backend: VXLAN, VNI: 1, Port: 8472, PodSubnet: "10.10.0.0/16", Image: "registry.example:5000/flannel/flannel:v9"}
	r := render(t, f)
	backend, _ := r.netConf["Backend"].(map[string]any)
	if backend["VNI"] != float64(1) || backend["Port"] != float64(8472) {
		t.Errorf("Backend = %v", backend)
	}
	if r.netConf["Network"] != "10.10.0.0/16" {
		t.Errorf("Network = %v", r.netConf["Network"])
	}
	if img := r.ds.Spec.Template.Spec.Containers[0].Image; img != f.Image {
		t.Errorf("image = %q", img)
	}
}

func TestManifestLocalImage(t *testing.T) {
	f := defaults()
	f.Image, f.Local = "winconform.local/flannel:"+FlannelVersion, true
	r := render(t, f)
	spec := r.ds.Spec.Template.Spec
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		if c.Image != f.Image {
			t.Errorf("%s image = %q", c.Name, c.Image)
		}
		if c.ImagePullPolicy != corev1.PullNever {
			t.Errorf("%s pull policy = %q: a local image can never be pulled", c.Name, c.ImagePullPolicy)
		}
	}
	want := []string{"/opt/bin/install-conf", "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"}
	if got := spec.InitContainers[0].Command; !slices.Equal(got, want) {
		t.Errorf("install-cni command = %q, want %q", got, want)
	}
}

func TestManifestInvalid(t *testing.T) {
	f := defaults()
	f.PodSubnet = "bad"
	m, err := f.Manifest()
	if err == nil || m != nil {
		t.Fatalf("Manifest of an invalid config = %d bytes, %v", len(m), err)
	}
	if !strings.Contains(err.Error(), "networking.podSubnet") {
		t.Errorf("error %q does not name the field", err)
	}
}

func TestManifestIsDeterministic(t *testing.T) {
	a, err := defaults().Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		b, err := defaults().Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatal("two renderings of the same config differ")
		}
	}
	if bytes.Contains(a, []byte("<no value>")) {
		t.Error("the manifest has an unfilled template field")
	}
}

func TestPluginPackages(t *testing.T) {
	// BuildPlugins returns dir/<name>: go install names a binary after the
	// last element of its package path, so the two must agree.
	if len(pluginPackages) != 2 {
		t.Errorf("pluginPackages = %v, want flannel and bridge", pluginPackages)
	}
	for _, name := range []string{"flannel", "bridge"} {
		pkg, ok := pluginPackages[name]
		if !ok {
			t.Errorf("no %s plugin", name)
			continue
		}
		if pkg[strings.LastIndex(pkg, "/")+1:] != name {
			t.Errorf("plugin %s is built from %s, whose binary has another name", name, pkg)
		}
	}
}
