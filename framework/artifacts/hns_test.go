package artifacts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The Go side reads exactly what hns.ps1 prints: testdata/hns-*.json are
// the script's output under hns.Tests.ps1's mocks of the
// HostNetworkingService cmdlets, which that test holds the script to on
// the Windows runners. A full state has its three parts' objects, an
// empty host empty lists; a partial one says which could not be read and
// why, a line each.
func TestParseHNSReadsWhatTheScriptPrints(t *testing.T) {
	read := func(name string) HNS {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		h, err := ParseHNS(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return h
	}
	full := read("hns-full.json")
	if len(full.Networks.Objects) != 1 || len(full.Endpoints.Objects) != 2 || len(full.PolicyLists.Objects) != 1 || len(full.Unread()) != 0 {
		t.Errorf("the full state: %d networks, %d endpoints, %d policy lists, unread %q",
			len(full.Networks.Objects), len(full.Endpoints.Objects), len(full.PolicyLists.Objects), full.Unread())
	}
	var ep struct{ IPAddress, VirtualNetworkName string }
	if err := json.Unmarshal(full.Endpoints.Objects[0], &ep); err != nil || ep.IPAddress != "10.244.2.5" || ep.VirtualNetworkName != "vxlan0" {
		t.Errorf("the first endpoint as kept: %+v (%v)", ep, err)
	}
	if empty := read("hns-empty.json"); empty.Networks.Objects == nil || len(empty.Endpoints.Objects) != 0 || len(empty.Unread()) != 0 {
		t.Errorf("a host without networks: %+v", empty)
	}
	partial := read("hns-partial.json")
	want := []string{
		"HNS endpoints: Get-HnsEndpoint failed: HNS failed with error : The handle is invalid.",
		"HNS policy lists: Get-HnsPolicyList is not on this host",
	}
	if len(partial.Networks.Objects) != 1 || !slices.Equal(partial.Unread(), want) {
		t.Errorf("the partial state: %d networks, unread %q", len(partial.Networks.Objects), partial.Unread())
	}
	// The script's own names for what it could not read, as the fixture has them.
	for _, s := range []string{`"$cmdlet failed: `, `"$cmdlet is not on this host"`, "'networks', 'Get-HnsNetwork'", "'endpoints', 'Get-HnsEndpoint'", "'policyLists', 'Get-HnsPolicyList'"} {
		if !strings.Contains(HNSScript, s) {
			t.Errorf("hns.ps1 no longer says %s: the fixtures and this reader follow it", s)
		}
	}
}

// What is not the script's state is refused, with what is wrong.
func TestParseHNSRefusesOtherOutput(t *testing.T) {
	for in, want := range map[string]string{
		``:                                  "EOF",
		`hns.ps1: Access is denied`:         "invalid character",
		`{"networks": [], "endpoints": []}`: "no policyLists",
		`{"networks": [], "endpoints": [], "policyLists": [], "routes": []}`:          "unknown field",
		`{"networks": [1], "endpoints": [], "policyLists": []}`:                       "item 0 is not an object",
		`{"networks": {"value": [], "Count": 0}, "endpoints": [], "policyLists": []}`: "neither a list of objects nor a reason",
		`{"networks": "", "endpoints": [], "policyLists": []}`:                        "an empty string",
		`{"networks": [], "endpoints": [], "policyLists": []} {}`:                     "more after its object",
		`{"networks": [{"ID": "a"}], "endpoints": [], "policyLists": [`:               "unexpected EOF",
	} {
		if _, err := ParseHNS([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
}

// hnsServer stands in for the API server of a cluster with one Windows
// node, win-2, whose HNS pod prints out and succeeds.
func hnsServer(t *testing.T, out []byte) kubernetes.Interface {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/nodes/win-2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-2", Labels: map[string]string{corev1.LabelOSStable: "windows"}}})
	})
	mux.HandleFunc("/api/v1/nodes/win-2/proxy/logs/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html>\n<pre>\n<a href=\"kubelet/\">kubelet/</a>\n</pre>\n")
	})
	mux.HandleFunc("/api/v1/pods", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(corev1.PodList{})
	})
	// The pod's create, read and delete, whatever its name; its log is out.
	pod := func(w http.ResponseWriter, name string) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "wc-hns"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}})
	}
	mux.HandleFunc("POST /api/v1/namespaces/wc-hns/pods", func(w http.ResponseWriter, r *http.Request) { pod(w, "winconform-hns-x") })
	mux.HandleFunc("GET /api/v1/namespaces/wc-hns/pods/{name}", func(w http.ResponseWriter, r *http.Request) { pod(w, r.PathValue("name")) })
	mux.HandleFunc("DELETE /api/v1/namespaces/wc-hns/pods/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(metav1.Status{Status: metav1.StatusSuccess})
	})
	mux.HandleFunc("GET /api/v1/namespaces/wc-hns/pods/{name}/log", func(w http.ResponseWriter, r *http.Request) { w.Write(out) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A Windows node's bundle keeps what the HNS pod printed as hns.json, and
// says in not-collected.txt each part it could not read; output that is
// not the script's state is kept as hns.txt, and said.
func TestTheBundleKeepsTheHNSStateAndSaysWhatItLacks(t *testing.T) {
	partial, err := os.ReadFile(filepath.Join("testdata", "hns-partial.json"))
	if err != nil {
		t.Fatal(err)
	}
	collect := func(out []byte) (string, string) {
		t.Helper()
		dir := t.TempDir()
		CollectNodes(context.Background(), hnsServer(t, out), Nodes{Names: []string{"win-2"}, PerNode: 10 * time.Second,
			Since: time.Date(2026, 11, 29, 8, 10, 0, 0, time.UTC), Until: time.Date(2026, 11, 29, 8, 12, 0, 0, time.UTC),
			HNS: func(context.Context) (string, error) { return "wc-hns", nil }}, dir, NewRedactor())
		missing, _ := os.ReadFile(filepath.Join(dir, NotCollectedFile))
		return dir, string(missing)
	}
	dir, missing := collect(partial)
	if got, err := os.ReadFile(filepath.Join(dir, "nodes", "win-2", "hns.json")); err != nil || string(got) != string(partial) {
		t.Errorf("hns.json: %v\n%s", err, got)
	}
	for _, want := range []string{"win-2: HNS endpoints: Get-HnsEndpoint failed: HNS failed with error : The handle is invalid.", "win-2: HNS policy lists: Get-HnsPolicyList is not on this host"} {
		if !strings.Contains(missing, want) {
			t.Errorf("%s lacks %q:\n%s", NotCollectedFile, want, missing)
		}
	}
	dir, missing = collect([]byte("Import-Module : Access is denied\n"))
	if got, err := os.ReadFile(filepath.Join(dir, "nodes", "win-2", "hns.txt")); err != nil || !strings.Contains(string(got), "Access is denied") {
		t.Errorf("hns.txt: %v\n%s", err, got)
	}
	if _, err := os.Stat(filepath.Join(dir, "nodes", "win-2", "hns.json")); err == nil || !strings.Contains(missing, "win-2: HNS state: not the HNS state hns.ps1 prints") || !strings.Contains(missing, "hns.txt") {
		t.Errorf("output that is not the state: %s", missing)
	}
}
