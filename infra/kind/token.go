package kind

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// KindTokenID is the ID of the bootstrap token kind writes into the kubeadm
// configuration of every cluster it makes (abcdef.0123456789abcdef, valid
// for 24 hours): the same in every kind cluster, so anyone who reaches the
// API server can join a node with it. kind's own nodes have joined by the
// time kind create returns, and the harness makes a short-lived token of its
// own for each Windows machine it joins, so nothing needs it afterwards.
const KindTokenID = "abcdef"

// kindTokenSecret is the Secret that holds kind's token.
const kindTokenSecret = "bootstrap-token-" + KindTokenID

// tokenTimeout bounds DeleteKindToken; tokenRetry is its pause between
// tries (an API server that has just come up may still refuse a request).
var tokenTimeout, tokenRetry = 30 * time.Second, time.Second

// DeleteKindToken deletes kind's well-known bootstrap token. It reports
// whether there was one to delete; a token already gone is not an error.
// A refused request is tried again for up to 30 seconds; an error the API
// server gives for good (forbidden, say) ends it at once.
func DeleteKindToken(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	var deleted bool
	var last error
	err := wait.PollUntilContextTimeout(ctx, tokenRetry, tokenTimeout, true, func(ctx context.Context) (bool, error) {
		last = cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, kindTokenSecret, metav1.DeleteOptions{})
		switch err := last; {
		case err == nil:
			deleted = true
			return true, nil
		case apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err), apierrors.IsBadRequest(err), apierrors.IsInvalid(err):
			return false, err
		}
		return false, nil // refused: try again
	})
	if err != nil {
		if wait.Interrupted(err) && last != nil {
			err = last
		}
		return false, tokenError(err)
	}
	return deleted, nil
}

func tokenError(err error) error {
	return fmt.Errorf("deleting kind's default bootstrap token (Secret %s/%s), which lets anyone who reaches the API server join a node: %w",
		metav1.NamespaceSystem, kindTokenSecret, err)
}

// dropKindToken deletes kind's token and says so.
func (c *Cluster) dropKindToken(ctx context.Context, cs kubernetes.Interface) error {
	deleted, err := DeleteKindToken(ctx, cs)
	if err != nil {
		return err
	}
	if deleted {
		c.logf("deleted kind's default bootstrap token %s.* (the same in every kind cluster)", KindTokenID)
	}
	return nil
}
