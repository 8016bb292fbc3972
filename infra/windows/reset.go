package windows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/kubenode"
)

// HNSNetworks are the HNS networks Reset removes: those flannel's vxlan back
// end makes (flannel.<VNI>), and External, which the flannel DaemonSet makes
// first so that the overlay network does not cut the host off.
var HNSNetworks = []string{"flannel*", "External"}

// ResetOptions are how Reset runs.
type ResetOptions struct {
	Timeouts    Timeouts
	ConnRetries int
	Log         io.Writer
	// UnderlayRoutes are the routes the join gave the machine to the kind
	// network, as the underlay-unroute step reports them (it removes every
	// route of the harness's metric).
	UnderlayRoutes []UnderlayRoute
}

// ResetReport is what Reset did.
type ResetReport struct {
	Machine  string       `json:"machine"`
	Steps    []StepReport `json:"steps"`
	Order    []string     `json:"order"`
	Started  time.Time    `json:"started"`
	Duration Duration     `json:"duration"`
	// Remaining are the pods still on the node when the drain gave up
	// waiting (the node's deletion removes them).
	Remaining []string `json:"remaining,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// Reset removes the machine from the cluster cleanly (INF-05): it drains
// the node (cordon, then evict its pods), deletes the Node, then, on the
// machine, runs kubeadm reset -f, deletes the kubelet service, removes
// C:\etc\kubernetes, C:\var\lib\kubelet and the CNI configuration, and
// removes flannel's HNS networks. The runtime and the binaries stay: Join
// works again afterwards. Resetting a machine that is not joined changes
// nothing.
func Reset(ctx context.Context, m config.Machine, exec remote.Exec, cp ControlPlane, opts ResetOptions) (rep *ResetReport, err error) {
	if exec == nil || cp == nil {
		return nil, errors.New("windows: Reset needs a remote exec and a control plane")
	}
	rep = &ResetReport{Machine: m.Name, Started: time.Now()}
	jr := &JoinReport{Machine: m.Name}
	j := &joinRun{
		runner: &runner{machine: m.Name, exec: exec, t: opts.Timeouts.withDefaults(), retries: JoinOptions{ConnRetries: opts.ConnRetries}.retries(), log: opts.Log},
		m:      m, cp: cp, report: jr, underlay: opts.UnderlayRoutes,
	}
	defer func() {
		rep.Steps, rep.Order, rep.Remaining = jr.Steps, jr.Order, j.remaining
		rep.Duration = Duration(time.Since(rep.Started))
		if err != nil {
			rep.Error = err.Error()
		}
	}()
	if err := j.runTable(ctx, resetTable); err != nil {
		return rep, err
	}
	j.logf("reset: the machine can join again")
	return rep, nil
}

// drain cordons the node and evicts its pods; the pods still there when
// the drain gives up waiting go with the node.
func (j *joinRun) drain(ctx context.Context, _ step, sr *StepReport) (bool, error) {
	remaining, drained, err := drain(ctx, j.cp.Clientset(), j.m.Name, j.t.Drain, j.t.NodePoll)
	j.remaining = remaining
	if err != nil {
		err = &StepError{Machine: j.m.Name, Step: StepDrain, Kind: ErrDrain, Err: err, Detail: "draining node " + j.m.Name}
	}
	if len(remaining) > 0 {
		sr.Output = "pods still on the node after " + j.t.Drain.String() + ": " + strings.Join(remaining, ", ")
	}
	return drained, err
}

// deleteNode deletes the node, if it exists.
func (j *joinRun) deleteNode(ctx context.Context, _ step, _ *StepReport) (bool, error) {
	err := j.cp.Clientset().CoreV1().Nodes().Delete(ctx, j.m.Name, metav1.DeleteOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, &StepError{Machine: j.m.Name, Step: StepDeleteNode, Kind: ErrDrain, Err: err, Detail: "deleting node " + j.m.Name}
}

func resetParams(*joinRun) ([]Param, string, error) {
	return []Param{{"KubeadmPath", nodeconfig.InstallDir + `\kubeadm.exe`}, {"CRISocket", nodeconfig.CRISocket}, {"CNIConfDir", nodeconfig.CNIConfDir}}, "", nil
}

func hnsCleanupParams(*joinRun) ([]Param, string, error) {
	return []Param{{"Networks", strings.Join(HNSNetworks, "|")}}, "", nil
}

// drain cordons the node and evicts its pods (but those of DaemonSets and
// mirror pods, which go with the node), then waits up to timeout for them to
// go. It returns the pods still there, and whether it changed anything. A
// node that does not exist needs no drain.
func drain(ctx context.Context, cs kubernetes.Interface, name string, timeout, poll time.Duration) ([]string, bool, error) {
	changed, err := kubenode.UpdateNode(ctx, cs, name, func(n *corev1.Node) (bool, error) {
		if n.Spec.Unschedulable {
			return false, nil
		}
		n.Spec.Unschedulable = true
		return true, nil
	})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, changed, fmt.Errorf("cordoning: %w", err)
	}
	evictable := func(ctx context.Context) ([]corev1.Pod, error) {
		pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String(),
		})
		if err != nil {
			return nil, err
		}
		var out []corev1.Pod
		for _, p := range pods.Items {
			if p.Spec.NodeName != name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
				continue
			}
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "DaemonSet" {
				continue
			}
			out = append(out, p)
		}
		return out, nil
	}
	var remaining []string
	werr := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := evictable(ctx)
		if err != nil {
			return false, nil
		}
		remaining = remaining[:0]
		for _, p := range pods {
			remaining = append(remaining, p.Namespace+"/"+p.Name)
			if p.DeletionTimestamp != nil {
				continue
			}
			ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
			switch err := cs.CoreV1().Pods(p.Namespace).EvictV1(ctx, ev); {
			case err == nil:
				changed = true
			case apierrors.IsNotFound(err), apierrors.IsTooManyRequests(err):
				// Gone already, or a disruption budget says not yet.
			default:
				return false, fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}
		return len(pods) == 0, nil
	})
	switch {
	case werr == nil:
		return nil, changed, nil
	case ctx.Err() != nil:
		return remaining, changed, ctx.Err()
	case wait.Interrupted(werr):
		// Past the timeout: the node's deletion takes the rest.
		return remaining, changed, nil
	}
	return remaining, changed, werr
}
