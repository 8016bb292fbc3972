package windows

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/internal/kubenode"
)

// Node labels the checks read.
const (
	LabelOS           = "kubernetes.io/os"
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
)

// node waits for the node to be Ready as a Windows node, checks its build
// label against the machine's build, and applies the inventory's labels and
// taints.
func (j *joinRun) node(ctx context.Context, _ step, sr *StepReport) (bool, error) {
	cs := j.cp.Clientset()
	fail := func(kind error, cause error, format string, args ...any) error {
		return &StepError{Machine: j.m.Name, Step: StepNode, Kind: kind, Err: cause, Detail: fmt.Sprintf(format, args...)}
	}

	n, err := waitNodeReady(ctx, cs, j.m.Name, j.t.NodeReady, j.t.NodePoll)
	if err != nil {
		return false, fail(ErrNodeNotReady, err, "node %s is not Ready as a Windows node within %s", j.m.Name, j.t.NodeReady)
	}
	want := j.build.Build.String()
	if got := n.Labels[LabelWindowsBuild]; got != want {
		return false, fail(ErrBuildLabel, nil, "node %s has %s=%q, but the machine runs Windows build %s: the kubelet labels a node with its own build, so the node is not this machine (a stale Node object, or two machines with one name)",
			j.m.Name, LabelWindowsBuild, got, want)
	}
	labelled, err := applyLabelsAndTaints(ctx, cs, j.m.Name, j.m.Labels, j.m.Taints)
	if err != nil {
		return false, fail(ErrNodeUpdate, err, "applying the inventory's labels and taints to node %s", j.m.Name)
	}
	sr.Status = map[string]any{"node": j.m.Name, "ready": true, "windowsBuild": want}
	return labelled, nil
}

// waitNodeReady polls until the node exists, is labelled kubernetes.io/os=
// windows and is Ready, or timeout passes; the error then says what the
// last look saw.
func waitNodeReady(ctx context.Context, cs kubernetes.Interface, name string, timeout, poll time.Duration) (*corev1.Node, error) {
	var node *corev1.Node
	last := "not looked at yet"
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			last = "the node is not registered"
			return false, nil
		case err != nil:
			last = "the API server did not answer: " + err.Error()
			return false, nil
		}
		if os := n.Labels[LabelOS]; os != "windows" {
			last = fmt.Sprintf("the node has %s=%q, not windows", LabelOS, os)
			return false, nil
		}
		ready := false
		last = "the node has no Ready condition yet"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status == corev1.ConditionTrue
				last = fmt.Sprintf("the node is NotReady (%s: %s)", c.Reason, c.Message)
			}
		}
		node = n
		return ready, nil
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, ctx.Err()
		}
		return nil, errors.New(last)
	}
	return node, nil
}

// applyLabelsAndTaints sets the labels and adds (or updates) the taints
// the node lacks; it reports whether it changed the node.
func applyLabelsAndTaints(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string, taints []config.Taint) (bool, error) {
	return kubenode.UpdateNode(ctx, cs, name, func(n *corev1.Node) (bool, error) {
		changed := false
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			if v, ok := n.Labels[k]; !ok || v != labels[k] {
				n.Labels[k] = labels[k]
				changed = true
			}
		}
		for _, t := range taints {
			i := slices.IndexFunc(n.Spec.Taints, func(have corev1.Taint) bool { return have.Key == t.Key && have.Effect == t.Effect })
			switch {
			case i < 0:
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
				changed = true
			case n.Spec.Taints[i].Value != t.Value:
				n.Spec.Taints[i].Value = t.Value
				changed = true
			}
		}
		return changed, nil
	})
}
