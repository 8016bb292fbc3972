package suiterun

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// RunLabel is the label the suites put on the cluster-scoped objects a run
// makes (framework/e2e.RunLabel); namespaces also carry the e2e framework's
// e2e-run label with the same ID.
const (
	RunLabel    = "winconform.io/run"
	E2ERunLabel = "e2e-run"
)

// Left is something a run left in the cluster, and what became of it.
type Left struct {
	Kind, Name string
	Deleted    bool
	Err        string `json:",omitempty"`
}

func (l Left) String() string {
	s := l.Kind + " " + l.Name
	if l.Err != "" {
		return s + " (not deleted: " + l.Err + ")"
	}
	return s
}

// Sweep deletes what run runID left in the cluster (namespaces, simulated
// nodes, RuntimeClasses, ClusterRoles, PersistentVolumes labelled with its
// ID) and waits, up to timeout, for the namespaces to be gone. It returns
// what it found; an empty list means the run cleaned up after itself.
func Sweep(ctx context.Context, cs kubernetes.Interface, runID string, timeout time.Duration) ([]Left, error) {
	if runID == "" {
		return nil, fmt.Errorf("no run ID to find the run's objects by")
	}
	var left []Left
	gone := func(kind, name string, err error) {
		l := Left{Kind: kind, Name: name, Deleted: err == nil || apierrors.IsNotFound(err)}
		if !l.Deleted {
			l.Err = err.Error()
		}
		left = append(left, l)
	}
	var namespaces []string
	for _, sel := range []string{E2ERunLabel + "=" + runID, RunLabel + "=" + runID} {
		list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return left, fmt.Errorf("listing the run's namespaces: %w", err)
		}
		for _, ns := range list.Items {
			if ns.DeletionTimestamp != nil || slices.Contains(namespaces, ns.Name) {
				continue
			}
			namespaces = append(namespaces, ns.Name)
			gone("namespace", ns.Name, cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}))
		}
	}
	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + runID}
	del := metav1.DeleteOptions{}
	for _, k := range []struct {
		kind string
		list func() (runtime.Object, error)
		del  func(name string) error
	}{
		{"node", func() (runtime.Object, error) { return cs.CoreV1().Nodes().List(ctx, sel) },
			func(n string) error { return cs.CoreV1().Nodes().Delete(ctx, n, del) }},
		{"runtimeclass", func() (runtime.Object, error) { return cs.NodeV1().RuntimeClasses().List(ctx, sel) },
			func(n string) error { return cs.NodeV1().RuntimeClasses().Delete(ctx, n, del) }},
		{"clusterrole", func() (runtime.Object, error) { return cs.RbacV1().ClusterRoles().List(ctx, sel) },
			func(n string) error { return cs.RbacV1().ClusterRoles().Delete(ctx, n, del) }},
		{"persistentvolume", func() (runtime.Object, error) { return cs.CoreV1().PersistentVolumes().List(ctx, sel) },
			func(n string) error { return cs.CoreV1().PersistentVolumes().Delete(ctx, n, del) }},
	} {
		list, err := k.list()
		if err != nil {
			return left, fmt.Errorf("listing the run's %ss: %w", k.kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return left, err
		}
		for _, o := range items {
			m, err := meta.Accessor(o)
			if err != nil {
				return left, err
			}
			gone(k.kind, m.GetName(), k.del(m.GetName()))
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].Kind+left[i].Name < left[j].Kind+left[j].Name })
	if len(namespaces) == 0 {
		return left, nil
	}
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		for _, sel := range []string{E2ERunLabel + "=" + runID, RunLabel + "=" + runID} {
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil || len(list.Items) > 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return left, fmt.Errorf("the run's namespaces %v were not gone within %s", namespaces, timeout)
	}
	return left, nil
}
