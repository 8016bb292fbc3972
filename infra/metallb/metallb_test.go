package metallb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/winconform/winconform/infra/kube"
)

func objectsOf(t *testing.T, img Images) map[string]*unstructured.Unstructured {
	t.Helper()
	m, err := Manifest(img)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(m)
	if err != nil {
		t.Fatalf("the manifest does not decode: %v\n%s", err, m)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		key := o.GetKind() + "/" + o.GetName()
		if _, dup := out[key]; dup {
			t.Errorf("%s twice", key)
		}
		out[key] = o
	}
	return out
}

func workload(t *testing.T, o *unstructured.Unstructured) appsv1.DeploymentSpec {
	t.Helper()
	var spec appsv1.DeploymentSpec // a DaemonSet's template and selector decode the same way
	spec.Template.Spec.Containers = nil
	raw, _, _ := unstructured.NestedMap(o.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		t.Fatalf("%s: %v", o.GetName(), err)
	}
	return spec
}

func TestManifest(t *testing.T) {
	for _, img := range []Images{LocalImages(), UpstreamImages()} {
		objs := objectsOf(t, img)
		policy := "IfNotPresent"
		if img.Local {
			policy = "Never"
		}
		for _, want := range []string{"Namespace/" + Namespace, "ServiceAccount/controller", "ServiceAccount/speaker",
			"Deployment/controller", "DaemonSet/speaker"} {
			if objs[want] == nil {
				t.Fatalf("the manifest has no %s", want)
			}
		}
		for key, o := range objs {
			if ns := o.GetNamespace(); o.GetKind() != "Namespace" && !strings.HasPrefix(o.GetKind(), "Cluster") && ns != Namespace {
				t.Errorf("%s is in namespace %q, want %s", key, ns, Namespace)
			}
		}
		ctrl := workload(t, objs["Deployment/controller"])
		c := ctrl.Template.Spec.Containers[0]
		if c.Image != img.Controller || string(c.ImagePullPolicy) != policy {
			t.Errorf("controller image %s (%s), want %s (%s)", c.Image, c.ImagePullPolicy, img.Controller, policy)
		}
		if !strings.Contains(strings.Join(c.Args, " "), "--webhook-mode=disabled") {
			t.Errorf("controller args %q: the webhook needs certificates the harness does not make", c.Args)
		}
		if ctrl.Template.Spec.ServiceAccountName != "controller" || ctrl.Template.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
			t.Errorf("controller pod spec %+v", ctrl.Template.Spec)
		}
		sp := workload(t, objs["DaemonSet/speaker"])
		s := sp.Template.Spec.Containers[0]
		if s.Image != img.Speaker || string(s.ImagePullPolicy) != policy {
			t.Errorf("speaker image %s (%s)", s.Image, s.ImagePullPolicy)
		}
		if !sp.Template.Spec.HostNetwork || s.SecurityContext == nil || len(s.SecurityContext.Capabilities.Add) != 1 || s.SecurityContext.Capabilities.Add[0] != "NET_RAW" {
			t.Errorf("the speaker answers ARP on the node's network: it needs the host network and NET_RAW (%+v)", s.SecurityContext)
		}
		env := map[string]string{}
		for _, e := range s.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env[e.Name] = e.ValueFrom.FieldRef.FieldPath
			}
		}
		if env["METALLB_NODE_NAME"] != "spec.nodeName" || env["METALLB_POD_NAME"] != "metadata.name" {
			t.Errorf("speaker env %v lacks its node and pod names", env)
		}
		tolerated := false
		for _, tol := range sp.Template.Spec.Tolerations {
			tolerated = tolerated || tol.Key == "node-role.kubernetes.io/control-plane"
		}
		if !tolerated {
			t.Error("the speaker does not run on the control plane: without memberlist, speakers must run on every node")
		}
		// Every binding names a role and a service account the manifest makes.
		for key, o := range objs {
			if !strings.HasSuffix(o.GetKind(), "Binding") {
				continue
			}
			kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
			name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			if objs[kind+"/"+name] == nil {
				t.Errorf("%s refers to %s/%s, which the manifest does not make", key, kind, name)
			}
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				sa := s.(map[string]any)
				if objs["ServiceAccount/"+sa["name"].(string)] == nil || sa["namespace"] != Namespace {
					t.Errorf("%s binds %v", key, sa)
				}
			}
		}
	}
	if _, err := Manifest(Images{}); err == nil {
		t.Error("a manifest without images")
	}
}

