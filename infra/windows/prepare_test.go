package windows_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/kube"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
)

func prepareOptions() windows.PrepareOptions {
	return windows.PrepareOptions{APIServerEndpoint: "192.0.2.10:6443", ServiceSubnet: "10.96.0.0/12", PodSubnet: "10.244.0.0/16", VNI: 4096, Port: 4789}
}

func TestRenderManifest(t *testing.T) {
	t.Parallel()
	data, err := windows.RenderManifest(prepareOptions())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(data)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	byName := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		id := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
		kinds = append(kinds, id)
		byName[id] = o
	}
	want := []string{
		"ConfigMap kube-system/kube-proxy-windows",
		"ClusterRoleBinding /winconform:kube-proxy-windows",
		"DaemonSet kube-system/kube-proxy-windows",
		"ConfigMap kube-flannel/kube-flannel-windows-cfg",
		"ClusterRole /winconform:flannel-windows",
		"ClusterRoleBinding /winconform:flannel-windows",
		"DaemonSet kube-flannel/kube-flannel-ds-windows",
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("objects:\n%s\nwant\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}

	for _, id := range []string{"DaemonSet kube-system/kube-proxy-windows", "DaemonSet kube-flannel/kube-flannel-ds-windows"} {
		var ds appsv1.DaemonSet
		if err := runtimeConvert(byName[id], &ds); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		spec := ds.Spec.Template.Spec
		if spec.NodeSelector["kubernetes.io/os"] != "windows" {
			t.Errorf("%s: nodeSelector %v", id, spec.NodeSelector)
		}
		wo := spec.SecurityContext.WindowsOptions
		if wo == nil || wo.HostProcess == nil || !*wo.HostProcess || wo.RunAsUserName == nil || *wo.RunAsUserName != `NT AUTHORITY\SYSTEM` || !spec.HostNetwork {
			t.Errorf("%s: not a HostProcess pod: %+v hostNetwork=%t", id, wo, spec.HostNetwork)
		}
		if ds.Spec.Selector.MatchLabels["app"] == "flannel" || ds.Spec.Selector.MatchLabels["k8s-app"] == "kube-proxy" {
			t.Errorf("%s selects the Linux DaemonSet's pods", id)
		}
		c := spec.Containers[0]
		if c.Image != images.Ref("windows-hostprocess") || !strings.HasSuffix(c.Command[0], `powershell.exe`) {
			t.Errorf("%s: image %s command %v", id, c.Image, c.Command)
		}
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		if env["KUBE_API_SERVER"] != "192.0.2.10:6443" || env["KUBE_NETWORK"] != "flannel.4096" {
			t.Errorf("%s: env %v", id, env)
		}
	}
	var kp, fl appsv1.DaemonSet
	_ = runtimeConvert(byName["DaemonSet kube-system/kube-proxy-windows"], &kp)
	_ = runtimeConvert(byName["DaemonSet kube-flannel/kube-flannel-ds-windows"], &fl)
	if kp.Spec.Template.Spec.ServiceAccountName != "kube-proxy" || fl.Spec.Template.Spec.ServiceAccountName != "flannel" {
		t.Errorf("service accounts %q, %q", kp.Spec.Template.Spec.ServiceAccountName, fl.Spec.Template.Spec.ServiceAccountName)
	}
	if vols := fl.Spec.Template.Spec.Volumes; !slices.ContainsFunc(vols, func(v corev1.Volume) bool {
		return v.ConfigMap != nil && v.ConfigMap.Name == "kube-flannel-cfg"
	}) {
		t.Errorf("Windows flannel does not read the cluster's kube-flannel-cfg: %v", vols)
	}

	// kube-proxy: the flags nodeconfig composes (and its tests judge with
	// kube-proxy's own), in the container's KUBE_PROXY_ARGS; run.ps1 adds
	// the node's name and its source VIP.
	var kpcm corev1.ConfigMap
	_ = runtimeConvert(byName["ConfigMap kube-system/kube-proxy-windows"], &kpcm)
	for _, want := range []string{"$env:KUBE_PROXY_ARGS", "--hostname-override=$env:NODE_NAME", "--source-vip=", "C:\\k\\kube-proxy.exe"} {
		if !strings.Contains(kpcm.Data["run.ps1"], want) {
			t.Errorf("kube-proxy's run.ps1 lacks %q", want)
		}
	}
	var got []string
	for _, e := range kp.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "KUBE_PROXY_ARGS" {
			if err := json.Unmarshal([]byte(e.Value), &got); err != nil {
				t.Errorf("KUBE_PROXY_ARGS %q: %v", e.Value, err)
			}
		}
	}
	if want, _ := nodeconfig.KubeProxyArgs("flannel.4096", "10.244.0.0/16"); !slices.Equal(got, want) {
		t.Errorf("KUBE_PROXY_ARGS %q, want %q", got, want)
	}
	// flannel: the win-overlay CNI configuration of VNI 4096.
	var flcm corev1.ConfigMap
	_ = runtimeConvert(byName["ConfigMap kube-flannel/kube-flannel-windows-cfg"], &flcm)
	var conf struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Delegate struct {
			Type       string `json:"type"`
			APIVersion int    `json:"apiVersion"`
			Policies   []struct {
				Value struct {
					Type     string         `json:"Type"`
					Settings map[string]any `json:"Settings"`
				} `json:"value"`
			} `json:"policies"`
		} `json:"delegate"`
	}
	if err := json.Unmarshal([]byte(flcm.Data["cni-conf.json"]), &conf); err != nil {
		t.Fatalf("cni-conf.json: %v", err)
	}
	if conf.Name != "flannel.4096" || conf.Type != "flannel" || conf.Delegate.Type != "win-overlay" || conf.Delegate.APIVersion != 2 || len(conf.Delegate.Policies) != 2 {
		t.Errorf("CNI configuration %+v", conf)
	}
	if ex := conf.Delegate.Policies[0].Value.Settings["Exceptions"]; !strings.Contains(jsonString(ex), "10.244.0.0/16") || !strings.Contains(jsonString(ex), "10.96.0.0/12") {
		t.Errorf("OutBoundNAT exceptions %v", ex)
	}
	if !strings.Contains(flcm.Data["run.ps1"], "--kube-subnet-mgr") || !strings.Contains(flcm.Data["run.ps1"], "C:\\k\\flanneld.exe") {
		t.Error("flannel's run.ps1 does not start flanneld")
	}
}

