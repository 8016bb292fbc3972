package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/kubelet"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/framework/verdicts"
)

// What the kubelet's shutdown manager sets on the pods it ends.
const (
	shutdownReason  = "Terminated"
	shutdownMessage = "Pod was terminated in response to imminent node shutdown."
)

const (
	// shutdownDelay is how long after being asked the machine restarts
	// (upstream: shutdown -r -t 60 from a HostProcess pod).
	shutdownDelay = 30 * time.Second
	// statusTimeout bounds the wait for the kubelet to report a pod ended
	// (upstream: 90 s), beyond the shutdown grace period.
	statusTimeout = 90 * time.Second
	// statusSlack is how late the kubelet's reports of ended pods may come
	// (and the polling see them) after the pods ended.
	statusSlack = 10 * time.Second
	// criticalPriority is the priority class that makes a pod critical.
	criticalPriority = "system-node-critical"
)

// shutdownPod is a pod on node that outlives SIGTERM (so that it uses its
// whole grace period), critical or not.
type shutdownPod struct {
	name     string
	grace    int64
	critical bool
}

// upstream's pods: two ordinary ones, of grace periods 20 and 25 s, two
// critical ones, of 5 and 10 s.
var shutdownPods = []shutdownPod{
	{"period-20", 20, false}, {"period-25", 25, false},
	{"critical-5", 5, true}, {"critical-10", 10, true},
}

func (s shutdownPod) pod(node facts.Node) *corev1.Pod {
	p := ospod.Probe(s.name, windows, ospod.OnNode(node))
	c := &p.Spec.Containers[0]
	c.Command, c.Ports, c.ReadinessProbe = ospod.ProbeCommand(windows, "hold"), nil, nil
	p.Spec.TerminationGracePeriodSeconds = ptr.To(s.grace)
	if s.critical {
		p.Spec.PriorityClassName = criticalPriority
	}
	return p
}

// endedByShutdown says whether the kubelet ended p for a node shutdown.
func endedByShutdown(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == shutdownReason && p.Status.Message == shutdownMessage
}

// failedReady says whether p is reported Failed and Ready at once, which
// the kubelet must never do (kubernetes/kubernetes#108594).
func failedReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodFailed {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finishedAt is when p's container ended, zero when it has not (or the
// kubelet did not say: verdicts.ShutdownOrder refuses to order it).
func finishedAt(p *corev1.Pod) time.Time {
	if p == nil {
		return time.Time{}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return t.FinishedAt.Time
		}
	}
	return time.Time{}
}

var _ = ginkgo.Describe("graceful node shutdown (upstream Windows specs)", labels.Suite("node"), ginkgo.Serial, func() {
	f := e2e.NewFramework("node-shutdown")

	ginkgo.It("ends non-critical pods before critical ones, within their grace periods", labels.For("NODE-01", corev1.Windows), func(ctx context.Context) {
		node, m := machine(ctx, f, "NODE-01")
		cs, ns := f.ClientSet, f.Namespace.Name
		cfg, err := kubelet.Config(ctx, cs, node.Name)
		framework.ExpectNoError(err)
		grace, critical := cfg.ShutdownGracePeriod.Duration, cfg.ShutdownGracePeriodCriticalPods.Duration
		if grace <= 0 {
			skips.Skip(skips.KubeletNotConfigured, fmt.Sprintf("graceful node shutdown is off on %s (shutdownGracePeriod %s): set shutdownGracePeriod and shutdownGracePeriodCriticalPods in its kubelet configuration", node.Name, grace))
		}
		framework.Logf("node %s: shutdownGracePeriod %s, of which %s for critical pods", node.Name, grace, critical)
		n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		bootID := n.Status.NodeInfo.BootID
		booted, err := lastBoot(ctx, m)
		framework.ExpectNoError(err, "the boot time of %s", m.Name())

		var pods []*corev1.Pod
		isCritical := map[string]bool{}
		for _, s := range shutdownPods {
			pods = append(pods, s.pod(node))
			isCritical[s.name] = s.critical
		}
		// A critical pod that keeps the node busy while the others end.
		pods = append(pods, shutdownPod{"critical-delay-20", 20, true}.pod(node))
		isCritical["critical-delay-20"] = true
		e2e.StartPods(ctx, f, pods...)

		ginkgo.By(fmt.Sprintf("asking %s to restart in %s", m.Name(), shutdownDelay))
		ginkgo.DeferCleanup(func(ctx context.Context) {
			// Too late once the restart began; harmless then.
			_, _ = m.RunPS(ctx, "abort the restart", "shutdown.exe /a; exit 0")
		})
		res, err := m.RunPS(ctx, "restart", fmt.Sprintf("shutdown.exe /r /t %d /c 'winconform NODE-01: graceful node shutdown'", int(shutdownDelay.Seconds())))
		framework.ExpectNoError(err)
		framework.ExpectNoError(res.Err(), "asking %s to restart", m.Name())

		ended := map[string]time.Time{}
		var last []corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, time.Second, shutdownDelay+grace+statusTimeout, true, func(ctx context.Context) (bool, error) {
			list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil // the API server stays; a blip is not the node's doing
			}
			last = list.Items
			now := time.Now()
			for i := range list.Items {
				p := &list.Items[i]
				if failedReady(p) {
					return false, fmt.Errorf("pod %s is reported Failed and Ready at once", p.Name)
				}
				if _, seen := ended[p.Name]; !seen && endedByShutdown(p) {
					ended[p.Name] = now
				}
			}
			return len(ended) == len(pods), nil
		})
		var states []string
		for _, p := range last {
			states = append(states, fmt.Sprintf("%s: %s %s %q", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message))
		}
		framework.ExpectNoError(err, "%d of %d pods were ended for the shutdown of %s: %s", len(ended), len(pods), node.Name, strings.Join(states, "; "))

		ginkgo.By(fmt.Sprintf("non-critical pods ended before critical ones, and every pod within the node's shutdown grace period (%s)", grace))
		byName := map[string]*corev1.Pod{}
		for i := range last {
			byName[last[i].Name] = &last[i]
		}
		var seen []verdicts.EndedPod
		for name, at := range ended {
			seen = append(seen, verdicts.EndedPod{Name: name, Critical: isCritical[name], Seen: at, Finished: finishedAt(byName[name])})
		}
		for _, p := range seen {
			framework.Logf("pod %s (critical %v): seen ended %s, its container ended %s", p.Name, p.Critical, p.Seen.Format(time.TimeOnly), p.Finished.Format(time.TimeOnly))
		}
		framework.ExpectNoError(verdicts.ShutdownOrder(seen, grace, statusSlack), "the shutdown of %s", node.Name)

		ginkgo.By(fmt.Sprintf("waiting for %s to come back", node.Name))
		newID, again := waitRebooted(ctx, f, node.Name, m, bootID, booted)
		framework.Logf("node %s is back: boot ID %s (was %s), booted %s (was %s)", node.Name, newID, bootID, again, booted)
	})
})
