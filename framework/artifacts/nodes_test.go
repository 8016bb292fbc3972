package artifacts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiServer stands in for the API server of a cluster with a Linux node
// that serves log queries from journald, a Windows node whose kubelet
// serves no queries (enableSystemLogQuery off: a directory listing), and a
// kube-proxy pod on the Linux node.
func apiServer(t *testing.T, secret string) kubernetes.Interface {
	t.Helper()
	nodes := map[string]*corev1.Node{
		"linux-1": {ObjectMeta: metav1.ObjectMeta{Name: "linux-1", Labels: map[string]string{corev1.LabelOSStable: "linux"}}},
		"win-1":   {ObjectMeta: metav1.ObjectMeta{Name: "win-1", Labels: map[string]string{corev1.LabelOSStable: "windows"}}},
	}
	proxy := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-abc", Namespace: "kube-system",
		OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "kube-proxy"}}},
		Spec: corev1.PodSpec{NodeName: "linux-1", Containers: []corev1.Container{{Name: "kube-proxy"}}}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/nodes/{name}", func(w http.ResponseWriter, r *http.Request) {
		n, ok := nodes[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(n)
	})
	mux.HandleFunc("/api/v1/nodes/{name}/proxy/logs/", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") == "win-1" {
			fmt.Fprint(w, "<!doctype html>\n<pre>\n<a href=\"kubelet/\">kubelet/</a>\n</pre>\n")
			return
		}
		fmt.Fprintf(w, "Nov 29 08:11:00 linux-1 %s[1]: I1129 08:11:00.000000 1 x.go:1] token %s\n", r.URL.Query().Get("query"), secret)
	})
	mux.HandleFunc("/api/v1/pods", func(w http.ResponseWriter, r *http.Request) {
		list := corev1.PodList{}
		if r.URL.Query().Get("fieldSelector") == "spec.nodeName=linux-1" {
			list.Items = append(list.Items, proxy)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("/api/v1/namespaces/kube-system/pods/kube-proxy-abc/log", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "I1129 08:11:01.000000 1 proxier.go:1] synced")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestTheBundleKeepsItsNodesAndSaysWhatItCouldNot(t *testing.T) {
	const secret = "SomeSecretPassword"
	cs := apiServer(t, secret)
	dir := t.TempDir()
	start := time.Now()
	files, unserved := CollectNodes(context.Background(), cs, Nodes{
		Names: []string{"linux-1", "win-1", "linux-1"},
		Since: time.Date(2026, 11, 29, 8, 10, 0, 0, time.UTC), Until: time.Date(2026, 11, 29, 8, 12, 0, 0, time.UTC),
		PerNode: 10 * time.Second,
	}, dir, NewRedactor(secret))
	if time.Since(start) > 20*time.Second {
		t.Errorf("the bundle took %s", time.Since(start))
	}
	for _, f := range []string{"nodes/linux-1/kubelet.log", "nodes/linux-1/containerd.log", "nodes/linux-1/pods/kube-system_kube-proxy-abc_kube-proxy.log", NotCollectedFile} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s not written: %v (wrote %v)", f, err, files)
			continue
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the secret:\n%s", f, data)
		}
	}
	missing, _ := os.ReadFile(filepath.Join(dir, NotCollectedFile))
	for _, want := range []string{"win-1: kubelet log: node win-1 serves no log query", "enableSystemLogQuery: true", "win-1: HNS state: no namespace"} {
		if !strings.Contains(string(missing), want) {
			t.Errorf("%s does not say %q:\n%s", NotCollectedFile, want, missing)
		}
	}
	if len(unserved) != 1 || unserved[0].Node != "win-1" {
		t.Errorf("unserved %v, want win-1 alone", unserved)
	}
	if _, err := os.Stat(filepath.Join(dir, "nodes/win-1/kubelet.log")); err == nil {
		t.Error("a directory listing was kept as win-1's kubelet log")
	}
}

// The HNS pod is a HostProcess pod on its node with the host's PowerShell
// and the script, as upstream's HostProcess specs and the documents
// describe one (hostNetwork, windowsOptions.hostProcess, a host account).
func TestHNSPod(t *testing.T) {
	p := HNSPod("win-1")
	sc := p.Spec.SecurityContext
	if p.Spec.NodeName != "win-1" || !p.Spec.HostNetwork || sc == nil || sc.WindowsOptions == nil || !*sc.WindowsOptions.HostProcess ||
		*sc.WindowsOptions.RunAsUserName != `NT AUTHORITY\SYSTEM` || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("not a HostProcess pod on win-1: %+v", p.Spec)
	}
	c := p.Spec.Containers[0]
	if !strings.HasSuffix(c.Command[0], `\powershell.exe`) || c.Command[len(c.Command)-1] != HNSScript || !strings.Contains(HNSScript, "Get-HnsEndpoint") {
		t.Errorf("command %q", c.Command)
	}
	if p.Spec.OS == nil || p.Spec.OS.Name != corev1.Windows {
		t.Errorf("spec.os %v", p.Spec.OS)
	}
}
