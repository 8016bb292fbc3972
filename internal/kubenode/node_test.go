package kubenode

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// UpdateNode writes the node only when change changed it, and after a
// conflict reads it again and changes that.
func TestUpdateNode(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	updates, conflicts := 0, 1
	cs.PrependReactor("update", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		updates++
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", nil)
		}
		return false, nil, nil
	})
	reads := 0
	wrote, err := UpdateNode(ctx, cs, "n1", func(n *corev1.Node) (bool, error) {
		reads++
		n.Spec.Unschedulable = true
		return true, nil
	})
	if err != nil || !wrote || reads != 2 || updates != 2 {
		t.Errorf("UpdateNode after a conflict: wrote %v, err %v, %d reads, %d updates; want written on the second read", wrote, err, reads, updates)
	}
	if n, _ := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); !n.Spec.Unschedulable {
		t.Error("the change is not on the node")
	}
	updates = 0
	wrote, err = UpdateNode(ctx, cs, "n1", func(*corev1.Node) (bool, error) { return false, nil })
	if err != nil || wrote || updates != 0 {
		t.Errorf("UpdateNode with nothing to change: wrote %v, err %v, %d updates", wrote, err, updates)
	}
	if _, err := UpdateNode(ctx, cs, "gone", func(*corev1.Node) (bool, error) { return true, nil }); !apierrors.IsNotFound(err) {
		t.Errorf("UpdateNode of a node that is not there: %v", err)
	}
}
