// Package underlaypods runs the pods rung of the underlay check
// (infra/underlay): a probe pod on a machine joined through the underlay
// and one on a node of the kind network, each reaching the other.
package underlaypods

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/podexec"
	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/infra/kube"
	"github.com/winconform/winconform/infra/underlay"
	"github.com/winconform/winconform/internal/runid"
	"github.com/winconform/winconform/internal/runmark"
)

// Prober runs the underlay check's pods rung (underlay.PodProber): a probe pod on the machine's node and one
// on a kind node, each probing the other's HTTP server, in a namespace of
// its own that goes afterwards.
type Prober struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
}

// Probe puts the pods on m's node and on a node of the kind network (a
// worker rather than the control plane), and probes each from the other.
func (p *Prober) Probe(ctx context.Context, m underlay.Machine) (out, back error, err error) {
	node, err := p.Clientset.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", m.Name, err)
	}
	nodes, err := p.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	var kindNode *corev1.Node
	for i := range nodes.Items {
		n := &nodes.Items[i]
		f := facts.FromNode(n)
		if n.Labels[facts.LabelUnderlay] != "" || f.OS != underlay.Linux || !f.Ready || f.Simulated || n.Name == m.Name {
			continue
		}
		// A worker rather than the control plane, when there is one.
		if kindNode == nil || (facts.FromNode(kindNode).ControlPlane && !f.ControlPlane) {
			kindNode = n
		}
	}
	if kindNode == nil {
		return nil, nil, errors.New("no Ready Linux node on the kind network to put the other pod on")
	}
	// The check is a run of its own (runmark): its namespace is marked,
	// and its heartbeat kept, so that a check killed half-way is swept.
	id, err := runid.Begin("")
	if err != nil {
		return nil, nil, err
	}
	run := runmark.Run{ID: id, Started: time.Now().UTC().Truncate(time.Second)}
	hb, err := runmark.Beat(ctx, p.Clientset, run, runmark.HeartbeatOptions{})
	if err != nil {
		return nil, nil, err
	}
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "winconform-underlay-check-", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}
	run.Mark(nsObj)
	ns, err := p.Clientset.CoreV1().Namespaces().Create(ctx, nsObj, metav1.CreateOptions{})
	if err != nil {
		hb.Stop()
		return nil, nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if p.Clientset.CoreV1().Namespaces().Delete(dctx, ns.Name, metav1.DeleteOptions{}) == nil {
			_ = hb.End(dctx)
		} else {
			hb.Stop()
		}
	}()
	kindPod := ospod.Probe("kind-side", underlay.Linux, ospod.OnNode(facts.FromNode(kindNode)))
	machinePod := ospod.Probe("machine-side", m.OS, ospod.OnNode(facts.FromNode(node)))
	pods := p.Clientset.CoreV1().Pods(ns.Name)
	for _, pod := range []*corev1.Pod{kindPod, machinePod} {
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
	}
	ready := map[string]*corev1.Pod{}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{kindPod.Name, machinePod.Name} {
			got, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil || !kube.PodReady(got) {
				return false, nil
			}
			ready[name] = got
		}
		return true, nil
	})
	if err != nil {
		var why []string
		for _, name := range []string{kindPod.Name, machinePod.Name} {
			if got, gerr := pods.Get(context.WithoutCancel(ctx), name, metav1.GetOptions{}); gerr == nil && !kube.PodReady(got) {
				why = append(why, name+" "+kube.DescribePod(got))
			}
		}
		return nil, nil, fmt.Errorf("the check's pods did not turn Ready within 3m: %s", strings.Join(why, "; "))
	}
	exec := podexec.Client{Config: p.Config, Clientset: p.Clientset}
	probe := func(from *corev1.Pod, os string, to *corev1.Pod) error {
		url := fmt.Sprintf("http://%s:%d/json", to.Status.PodIP, ospod.HTTPPort)
		stdout, stderr, err := exec.Exec(ctx, ns.Name, from.Name, "probe", append([]string{ospod.ProbeBinary(os)}, probeclient.ConnectArgs(3, 2, []string{url})...))
		if err != nil {
			return fmt.Errorf("probe in %s: %v: %s", from.Name, err, strings.TrimSpace(stderr))
		}
		rs, err := probeclient.Parse(stdout, []string{url})
		if err != nil {
			return err
		}
		if !rs[0].OK {
			return fmt.Errorf("%s (%s on %s) to %s (on %s): %s", from.Name, from.Status.PodIP, from.Spec.NodeName, to.Status.PodIP, to.Spec.NodeName, rs[0].Describe())
		}
		return nil
	}
	out = probe(ready[kindPod.Name], underlay.Linux, ready[machinePod.Name])
	back = probe(ready[machinePod.Name], m.OS, ready[kindPod.Name])
	return out, back, nil
}
