package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	utilexec "k8s.io/client-go/util/exec"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/podexec"
)

// PodOS is the OS a pod was made for (spec.os), Linux when it names none.
func PodOS(p *corev1.Pod) string {
	if p.Spec.OS != nil {
		return string(p.Spec.OS.Name)
	}
	return "linux"
}

// Tool runs `probe ARGS` (env, cat, write, whoami, post...) in container
// ("" for the first) of pod and returns what it printed, untrimmed; a
// non-zero exit is an error (see ExitStatus).
func Tool(ctx context.Context, f *framework.Framework, pod *corev1.Pod, container string, args ...string) (stdout, stderr string, err error) {
	if container == "" {
		container = pod.Spec.Containers[0].Name
	}
	c := podexec.Client{Config: f.ClientConfig(), Clientset: f.ClientSet}
	return c.Exec(ctx, pod.Namespace, pod.Name, container, ospod.ProbeCommand(PodOS(pod), args...))
}

// MustTool is Tool that fails the spec unless the probe succeeds.
func MustTool(ctx context.Context, f *framework.Framework, pod *corev1.Pod, container string, args ...string) string {
	if container == "" {
		container = pod.Spec.Containers[0].Name
	}
	ginkgo.By(fmt.Sprintf("probe %q in container %s of pod %s", args, container, pod.Name))
	stdout, stderr, err := Tool(ctx, f, pod, container, args...)
	framework.ExpectNoError(err, "probe %q in pod %s: %s", args, pod.Name, stderr)
	return stdout
}

// ExitStatus is the exit status of a command that ran and failed, or -1
// when err is no such failure (the exec itself broke).
func ExitStatus(err error) int {
	var ee utilexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitStatus()
	}
	return -1
}

// StartTimeout bounds the wait for a pod of os to turn Ready: Windows
// images are larger.
func StartTimeout(os string) time.Duration {
	if os == string(corev1.Windows) {
		return 10 * time.Minute
	}
	return PodStartTimeout
}

// TryStart creates p and waits until it is Ready, returning it as the API
// server has it, or the reason it did not start, without failing the spec
// (for specs that record what they saw).
func TryStart(ctx context.Context, f *framework.Framework, p *corev1.Pod) (*corev1.Pod, error) {
	client := f.ClientSet.CoreV1().Pods(f.Namespace.Name)
	if _, err := client.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating pod %s: %w", p.Name, err)
	}
	got, err := AwaitPod(ctx, f.ClientSet, f.Namespace.Name, p.Name, StartTimeout(PodOS(p)), PodReady)
	if err != nil {
		return got, fmt.Errorf("pod %s did not turn Ready (%s): %w", p.Name, PodState(got), err)
	}
	return got, nil
}

// Start is TryStart that fails the spec when the pod does not start.
func Start(ctx context.Context, f *framework.Framework, p *corev1.Pod) *corev1.Pod {
	got, err := TryStart(ctx, f, p)
	framework.ExpectNoError(err)
	return got
}

// SummaryPoll is how often specs read a node's kubelet summary while they
// wait for new figures in it. The summary cannot be asked for fresh ones:
// it gives callers from outside the kubelet cached stats (the kubelet's
// pkg/kubelet/server/stats/handler.go, "external calls to the summary API
// use cached stats"). On Linux its pod and container figures are
// cAdvisor's, which samples each cgroup when it appears and then every
// housekeeping interval: 10 s with a random jitter of up to 100%, so 10 to
// 20 s apart (15 to 30 s while a cgroup's figures do not change; the
// kubelet's pkg/kubelet/cadvisor/cadvisor_linux.go sets housekeeping_interval
// 10s and a 15 s maximum, cAdvisor's manager/container.go jitters it by a
// factor of 1.0); on the clusters winconform makes, whose kubelets run with
// --housekeeping-interval=2s (kind.HousekeepingInterval), 2 to 4 s. A read takes tens of milliseconds (34 to 49 ms with ten
// pods on a kind node); reading every second sees a new sample within a
// second, where a 5 s period added 2.5 s on average to every wait.
const SummaryPoll = time.Second

// NodeSummary reads a node's kubelet summary (stats/summary) through the
// API server's node proxy.
func NodeSummary(ctx context.Context, cs kubernetes.Interface, node string) (*statsv1alpha1.Summary, error) {
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /api/v1/nodes/%s/proxy/stats/summary: %w", node, err)
	}
	var s statsv1alpha1.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("stats/summary of %s: %w", node, err)
	}
	return &s, nil
}
