package windows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/infra/windows"
)

func TestAPIControlPlaneJoinCommand(t *testing.T) {
	ca, hash := testCA(t)
	cs := fake.NewClientset()
	cp := &windows.APIControlPlane{Rest: &rest.Config{Host: "https://203.0.113.7:6443", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, Client: cs}
	jc, err := cp.JoinCommand(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := jc.Validate(); err != nil {
		t.Fatalf("the join command is not valid: %v", err)
	}
	if jc.Endpoint != "203.0.113.7:6443" || len(jc.CACertHashes) != 1 || jc.CACertHashes[0] != hash {
		t.Errorf("join command %v, want endpoint 203.0.113.7:6443 and the CA's hash", jc)
	}
	if strings.Contains(jc.String(), jc.Token) {
		t.Error("the join command prints its token")
	}
	s, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Get(context.Background(), "bootstrap-token-"+jc.TokenID(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no bootstrap token Secret: %v", err)
	}
	id, secret, _ := strings.Cut(jc.Token, ".")
	if s.Type != corev1.SecretTypeBootstrapToken || s.StringData["token-id"] != id || s.StringData["token-secret"] != secret ||
		s.StringData["usage-bootstrap-authentication"] != "true" || s.StringData["usage-bootstrap-signing"] != "true" ||
		s.StringData["auth-extra-groups"] != "system:bootstrappers:kubeadm:default-node-token" {
		t.Errorf("bootstrap token Secret %+v", s.StringData)
	}
	exp, err := time.Parse(time.RFC3339, s.StringData["expiration"])
	if err != nil || time.Until(exp) > time.Hour || time.Until(exp) < 50*time.Minute {
		t.Errorf("expiration %q, want about an hour from now", s.StringData["expiration"])
	}
}

func TestAPIControlPlaneNeedsACA(t *testing.T) {
	cp := &windows.APIControlPlane{Rest: &rest.Config{Host: "https://203.0.113.7:6443"}, Client: fake.NewClientset(), Endpoint: "k8s.example:6443"}
	if _, err := cp.JoinCommand(context.Background()); err == nil || !strings.Contains(err.Error(), "no CA certificate") {
		t.Errorf("err = %v, want one saying the kubeconfig names no CA", err)
	}
}
