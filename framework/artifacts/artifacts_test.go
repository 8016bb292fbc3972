package artifacts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestSlug(t *testing.T) {
	a := Slug("Secrets and ConfigMaps a Secret key is an environment variable windows")
	if !strings.HasPrefix(a, "secrets-and-configmaps-a-secret-key-is-an-environment-variable-windows-") || len(a) > 100 {
		t.Errorf("Slug = %q", a)
	}
	if b := Slug("Secrets and ConfigMaps a Secret key is an environment variable linux twin"); a == b {
		t.Error("two specs share a slug")
	}
	long := Slug(strings.Repeat("network matrix NET-07: a very long name ", 10))
	if len(long) > 90 || strings.Contains(long, "--") {
		t.Errorf("long slug %q", long)
	}
	if s := Slug(`volumes hostPath (C:\\etc\\foo) [read-only] <windows>`); strings.ContainsAny(s, `\ ()[]<>:`) {
		t.Errorf("slug %q keeps characters a path should not", s)
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("1f2d1e2e67df", " s3cr3t pass ", "ab", "")
	in := "password=1f2d1e2e67df token abcdef.0123456789abcdef and s3cr3t pass, ab stays"
	got := r.Redact(in)
	for _, leak := range []string{"1f2d1e2e67df", "abcdef.0123456789abcdef", "s3cr3t pass"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q leaks %q", got, leak)
		}
	}
	if !strings.Contains(got, "ab stays") {
		t.Errorf("a two-letter value was redacted everywhere: %q", got)
	}
}

func TestTheBundleKeepsTheNamespaceRedacted(t *testing.T) {
	const ns = "e2e-config-1"
	secret := "SomeSecretPassword"
	cs := fake.NewSimpleClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dbpass", Namespace: ns}, Data: map[string][]byte{"dbpass": []byte(secret)}},
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "consumer", Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe",
				Env: []corev1.EnvVar{{Name: "LEAK", Value: secret}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "probe", RestartCount: 1}}},
		},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: ns}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "consumer"},
			Type: "Warning", Reason: "BackOff", Message: "restarting failed container, password " + secret, LastTimestamp: metav1.NewTime(time.Unix(1700000000, 0))},
	)
	dir := t.TempDir()
	files, _, err := Bundle(context.Background(), cs, ns, dir, Nodes{})
	if err != nil {
		t.Logf("Bundle reported: %v", err) // the fake clientset's describer may miss some lookups
	}
	want := []string{"pods/consumer.yaml", "pods/consumer/probe.log", "pods/consumer/probe.previous.log", "events.txt"}
	for _, w := range want {
		path := filepath.Join(dir, w)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s not written (%v); wrote %v", w, err, files)
			continue
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the Secret's value:\n%s", w, data)
		}
	}
	events, _ := os.ReadFile(filepath.Join(dir, "events.txt"))
	if !strings.Contains(string(events), "Warning BackOff") || !strings.Contains(string(events), "pod/consumer: restarting failed container, password <redacted>") {
		t.Errorf("events.txt:\n%s", events)
	}
	pod, _ := os.ReadFile(filepath.Join(dir, "pods/consumer.yaml"))
	if !strings.Contains(string(pod), "value: <redacted>") {
		t.Errorf("the pod's YAML does not show the redacted value:\n%s", pod)
	}
}
