package kind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
)

// A local cluster records the shape it was made from (the cluster file with
// the flags' overrides: name, Kubernetes version, CNI back end, ...) in a
// ConfigMap, so that up and e2e reuse a cluster only when it has the shape
// they are asked for, and otherwise say so and how to delete it.
const (
	shapeNamespace = metav1.NamespaceSystem
	shapeConfigMap = "winconform-cluster-shape"
	shapeHashKey   = "sha256"
	shapeConfigKey = "config.json"
)

// shapeOf is the shape of cfg, as canonical JSON, and its SHA-256. What
// does not change what the cluster is (how long up waits for it, whether
// the node image may be built here) is left out.
func shapeOf(cfg Config) (data []byte, hash string) {
	cfg.ReadyTimeout.Duration = 0
	cfg.NodeImageBuild = ""
	data, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // a Config always marshals
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:])
}

// RecordShape writes cfg's shape into the cluster cs serves.
func RecordShape(ctx context.Context, cs kubernetes.Interface, cfg Config) error {
	config, hash := shapeOf(cfg)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: shapeConfigMap, Namespace: shapeNamespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "winconform"}},
		Data: map[string]string{shapeHashKey: hash, shapeConfigKey: string(config)},
	}
	_, err := cs.CoreV1().ConfigMaps(shapeNamespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(shapeNamespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	return err
}

// CheckExistingShape compares the shape the existing local cluster named
// cfg.Name records with cfg's. A cluster that does not answer is left to
// up, which says it is not healthy.
func CheckExistingShape(ctx context.Context, cfg Config, log io.Writer) error {
	kc, err := cluster.NewProvider(cluster.ProviderWithDocker()).KubeConfig(cfg.Name, false)
	if err != nil {
		return nil
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(kc))
	if err != nil {
		return nil
	}
	rc.Timeout = 30 * time.Second
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil
	}
	return CompareShape(ctx, cs, cfg, log)
}

// CompareShape refuses a cluster whose recorded shape is not cfg's, or
// that records none, naming the fields that differ and the fix.
func CompareShape(ctx context.Context, cs kubernetes.Interface, cfg Config, log io.Writer) error {
	fix := fmt.Sprintf("delete it with `winconform down --name %s` (make down) and run again, or give this shape another --name", cfg.Name)
	cm, err := cs.CoreV1().ConfigMaps(shapeNamespace).Get(ctx, shapeConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("cluster %q exists but records no shape (made by hand, or by a winconform before clusters recorded theirs), so it may not be what was asked for: %s", cfg.Name, fix)
	case err != nil:
		return nil // not answering: up says the cluster is not healthy
	}
	config, hash := shapeOf(cfg)
	if cm.Data[shapeHashKey] == hash {
		fmt.Fprintf(log, "cluster %q exists and was made from the same shape (%s %s): reusing it\n", cfg.Name, shapeHashKey, hash[:12])
		return nil
	}
	diff := shapeDiff([]byte(cm.Data[shapeConfigKey]), config)
	return fmt.Errorf("cluster %q exists but was made from another shape (%s): %s", cfg.Name, diff, fix)
}

// shapeDiff names the fields of two shapes that differ: "kubernetesVersion
// v1.36.3 there, v1.37.2 asked for".
func shapeDiff(there, here []byte) string {
	var a, b map[string]any
	if json.Unmarshal(there, &a) != nil || json.Unmarshal(here, &b) != nil {
		return "its recorded shape cannot be read"
	}
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", a, fa)
	flatten("", b, fb)
	keys := slices.Sorted(maps.Keys(fa))
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range slices.Compact(keys) {
		if fa[k] != fb[k] {
			out = append(out, fmt.Sprintf("%s %s there, %s asked for", k, orNone(fa[k]), orNone(fb[k])))
		}
	}
	if len(out) == 0 {
		return "a field this winconform does not know"
	}
	return strings.Join(out, "; ")
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// flatten writes v's leaves into out by their dotted paths.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	data, _ := json.Marshal(v)
	out[prefix] = strings.Trim(string(data), `"`)
}
