package windows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/winconform/winconform/images"
)

// StepPod runs in Go, through the API, once the node is Ready: a pod of the
// node's sandbox image starts on it. A Ready node may still start no pod:
// containerd pulls the sandbox image only for the first pod, and a sandbox
// image without a variant for the node's Windows build (pause:3.10.1 on
// Windows Server 2025) fails every pod.
const StepPod = "pod"

// ErrPodNotStarted: a pod did not start on the node in time.
var ErrPodNotStarted = errors.New("no pod starts on the node")

// podCheckNamespace is where the check's pod runs: kube-system, whose pods
// the Pod Security admission lets be.
const podCheckNamespace = metav1.NamespaceSystem

// sandboxImage is the sandbox (pause) image for the machine's build: the
// variant of images.Pause for its Windows release, or the default one for a
// build newer than every release the harness knows.
func (j *joinRun) sandboxImage() string {
	ref, err := images.RefForBuild(images.Pause, j.build.String())
	if err != nil {
		j.logf("%s: %v; the sandbox image is %s", StepContainerd, err, images.Ref(images.Pause))
		return images.Ref(images.Pause)
	}
	return ref
}

// podCheck starts a pod of the sandbox image on the node, waits for it to
// run, and deletes it. On failure the error holds the pod's events.
func (j *joinRun) podCheck(ctx context.Context, _ step, sr *StepReport) (bool, error) {
	cs := j.cp.Clientset()
	image := j.sandboxImage()
	fail := func(cause error, format string, args ...any) error {
		return &StepError{Machine: j.m.Name, Step: StepPod, Kind: ErrPodNotStarted, Err: cause, Detail: fmt.Sprintf(format, args...)}
	}
	pod := checkPod(j.m.Name, image)
	if err := createPod(ctx, cs, pod, j.t.NodePoll); err != nil {
		return false, fail(err, "cannot create pod %s/%s", pod.Namespace, pod.Name)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := cs.CoreV1().Pods(pod.Namespace).Delete(dctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			j.logf("%s: deleting pod %s/%s: %v", StepPod, pod.Namespace, pod.Name, err)
		}
	}()
	last := "not looked at yet"
	err := wait.PollUntilContextTimeout(ctx, j.t.NodePoll, j.t.PodStart, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			last = "the API server did not answer: " + err.Error()
			return false, nil
		}
		last = "it is " + string(p.Status.Phase)
		if p.Status.Phase == "" {
			last = "the node's kubelet has not taken it up"
		}
		switch p.Status.Phase {
		case corev1.PodRunning:
			return true, nil
		case corev1.PodFailed, corev1.PodSucceeded:
			return false, fmt.Errorf("it ended (%s)", p.Status.Phase)
		}
		return false, nil
	})
	if err != nil {
		why := last
		if !wait.Interrupted(err) {
			why = err.Error()
		}
		return false, fail(nil, "pod %s/%s (image %s) did not run on node %s within %s: %s; its events: %s",
			pod.Namespace, pod.Name, image, j.m.Name, j.t.PodStart, why, podEvents(ctx, cs, pod))
	}
	sr.Status = map[string]any{"pod": pod.Name, "image": image, "running": true}
	return false, nil
}

// checkPod is the pod the check starts: bound to the node (no scheduler, no
// taint keeps it off), its one container the sandbox image itself.
func checkPod(node, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "winconform-pod-check-" + node, Namespace: podCheckNamespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "winconform", "app.kubernetes.io/name": "pod-check"},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			OS:                            &corev1.PodOS{Name: corev1.Windows},
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:                    []corev1.Container{{Name: "pause", Image: image}},
		},
	}
}

// createPod creates pod, deleting first the one an earlier run left.
func createPod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, poll time.Duration) error {
	pods := cs.CoreV1().Pods(pod.Namespace)
	return wait.PollUntilContextTimeout(ctx, poll, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return err == nil, err
		}
		err = pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return false, nil
	})
}

// podEvents lists a pod's events, oldest first, as "Reason: message".
func podEvents(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	list, err := cs.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", pod.Name),
			fields.OneTermEqualSelector("involvedObject.kind", "Pod")).String(),
	})
	if err != nil {
		return "(cannot list them: " + err.Error() + ")"
	}
	events := slices.Clone(list.Items)
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return a.LastTimestamp.Compare(b.LastTimestamp.Time) })
	var out []string
	for _, e := range events {
		if e.InvolvedObject.Name == pod.Name {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}
