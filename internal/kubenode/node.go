// Package kubenode changes a Node object: one read-change-write, made again on a conflict.
package kubenode

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// UpdateNode reads node name, lets change edit it, and writes it back when
// change says it changed something; a write that lost to another writer
// (a conflict) is made again from a fresh read (client-go's
// RetryOnConflict). It reports whether the node was written.
func UpdateNode(ctx context.Context, cs kubernetes.Interface, name string, change func(*corev1.Node) (bool, error)) (bool, error) {
	var changed bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		changed = false
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if changed, err = change(n); err != nil || !changed {
			return err
		}
		_, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	return changed, err
}
