package kind

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func tokenSecret(id string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{"token-id": id, "token-secret": "0123456789abcdef"},
	}
}

func TestDeleteKindTokenLeavesOtherTokens(t *testing.T) {
	// kind's token, and one the harness made for a join.
	cs := fake.NewClientset(tokenSecret("abcdef"), tokenSecret("w1n2c3"))
	deleted, err := DeleteKindToken(context.Background(), cs)
	if err != nil || !deleted {
		t.Fatalf("DeleteKindToken = %t, %v; want true, nil", deleted, err)
	}
	if _, err := cs.CoreV1().Secrets("kube-system").Get(context.Background(), "bootstrap-token-abcdef", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kind's token is still there: %v", err)
	}
	if _, err := cs.CoreV1().Secrets("kube-system").Get(context.Background(), "bootstrap-token-w1n2c3", metav1.GetOptions{}); err != nil {
		t.Errorf("another token was touched: %v", err)
	}
	// On reuse the token is gone already: nothing to do, no error.
	deleted, err = DeleteKindToken(context.Background(), cs)
	if err != nil || deleted {
		t.Errorf("second DeleteKindToken = %t, %v; want false, nil", deleted, err)
	}
}

func TestDeleteKindTokenRetriesARefusal(t *testing.T) {
	cs := fake.NewClientset(tokenSecret("abcdef"))
	calls := 0
	cs.PrependReactor("delete", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls == 1 {
			return true, nil, apierrors.NewServiceUnavailable("the API server is starting")
		}
		return false, nil, nil
	})
	defer func(d time.Duration) { tokenRetry = d }(tokenRetry)
	tokenRetry = time.Millisecond
	deleted, err := DeleteKindToken(context.Background(), cs)
	if err != nil || !deleted || calls != 2 {
		t.Errorf("DeleteKindToken = %t, %v after %d calls; want true, nil after 2", deleted, err, calls)
	}
}

func TestDeleteKindTokenForbidden(t *testing.T) {
	cs := fake.NewClientset(tokenSecret("abcdef"))
	calls := 0
	cs.PrependReactor("delete", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "bootstrap-token-abcdef", errors.New("no RBAC"))
	})
	_, err := DeleteKindToken(context.Background(), cs)
	if err == nil || calls != 1 || !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v after %d calls, want a forbidden error at once", err, calls)
	}
	if !strings.Contains(err.Error(), "kube-system/bootstrap-token-abcdef") {
		t.Errorf("error %q does not name the Secret", err)
	}
}

func TestDeleteKindTokenGivesUp(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("delete", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("down")
	})
	defer func(d, r time.Duration) { tokenTimeout, tokenRetry = d, r }(tokenTimeout, tokenRetry)
	tokenTimeout, tokenRetry = 50*time.Millisecond, 5*time.Millisecond
	start := time.Now()
	if _, err := DeleteKindToken(context.Background(), cs); err == nil || !apierrors.IsServiceUnavailable(err) {
		t.Errorf("err = %v, want the last refusal", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %s, the timeout is 50ms", d)
	}
}
