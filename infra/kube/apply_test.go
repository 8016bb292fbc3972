package kube

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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

const multiDoc = `# a leading comment
---
apiVersion: v1
kind: Namespace
metadata:
  name: kube-flannel
---
---

---
# only a comment in this document
# and another line of it
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: kube-flannel
data:
  net-conf.json: |
    {
      "Network": "10.244.0.0/16"
    }
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ds
  namespace: kube-flannel
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/os: linux
...
`

func TestObjects(t *testing.T) {
	objs, err := Objects([]byte(multiDoc))
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetAPIVersion()+" "+o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{
		"v1 Namespace /kube-flannel",
		"v1 ConfigMap kube-flannel/cfg",
		"apps/v1 DaemonSet kube-flannel/ds",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("objects = %q, want %q", got, want)
	}
	data, _, _ := unstructured.NestedString(objs[1].Object, "data", "net-conf.json")
	if !strings.Contains(data, `"Network": "10.244.0.0/16"`) {
		t.Errorf("block scalar mangled: %q", data)
	}
	sel, _, _ := unstructured.NestedString(objs[2].Object, "spec", "template", "spec", "nodeSelector", "kubernetes.io/os")
	if sel != "linux" {
		t.Errorf("nested field = %q", sel)
	}
}

func TestObjectsEmpty(t *testing.T) {
	for _, m := range []string{"", "\n\n", "---\n---\n", "# nothing\n", "---\n# c\n---\n\n"} {
		objs, err := Objects([]byte(m))
		if err != nil || len(objs) != 0 {
			t.Errorf("Objects(%q) = %d objects, %v", m, len(objs), err)
		}
	}
}

func TestObjectsErrors(t *testing.T) {
	noKind := `apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
metadata: {name: b}
`
	_, err := Objects([]byte(noKind))
	if err == nil || !strings.Contains(err.Error(), "manifest document 1 has no kind or apiVersion") {
		t.Errorf("document without kind: %v", err)
	}
	noVersion := "kind: Namespace\nmetadata: {name: a}\n"
	if _, err := Objects([]byte(noVersion)); err == nil || !strings.Contains(err.Error(), "manifest document 0 has no kind or apiVersion") {
		t.Errorf("document without apiVersion: %v", err)
	}
	if _, err := Objects([]byte("apiVersion: v1\nkind: [unclosed\n")); err == nil || !strings.Contains(err.Error(), "manifest document 0") {
		t.Errorf("bad YAML: %v", err)
	}
	if _, err := Objects([]byte("- a\n- b\n")); err == nil {
		t.Error("a YAML list was accepted as an object")
	}
	// A document larger than the decoder's buffer is an error, not a truncated object.
	huge := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  x: " + strings.Repeat("a", 1<<20+10) + "\n"
	if objs, err := Objects([]byte(huge)); err == nil {
		t.Errorf("a document over 1 MiB decoded to %d objects", len(objs))
	}
}

// fakeAPIServer answers discovery for v1 namespaces and configmaps and
// apps/v1 daemonsets, and records every PATCH.
type fakeAPIServer struct {
	mu      sync.Mutex
	patches []patch
}

func (f *fakeAPIServer) recorded() []patch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.patches)
}

type patch struct {
	Path, FieldManager, Force, ContentType string
	Body                                   map[string]any
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api":
		io.WriteString(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/apis":
		io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[
			{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get","patch"]},
			{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","patch"]}]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/apis/apps/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
			{"name":"daemonsets","singularName":"daemonset","namespaced":true,"kind":"DaemonSet","verbs":["get","patch"]}]}`)
	case r.Method == http.MethodPatch:
		body, _ := io.ReadAll(r.Body)
		p := patch{Path: r.URL.Path, FieldManager: r.URL.Query().Get("fieldManager"), Force: r.URL.Query().Get("force"), ContentType: r.Header.Get("Content-Type")}
		if err := json.Unmarshal(body, &p.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if p.Body["metadata"].(map[string]any)["name"] == "forbidden" {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"forbidden\" is forbidden","reason":"Forbidden","code":403}`)
			return
		}
		f.mu.Lock()
		f.patches = append(f.patches, p)
		f.mu.Unlock()
		w.Write(body)
	default:
		http.NotFound(w, r)
	}
}

func TestApply(t *testing.T) {
	api := &fakeAPIServer{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	if err := Apply(context.Background(), cfg, []byte(multiDoc), "winconform"); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	var paths []string
	patches := api.recorded()
	for _, p := range patches {
		paths = append(paths, p.Path)
		if p.FieldManager != "winconform" || p.Force != "true" {
			t.Errorf("%s: fieldManager %q force %q, want a forced server-side apply as winconform", p.Path, p.FieldManager, p.Force)
		}
		if p.ContentType != "application/apply-patch+yaml" {
			t.Errorf("%s: content type %q is not a server-side apply", p.Path, p.ContentType)
		}
	}
	want := []string{
		"/api/v1/namespaces/kube-flannel",
		"/api/v1/namespaces/kube-flannel/configmaps/cfg",
		"/apis/apps/v1/namespaces/kube-flannel/daemonsets/ds",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("applied %q, want in order %q", paths, want)
	}
	if len(patches) == 3 && patches[1].Body["kind"] != "ConfigMap" {
		t.Errorf("config map patch body = %v", patches[1].Body)
	}
}

func TestApplyErrors(t *testing.T) {
	api := &fakeAPIServer{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}

	unknown := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
	err := Apply(context.Background(), cfg, []byte(unknown), "winconform")
	if err == nil || !strings.HasPrefix(err.Error(), "Widget w: ") {
		t.Errorf("unknown kind: %v", err)
	}

	forbidden := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: forbidden, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after, namespace: x}\n"
	err = Apply(context.Background(), cfg, []byte(forbidden), "winconform")
	if err == nil || !strings.Contains(err.Error(), "apply ConfigMap forbidden: ") || !strings.Contains(err.Error(), "is forbidden") {
		t.Errorf("rejected patch: %v", err)
	}
	for _, p := range api.recorded() {
		if strings.HasSuffix(p.Path, "/after") {
			t.Error("Apply went on after a failure")
		}
	}

	// A manifest that does not decode is reported before any request.
	dead := &rest.Config{Host: "http://127.0.0.1:1"}
	if err := Apply(context.Background(), dead, []byte("kind: X\n"), "winconform"); err == nil || !strings.Contains(err.Error(), "no kind or apiVersion") {
		t.Errorf("bad manifest: %v", err)
	}
}