func TestPoolManifest(t *testing.T) {
	p, _ := ParsePool("172.18.255.200-172.18.255.250")
	m, err := PoolManifest(p, "winconform.io/underlay")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(m)
	if err != nil || len(objs) != 2 {
		t.Fatalf("pool manifest: %d objects, %v\n%s", len(objs), err, m)
	}
	pool, l2 := objs[0], objs[1]
	if pool.GetKind() != "IPAddressPool" || pool.GetAPIVersion() != GroupVersion || pool.GetNamespace() != Namespace || pool.GetName() != PoolName {
		t.Errorf("pool object %s %s %s/%s", pool.GetAPIVersion(), pool.GetKind(), pool.GetNamespace(), pool.GetName())
	}
	addrs, _, _ := unstructured.NestedStringSlice(pool.Object, "spec", "addresses")
	if len(addrs) != 1 || addrs[0] != "172.18.255.200-172.18.255.250" {
		t.Errorf("pool addresses %q", addrs)
	}
	pools, _, _ := unstructured.NestedStringSlice(l2.Object, "spec", "ipAddressPools")
	ifaces, _, _ := unstructured.NestedStringSlice(l2.Object, "spec", "interfaces")
	if l2.GetKind() != "L2Advertisement" || len(pools) != 1 || pools[0] != PoolName || len(ifaces) != 1 || ifaces[0] != "eth0" {
		t.Errorf("L2Advertisement %v announces %q on %q", l2.GetKind(), pools, ifaces)
	}
	// A node joined through the underlay is not on the Docker network's L2:
	// it must never be the one that answers ARP for a pool address (a CI
	// run's LoadBalancer spec found "no route to host" when it was).
	sels, _, _ := unstructured.NestedSlice(l2.Object, "spec", "nodeSelectors")
	if len(sels) != 1 {
		t.Fatalf("L2Advertisement nodeSelectors %v, want one that leaves out the underlay's nodes", sels)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sels[0].(map[string]any), &ls); err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]bool{"": true, "winconform.io/underlay=routed": false} {
		l, _ := labels.ConvertSelectorToLabelsMap(node)
		if got := sel.Matches(l); got != want {
			t.Errorf("a node labelled %q announces: %v, want %v", node, got, want)
		}
	}
	if m, _ := PoolManifest(p, ""); strings.Contains(string(m), "nodeSelectors") {
		t.Errorf("no label to leave out, yet nodeSelectors:\n%s", m)
	}
}