func TestRenderManifestRefusesWhatWindowsCannotUse(t *testing.T) {
	t.Parallel()
	o := prepareOptions()
	o.VNI = 1
	if _, err := windows.RenderManifest(o); err == nil || !strings.Contains(err.Error(), "VNI 4096") {
		t.Errorf("VNI 1: %v", err)
	}
	o = prepareOptions()
	o.APIServerEndpoint = "192.0.2.10"
	o.ServiceSubnet = "nope"
	if _, err := windows.RenderManifest(o); err == nil || !strings.Contains(err.Error(), "host:port") || !strings.Contains(err.Error(), "service subnet") {
		t.Errorf("bad endpoint and subnet: %v", err)
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

func runtimeConvert(u *unstructured.Unstructured, into any) error {
	if u == nil {
		return io.ErrUnexpectedEOF
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

func linuxDaemonSet(ns, name string, selector map[string]string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(name + "-uid")},
		Spec:       appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: selector}}},
	}
}

func TestLinuxOnlyDaemonSets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	isController := true
	pendingOnWindows := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-abcde", Namespace: "kube-system", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "kube-proxy", UID: "kube-proxy-uid", Controller: &isController}}},
		Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"win-a"}}}}},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	cs := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-a", Labels: map[string]string{"kubernetes.io/os": "windows"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "linux-a", Labels: map[string]string{"kubernetes.io/os": "linux"}}},
		linuxDaemonSet("kube-system", "kube-proxy", nil),
		linuxDaemonSet("kube-flannel", "kube-flannel-ds", map[string]string{"kubernetes.io/os": "linux"}),
		pendingOnWindows,
	)
	problems := windows.LinuxOnlyDaemonSetsProblems(ctx, cs)
	wantProblems := []string{
		"daemonset kube-system/kube-proxy has no nodeSelector kubernetes.io/os=linux",
		"pod kube-system/kube-proxy-abcde of daemonset kube-system/kube-proxy is Pending on Windows node win-a",
	}
	if !slices.Equal(problems, wantProblems) {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(wantProblems, "\n"))
	}

	patched, err := windows.EnsureLinuxOnly(ctx, cs)
	if err != nil || !slices.Equal(patched, []string{"kube-system/kube-proxy"}) {
		t.Fatalf("EnsureLinuxOnly = %v, %v", patched, err)
	}
	ds, _ := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
	if ds.Spec.Template.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("kube-proxy's nodeSelector after the patch: %v", ds.Spec.Template.Spec.NodeSelector)
	}
	// The DaemonSet controller would now delete the pod for the Windows node.
	_ = cs.CoreV1().Pods("kube-system").Delete(ctx, pendingOnWindows.Name, metav1.DeleteOptions{})
	if p := windows.LinuxOnlyDaemonSetsProblems(ctx, cs); len(p) != 0 {
		t.Errorf("problems after the patch: %v", p)
	}
	if patched, _ := windows.EnsureLinuxOnly(ctx, cs); len(patched) != 0 {
		t.Errorf("a second EnsureLinuxOnly patched %v", patched)
	}

	missing := fake.NewClientset()
	if p := windows.LinuxOnlyDaemonSetsProblems(ctx, missing); len(p) != 2 || !strings.Contains(p[0], "does not exist") {
		t.Errorf("no DaemonSets: %v", p)
	}
}