func writeCRD(t *testing.T, dir, name, kind string) {
	t.Helper()
	doc := "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name +
		"\nspec:\n  group: metallb.io\n  names:\n    kind: " + kind + "\n"
	if err := os.WriteFile(filepath.Join(dir, "metallb.io_"+name+".yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCRDs(t *testing.T) {
	mod := t.TempDir()
	bases := filepath.Join(mod, "config", "crd", "bases")
	if _, err := CRDs(mod); err == nil || !strings.Contains(err.Error(), "no CRDs under") {
		t.Errorf("an empty module: %v", err)
	}
	os.MkdirAll(bases, 0o755)
	writeCRD(t, bases, "l2advertisements", "L2Advertisement")
	if _, err := CRDs(mod); err == nil || !strings.Contains(err.Error(), "lack IPAddressPool") {
		t.Errorf("a module without IPAddressPool: %v", err)
	}
	writeCRD(t, bases, "ipaddresspools", "IPAddressPool")
	os.WriteFile(filepath.Join(bases, "kustomization.yaml"), []byte("resources: []\n"), 0o644) // not a metallb.io_ file
	out, err := CRDs(mod)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(out)
	if err != nil || len(objs) != 2 {
		t.Fatalf("CRDs: %d objects, %v", len(objs), err)
	}
	if objs[0].GetName() != "ipaddresspools" || objs[1].GetName() != "l2advertisements" {
		t.Errorf("CRDs out of order: %s, %s", objs[0].GetName(), objs[1].GetName())
	}
	os.WriteFile(filepath.Join(bases, "metallb.io_bogus.yaml"), []byte("kind: ConfigMap\n"), 0o644)
	if _, err := CRDs(mod); err == nil || !strings.Contains(err.Error(), "not a CustomResourceDefinition") {
		t.Errorf("a file that is not a CRD: %v", err)
	}
}

func TestWaitServed(t *testing.T) {
	dc := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{}}
	ctx := context.Background()
	err := waitServed(ctx, dc, 300*time.Millisecond, "ipaddresspools", "l2advertisements")
	if err == nil || !strings.Contains(err.Error(), "[ipaddresspools l2advertisements]") {
		t.Errorf("nothing served: %v", err)
	}
	dc.Resources = []*metav1.APIResourceList{{GroupVersion: GroupVersion, APIResources: []metav1.APIResource{{Name: "ipaddresspools"}}}}
	err = waitServed(ctx, dc, 300*time.Millisecond, "ipaddresspools", "l2advertisements")
	if err == nil || !strings.Contains(err.Error(), "[l2advertisements]") {
		t.Errorf("one served: %v", err)
	}
	dc.Resources[0].APIResources = append(dc.Resources[0].APIResources, metav1.APIResource{Name: "l2advertisements"})
	if err := waitServed(ctx, dc, 300*time.Millisecond, "ipaddresspools", "l2advertisements"); err != nil {
		t.Errorf("both served: %v", err)
	}
}

func poolObject(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": GroupVersion, "kind": "IPAddressPool",
		"metadata": map[string]any{"name": PoolName, "namespace": Namespace},
		"spec":     map[string]any{"addresses": []any{"172.18.255.176/28"}},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestWaitPool(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	lists := map[schema.GroupVersionResource]string{PoolResource: "IPAddressPoolList"}

	dyn := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(scheme, lists)
	if _, err := WaitPool(ctx, dyn, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("no pool: %v", err)
	}
	dyn = fakedynamic.NewSimpleDynamicClientWithCustomListKinds(scheme, lists, poolObject(nil))
	if _, err := WaitPool(ctx, dyn, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no status yet") {
		t.Errorf("a pool without status: %v", err)
	}
	dyn = fakedynamic.NewSimpleDynamicClientWithCustomListKinds(scheme, lists,
		poolObject(map[string]any{"availableIPv4": int64(0), "assignedIPv4": int64(0), "availableIPv6": int64(0), "assignedIPv6": int64(0)}))
	if _, err := WaitPool(ctx, dyn, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no IPv4 address") {
		t.Errorf("an empty pool: %v", err)
	}
	dyn = fakedynamic.NewSimpleDynamicClientWithCustomListKinds(scheme, lists,
		poolObject(map[string]any{"availableIPv4": int64(14), "assignedIPv4": int64(2), "availableIPv6": int64(0), "assignedIPv6": int64(0)}))
	st, err := WaitPool(ctx, dyn, time.Second)
	if err != nil || st != (PoolStatus{Available: 14, Assigned: 2}) {
		t.Errorf("a pool in use: %+v, %v", st, err)
	}
}

// TestModuleCRDs reads the real module (downloading it when the module cache
// lacks it): the recipe's assumptions about its layout hold.
func TestModuleCRDs(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MetalLB's module (the Go module proxy when it is not cached)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := ModuleDir(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(dir, "go.universe.tf/metallb@"+Version) {
		t.Errorf("module directory %s", dir)
	}
	data, err := CRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(data)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, o := range objs {
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		for _, v := range versions {
			v := v.(map[string]any)
			if v["served"] == true {
				served[plural+"/"+v["name"].(string)] = true
			}
		}
		if plural == "ipaddresspools" {
			// WaitPool reads the pool's status, which the controller writes.
			for _, v := range versions {
				props, _, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "status", "properties")
				if _, ok := props["availableIPv4"]; !ok {
					t.Error("IPAddressPool's status has no availableIPv4")
				}
			}
		}
	}
	// What the manifests use and what the controller and speaker watch.
	for _, want := range []string{"ipaddresspools/v1beta1", "l2advertisements/v1beta1", "bgppeers/v1beta2", "bgpadvertisements/v1beta1",
		"bfdprofiles/v1beta1", "communities/v1beta1", "servicel2statuses/v1beta1", "servicebgpstatuses/v1beta1"} {
		if !served[want] {
			t.Errorf("MetalLB %s's CRDs do not serve %s (served: %v)", Version, want, served)
		}
	}
}