// apiServer is enough of an API server for PrepareControlPlane: discovery,
// the objects it reads, server-side apply and patches, all recorded.
type apiServer struct {
	mu       sync.Mutex
	requests []string
	applied  map[string]map[string]any
	patches  map[string]string
	netConf  string
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	a.requests = append(a.requests, r.Method+" "+r.URL.Path)
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == "/api":
		io.WriteString(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`)
	case r.Method == http.MethodGet && p == "/apis":
		io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[
			{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
			{"name":"rbac.authorization.k8s.io","versions":[{"groupVersion":"rbac.authorization.k8s.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"rbac.authorization.k8s.io/v1","version":"v1"}}]}`)
	case r.Method == http.MethodGet && p == "/api/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[
			{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","patch"]},
			{"name":"serviceaccounts","singularName":"serviceaccount","namespaced":true,"kind":"ServiceAccount","verbs":["get"]}]}`)
	case r.Method == http.MethodGet && p == "/apis/apps/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
			{"name":"daemonsets","singularName":"daemonset","namespaced":true,"kind":"DaemonSet","verbs":["get","patch"]}]}`)
	case r.Method == http.MethodGet && p == "/apis/rbac.authorization.k8s.io/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"rbac.authorization.k8s.io/v1","resources":[
			{"name":"clusterroles","singularName":"clusterrole","namespaced":false,"kind":"ClusterRole","verbs":["get","patch"]},
			{"name":"clusterrolebindings","singularName":"clusterrolebinding","namespaced":false,"kind":"ClusterRoleBinding","verbs":["get","patch"]}]}`)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/api/v1/namespaces/") && strings.Contains(p, "/serviceaccounts/"):
		parts := strings.Split(p, "/")
		json.NewEncoder(w).Encode(corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: parts[6], Namespace: parts[4]}})
	case r.Method == http.MethodGet && p == "/api/v1/namespaces/kube-flannel/configmaps/kube-flannel-cfg":
		json.NewEncoder(w).Encode(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "kube-flannel-cfg", Namespace: "kube-flannel"}, Data: map[string]string{"net-conf.json": a.netConf}})
	case r.Method == http.MethodGet && p == "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy":
		ds := linuxDaemonSet("kube-system", "kube-proxy", nil)
		ds.TypeMeta = metav1.TypeMeta{Kind: "DaemonSet", APIVersion: "apps/v1"}
		json.NewEncoder(w).Encode(ds)
	case r.Method == http.MethodGet && p == "/apis/apps/v1/namespaces/kube-flannel/daemonsets/kube-flannel-ds":
		ds := linuxDaemonSet("kube-flannel", "kube-flannel-ds", map[string]string{"kubernetes.io/os": "linux"})
		ds.TypeMeta = metav1.TypeMeta{Kind: "DaemonSet", APIVersion: "apps/v1"}
		json.NewEncoder(w).Encode(ds)
	case r.Method == http.MethodPatch:
		body, _ := io.ReadAll(r.Body)
		ct := r.Header.Get("Content-Type")
		if ct == string(types.ApplyYAMLPatchType) {
			var obj map[string]any
			if err := json.Unmarshal(body, &obj); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			a.applied[p] = obj
			w.Write(body)
			return
		}
		a.patches[p] = ct + " " + string(body)
		ds := linuxDaemonSet("kube-system", "kube-proxy", map[string]string{"kubernetes.io/os": "linux"})
		ds.TypeMeta = metav1.TypeMeta{Kind: "DaemonSet", APIVersion: "apps/v1"}
		json.NewEncoder(w).Encode(ds)
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
}

func TestPrepareControlPlane(t *testing.T) {
	t.Parallel()
	api := &apiServer{applied: map[string]map[string]any{}, patches: map[string]string{},
		netConf: `{"Network": "10.244.0.0/16", "EnableNFTables": false, "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}`}
	srv := httptest.NewServer(api)
	defer srv.Close()
	var log strings.Builder
	err := windows.PrepareControlPlane(context.Background(), &rest.Config{Host: srv.URL}, windows.PrepareOptions{
		APIServerEndpoint: "192.0.2.10:6443", ServiceSubnet: "10.96.0.0/12", Log: &log,
	})
	if err != nil {
		t.Fatalf("PrepareControlPlane: %v", err)
	}
	for _, path := range []string{
		"/api/v1/namespaces/kube-system/configmaps/kube-proxy-windows",
		"/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy-windows",
		"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/winconform:kube-proxy-windows",
		"/api/v1/namespaces/kube-flannel/configmaps/kube-flannel-windows-cfg",
		"/apis/rbac.authorization.k8s.io/v1/clusterroles/winconform:flannel-windows",
		"/apis/apps/v1/namespaces/kube-flannel/daemonsets/kube-flannel-ds-windows",
	} {
		if _, ok := api.applied[path]; !ok {
			t.Errorf("not applied: %s", path)
		}
	}
	// The pod subnet came from kube-flannel-cfg.
	cm := api.applied["/api/v1/namespaces/kube-flannel/configmaps/kube-flannel-windows-cfg"]
	if !strings.Contains(jsonString(cm), `10.244.0.0/16`) {
		t.Errorf("the Windows CNI configuration lacks the pod subnet")
	}
	// kube-proxy lacked its Linux nodeSelector: patched; flannel had it.
	if p := api.patches["/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy"]; !strings.Contains(p, `"kubernetes.io/os":"linux"`) || !strings.HasPrefix(p, string(types.StrategicMergePatchType)) {
		t.Errorf("kube-proxy patch: %q", p)
	}
	if _, ok := api.patches["/apis/apps/v1/namespaces/kube-flannel/daemonsets/kube-flannel-ds"]; ok || len(api.patches) != 1 {
		t.Errorf("patches: %v", api.patches)
	}
	if !strings.Contains(log.String(), "kube-system/kube-proxy now selects kubernetes.io/os=linux") {
		t.Errorf("log: %s", log.String())
	}

	// A host-gw flannel cannot take Windows nodes.
	api.netConf = `{"Network": "10.244.0.0/16", "Backend": {"Type": "host-gw"}}`
	err = windows.PrepareControlPlane(context.Background(), &rest.Config{Host: srv.URL}, windows.PrepareOptions{APIServerEndpoint: "192.0.2.10:6443", ServiceSubnet: "10.96.0.0/12"})
	if err == nil || !strings.Contains(err.Error(), `"host-gw"`) {
		t.Errorf("host-gw: %v", err)
	}
}
